// POST /v1/completions request (OpenAI legacy completions). prompt is a string, a list of strings,
// a list of token ids or a list of lists of token ids (each one prompt). A list of ids may not be
// empty; a string may (as in OpenAI's API: the model starts a document from its BOS token; the
// serving layer answers 400 when the tokenizer adds none).
// max_tokens defaults to 16 as in OpenAI's API when absent; an explicit null means "up to the
// context" (vLLM); 0 is allowed only with echo (scoring a prompt: its logprobs, no new tokens).
#include <limits>

#include "server/protocol_detail.h"

namespace oxyd::server::protocol {

using namespace detail;

namespace {

constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();
constexpr int32_t kDefaultMaxTokens = 16;

std::string idx(const std::string& base, size_t i) { return base + "[" + std::to_string(i) + "]"; }

CompletionRequest::Prompt text_prompt(const json& v) { return {v.get<std::string>(), {}, false}; }

CompletionRequest::Prompt ids_prompt(const json& v, const std::string& path) {
  if (v.empty()) invalid_value(path, "a prompt must not be empty.");
  CompletionRequest::Prompt p{{}, {}, true};
  p.ids.reserve(v.size());
  for (size_t i = 0; i < v.size(); ++i)
    p.ids.push_back(static_cast<int32_t>(as_int(v[i], idx(path, i), 0, kInt32Max)));
  return p;
}

std::vector<CompletionRequest::Prompt> parse_prompts(const json& body) {
  const json* v = field(body, "prompt");
  if (!v) missing("prompt");
  constexpr const char* kShape = "a string, an array of strings, an array of token ids or an array of arrays of "
                                 "token ids";
  if (v->is_string()) return {text_prompt(*v)};
  if (!v->is_array()) invalid_type("prompt", kShape, *v);
  if (v->empty()) invalid_value("prompt", "a prompt must not be empty.");
  const json& first = (*v)[0];
  if (first.is_number()) return {ids_prompt(*v, "prompt")};
  std::vector<CompletionRequest::Prompt> out;
  for (size_t i = 0; i < v->size(); ++i) {
    const json& e = (*v)[i];
    const std::string p = idx("prompt", i);
    if (first.is_string() && e.is_string()) {
      out.push_back(text_prompt(e));
    } else if (first.is_array() && e.is_array()) {
      out.push_back(ids_prompt(e, p));
    } else {
      invalid_type(p, first.is_array() ? "an array of token ids" : first.is_string() ? "a string" : kShape, e);
    }
  }
  return out;
}

}  // namespace

CompletionRequest parse_completion_request(const json& body) {
  if (!body.is_object()) throw bad_request("The request body must be a JSON object.");
  CompletionRequest r;
  parse_common(body, r.common);
  r.prompts = parse_prompts(body);
  if (auto b = opt_bool(body, "echo", "echo")) r.echo = *b;

  r.common.max_tokens = kDefaultMaxTokens;
  if (body.contains("max_tokens")) {
    const auto mt = opt_int(body, "max_tokens", "max_tokens", 0, kInt32Max);
    if (mt && *mt == 0 && !r.echo)
      throw bad_request("Invalid 'max_tokens': integer below minimum value. Expected a value >= 1 (0 only with "
                        "'echo': true), but got 0 instead.",
                        "max_tokens", "integer_below_min_value");
    r.common.max_tokens = mt ? std::optional<int32_t>(static_cast<int32_t>(*mt)) : std::nullopt;
  }
  if (auto k = opt_int(body, "logprobs", "logprobs", 0, sample::kMaxTopLogprobs)) {
    r.logprobs = static_cast<int32_t>(*k);
    r.common.sampling.logprobs = *r.logprobs;
  }
  if (auto s = opt_string(body, "suffix", "suffix"); s && !s->empty())
    not_supported("suffix", "'suffix' (insertion) is not supported.");
  if (auto b = opt_int(body, "best_of", "best_of", 1, 128); b && *b > 1)
    not_supported("best_of", "'best_of' greater than 1 is not supported; use 'n'.");
  collect_unknown_fields(body, {"prompt", "echo", "max_tokens", "logprobs", "suffix", "best_of"},
                         r.common.unknown_fields);
  return r;
}

}  // namespace oxyd::server::protocol
