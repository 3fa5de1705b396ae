// Errors as the client sees them (OpenAI error body), the one oxyd::Error → HTTP mapping, the body
// parser (UTF-8, syntax and depth checked before any field is read), SSE framing and ids.
#include <random>

#include "server/http_framing.h"
#include "core/json_parse.h"
#include "server/protocol_detail.h"

namespace oxyd::server::protocol {

namespace {
constexpr int kMaxDepth = kMaxJsonDepth;  // the one limit for untrusted JSON (core/json_parse.h)
constexpr size_t kMaxParseMessage = kMaxJsonErrorBytes;

// One dump for everything we send: never throws, even on a stray invalid byte.
std::string dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }
}  // namespace

ApiError bad_request(const std::string& message, const std::string& param, const std::string& code) {
  return ApiError(400, "invalid_request_error", message, param, code);
}

ApiError from_error(const Error& e) {
  switch (e.code()) {
    case ErrorCode::INVALID_ARGUMENT:
    case ErrorCode::UNSUPPORTED:
      return ApiError(400, "invalid_request_error", e.message());
    case ErrorCode::NOT_FOUND:
      return ApiError(404, "not_found_error", e.message());
    case ErrorCode::OUT_OF_MEMORY:
    case ErrorCode::IO:
    case ErrorCode::INTERNAL:
      break;
  }
  return ApiError(500, "server_error", e.message());
}

std::string error_body(const ApiError& e) {
  json err = json::object();
  // Control bytes as \xNN (a CR/LF from a request cannot split a log line); e.message, not what(),
  // so a NUL quoted from the request does not cut the message short.
  err["message"] = detail::sanitize_utf8(http::escape_controls(e.message));
  err["type"] = e.type;
  err["param"] = e.param.empty() ? json(nullptr) : json(detail::sanitize_utf8(http::escape_controls(e.param)));
  err["code"] = e.code.empty() ? json(nullptr) : json(e.code);
  return dump(json{{"error", std::move(err)}});
}

json parse_body(const std::string& body) {
  if (const size_t at = detail::invalid_utf8_at(body); at != std::string::npos)
    throw bad_request("The request body is not valid UTF-8: ill-formed byte sequence at byte offset " +
                      std::to_string(at) + ".");
  // The callback sees every container start with its depth before the container is built, so a
  // 10 MB "[[[[..." stops at depth 65; nlohmann's parser keeps its own stack (no recursion).
  const json::parser_callback_t depth_guard = [](int depth, json::parse_event_t ev, json&) {
    if ((ev == json::parse_event_t::object_start || ev == json::parse_event_t::array_start) && depth >= kMaxDepth)
      throw bad_request("The request body nests arrays/objects deeper than " + std::to_string(kMaxDepth) +
                        " levels.");
    return true;
  };
  json j;
  try {
    j = json::parse(body, depth_guard);
  } catch (const json::exception& e) {
    std::string what = e.what();  // "[json.exception.parse_error.101] parse error at line 1, ..."
    if (const size_t close = what.find("] "); what.rfind("[json.exception.", 0) == 0 && close != std::string::npos)
      what = what.substr(close + 2);
    // The parser quotes the last token it read, which may be a whole 10 MB unterminated string.
    if (what.size() > kMaxParseMessage) what = what.substr(0, kMaxParseMessage) + "...";
    throw bad_request("The request body is not valid JSON: " + detail::sanitize_utf8(what));
  }
  if (!j.is_object())
    throw bad_request("The request body must be a JSON object, but got " + detail::type_name(j) + ".");
  return j;
}

namespace detail {
std::optional<json> parse_json_limited(const std::string& text) {
  struct TooDeep {};
  const json::parser_callback_t guard = [](int depth, json::parse_event_t ev, json&) {
    if ((ev == json::parse_event_t::object_start || ev == json::parse_event_t::array_start) && depth >= kMaxDepth)
      throw TooDeep{};
    return true;
  };
  try {
    json j = json::parse(text, guard, /*allow_exceptions=*/false);
    if (j.is_discarded()) return std::nullopt;
    return j;
  } catch (const TooDeep&) {
    return std::nullopt;
  }
}
}  // namespace detail

std::string sse(const json& j) { return "data: " + dump(j) + "\n\n"; }
std::string sse_done() { return "data: [DONE]\n\n"; }

std::string new_id(const std::string& prefix) {
  static constexpr char kAlnum[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  // One generator per thread, seeded from the OS: no lock, no shared state.
  thread_local std::mt19937_64 rng = [] {
    std::random_device rd;
    std::seed_seq seq{rd(), rd(), rd(), rd(), rd(), rd(), rd(), rd()};
    return std::mt19937_64(seq);
  }();
  std::string id = prefix;
  if (!id.empty() && id.back() != '-') id += '-';
  std::uniform_int_distribution<int> pick(0, sizeof(kAlnum) - 2);
  for (int i = 0; i < 24; ++i) id += kAlnum[pick(rng)];
  return id;
}

}  // namespace oxyd::server::protocol
