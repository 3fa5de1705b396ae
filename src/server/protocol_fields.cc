// Typed field readers with OpenAI-style errors, and the fields chat and completions share. Every
// error names the field (param) and says what is allowed; JSON null counts as "not given", as in
// the OpenAI API. Messages follow OpenAI's wording ("Invalid type for 'x': expected ..."), codes
// its values (invalid_type, integer_below_min_value, ...).
#include <cmath>
#include <cstdio>
#include <limits>

#include "server/protocol_detail.h"

namespace oxyd::server::protocol::detail {

std::string type_name(const json& v) {
  switch (v.type()) {
    case json::value_t::null: return "null";
    case json::value_t::boolean: return "a boolean";
    case json::value_t::string: return "a string";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned: return "an integer";
    case json::value_t::number_float: return "a decimal number";
    case json::value_t::object: return "an object";
    case json::value_t::array: return "an array";
    default: return "an unsupported value";
  }
}

std::string quote_value(const json& v) {
  std::string s = v.is_string() ? "'" + v.get<std::string>() + "'"
                                : v.dump(-1, ' ', false, json::error_handler_t::replace);
  if (s.size() > 80) s = s.substr(0, 77) + "...";
  return sanitize_utf8(s);  // the cut may split a character
}

void invalid_type(const std::string& path, const char* expected, const json& got) {
  throw bad_request("Invalid type for '" + path + "': expected " + expected + ", but got " + type_name(got) +
                        " instead.",
                    path, "invalid_type");
}
void invalid_value(const std::string& path, const std::string& why) {
  throw bad_request("Invalid value for '" + path + "': " + why, path, "invalid_value");
}
void not_supported(const std::string& path, const std::string& message) {
  throw bad_request(message, path, "unsupported_value");
}
void missing(const std::string& path) {
  throw bad_request("Missing required parameter: '" + path + "'.", path, "missing_required_parameter");
}

const json* field(const json& obj, const char* key) {
  const auto it = obj.find(key);
  return it == obj.end() || it->is_null() ? nullptr : &*it;
}

std::optional<bool> opt_bool(const json& obj, const char* key, const std::string& path) {
  const json* v = field(obj, key);
  if (!v) return std::nullopt;
  if (!v->is_boolean()) invalid_type(path, "a boolean", *v);
  return v->get<bool>();
}

std::optional<std::string> opt_string(const json& obj, const char* key, const std::string& path) {
  const json* v = field(obj, key);
  if (!v) return std::nullopt;
  if (!v->is_string()) invalid_type(path, "a string", *v);
  return v->get<std::string>();
}

namespace {
std::string fmt(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", x);
  return buf;
}
[[noreturn]] void out_of_range(const std::string& path, const char* kind, bool above, const std::string& range,
                               const json& got) {
  throw bad_request("Invalid '" + path + "': " + kind + (above ? " above maximum" : " below minimum") +
                        " value. Expected a value in " + range + ", but got " + quote_value(got) + " instead.",
                    path, std::string(kind) + (above ? "_above_max_value" : "_below_min_value"));
}
}  // namespace

int64_t as_int(const json& v, const std::string& path, int64_t lo, int64_t hi) {
  if (!v.is_number_integer()) invalid_type(path, "an integer", v);
  const std::string range = "[" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
  if (v.is_number_unsigned()) {
    const uint64_t u = v.get<uint64_t>();
    if (hi < 0 || u > static_cast<uint64_t>(hi)) out_of_range(path, "integer", true, range, v);
    if (lo >= 0 && u < static_cast<uint64_t>(lo)) out_of_range(path, "integer", false, range, v);
    return static_cast<int64_t>(u);
  }
  const int64_t x = v.get<int64_t>();
  if (x < lo) out_of_range(path, "integer", false, range, v);
  if (x > hi) out_of_range(path, "integer", true, range, v);
  return x;
}

std::optional<int64_t> opt_int(const json& obj, const char* key, const std::string& path, int64_t lo, int64_t hi) {
  const json* v = field(obj, key);
  if (!v) return std::nullopt;
  return as_int(*v, path, lo, hi);
}

double as_number(const json& v, const std::string& path, double lo, double hi, bool lo_open) {
  if (!v.is_number()) invalid_type(path, "a number", v);
  const double x = v.get<double>();
  const std::string range = (lo_open ? "(" : "[") + fmt(lo) + ", " + fmt(hi) + "]";
  if (!(lo_open ? x > lo : x >= lo)) out_of_range(path, "decimal", false, range, v);
  if (!(x <= hi)) out_of_range(path, "decimal", true, range, v);
  return x;
}

std::optional<double> opt_number(const json& obj, const char* key, const std::string& path, double lo, double hi,
                                 bool lo_open) {
  const json* v = field(obj, key);
  if (!v) return std::nullopt;
  return as_number(*v, path, lo, hi, lo_open);
}

namespace {

constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();
constexpr size_t kMaxStop = 16;

void parse_logit_bias(const json& v, sample::SamplingParams& s) {
  if (!v.is_object()) invalid_type("logit_bias", "an object mapping token ids (as strings) to numbers", v);
  for (const auto& [key, bias] : v.items()) {
    const bool digits = !key.empty() && key.size() <= 10 &&
                        key.find_first_not_of("0123456789") == std::string::npos;
    if (!digits || std::stoll(key) > kInt32Max)
      invalid_value("logit_bias", "keys must be token ids written as non-negative integer strings (\"1234\"), got " +
                                      quote_value(json(key)) + ".");
    const double b = as_number(bias, "logit_bias", -100, 100);
    s.logit_bias.emplace_back(static_cast<int32_t>(std::stoll(key)), static_cast<float>(b));
  }
}

void parse_stop(const json& v, std::vector<std::string>& stop) {
  const auto one = [&](const json& s, const std::string& path) {
    if (!s.is_string()) invalid_type(path, "a string", s);
    if (s.get_ref<const std::string&>().empty()) invalid_value(path, "stop sequences must not be empty strings.");
    stop.push_back(s.get<std::string>());
  };
  if (v.is_string()) return one(v, "stop");
  if (!v.is_array()) invalid_type("stop", "a string or an array of strings", v);
  if (v.size() > kMaxStop)
    invalid_value("stop", "at most " + std::to_string(kMaxStop) + " stop sequences are allowed, got " +
                              std::to_string(v.size()) + ".");
  for (size_t i = 0; i < v.size(); ++i) one(v[i], "stop[" + std::to_string(i) + "]");
}

}  // namespace

void parse_common(const json& body, CommonParams& p) {
  if (auto m = opt_string(body, "model", "model")) p.model = *m;
  sample::SamplingParams& s = p.sampling;
  if (auto t = opt_number(body, "temperature", "temperature", 0, 2)) s.temperature = static_cast<float>(*t);
  if (auto t = opt_number(body, "top_p", "top_p", 0, 1)) s.top_p = static_cast<float>(*t);
  if (auto t = opt_number(body, "presence_penalty", "presence_penalty", -2, 2)) s.presence_penalty = float(*t);
  if (auto t = opt_number(body, "frequency_penalty", "frequency_penalty", -2, 2)) s.frequency_penalty = float(*t);
  if (const json* lb = field(body, "logit_bias")) parse_logit_bias(*lb, s);
  if (auto seed = opt_int(body, "seed", "seed", std::numeric_limits<int64_t>::min(),
                          std::numeric_limits<int64_t>::max()))
    s.seed = static_cast<uint64_t>(*seed);
  // vLLM extensions.
  if (auto k = opt_int(body, "top_k", "top_k", -1, kInt32Max)) s.top_k = *k <= 0 ? 0 : static_cast<int32_t>(*k);
  if (auto t = opt_number(body, "min_p", "min_p", 0, 1)) s.min_p = static_cast<float>(*t);
  if (auto t = opt_number(body, "typical_p", "typical_p", 0, 1, true)) s.typical_p = static_cast<float>(*t);
  if (auto t = opt_number(body, "repetition_penalty", "repetition_penalty", 0, 1e6, true))
    s.repetition_penalty = static_cast<float>(*t);

  if (auto n = opt_int(body, "n", "n", 1, 128)) p.n = static_cast<int32_t>(*n);
  if (const json* st = field(body, "stop")) parse_stop(*st, p.stop);
  if (const json* ids = field(body, "stop_token_ids")) {
    if (!ids->is_array()) invalid_type("stop_token_ids", "an array of token ids", *ids);
    for (size_t i = 0; i < ids->size(); ++i)
      p.stop_token_ids.push_back(
          static_cast<int32_t>(as_int((*ids)[i], "stop_token_ids[" + std::to_string(i) + "]", 0, kInt32Max)));
  }
  if (auto b = opt_bool(body, "ignore_eos", "ignore_eos")) p.ignore_eos = *b;
  if (auto b = opt_bool(body, "skip_special_tokens", "skip_special_tokens")) p.skip_special_tokens = *b;
  if (auto m = opt_int(body, "min_tokens", "min_tokens", 0, kInt32Max)) p.min_tokens = static_cast<int32_t>(*m);
  if (auto b = opt_bool(body, "include_stop_str_in_output", "include_stop_str_in_output"))
    p.include_stop_str_in_output = *b;
  if (auto b = opt_bool(body, "stream", "stream")) p.stream = *b;
  if (const json* so = field(body, "stream_options")) {
    if (!p.stream)
      throw bad_request("The 'stream_options' parameter is only allowed when 'stream' is enabled.", "stream_options",
                        "invalid_value");
    if (!so->is_object()) invalid_type("stream_options", "an object", *so);
    if (auto b = opt_bool(*so, "include_usage", "stream_options.include_usage")) p.include_usage = *b;
  }
  if (auto t = opt_number(body, "timeout", "timeout", 0, 1e9, true)) p.timeout_s = *t;
  opt_string(body, "user", "user");  // accepted (type-checked), not used
  parse_grammar_fields(body, p);
}

namespace {
// The top-level fields parse_common reads, and the ones both endpoints accept without using
// (OpenAI metadata and vLLM options that change nothing here).
constexpr const char* kCommonFields[] = {
    "model", "temperature", "top_p", "presence_penalty", "frequency_penalty", "logit_bias", "seed", "top_k", "min_p",
    "typical_p", "repetition_penalty", "n", "stop", "stop_token_ids", "ignore_eos", "skip_special_tokens",
    "min_tokens", "include_stop_str_in_output", "stream", "stream_options", "timeout", "user", "metadata", "store",
    "service_tier", "prompt_cache_key", "safety_identifier", "response_format", "guided_json", "guided_regex",
    "guided_grammar", "guided_choice", "structured_outputs"};
}  // namespace

void collect_unknown_fields(const json& body, std::initializer_list<const char*> endpoint_fields,
                            std::vector<std::string>& out) {
  for (const auto& [key, value] : body.items()) {
    bool known = false;
    for (const char* k : kCommonFields) known |= key == k;
    for (const char* k : endpoint_fields) known |= key == k;
    if (!known) out.push_back(key);
  }
}

}  // namespace oxyd::server::protocol::detail
