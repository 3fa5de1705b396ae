// Internals shared by the protocol_*.cc files: typed field readers that throw an OpenAI-style
// ApiError 400 naming the field path ("messages[2].content") and what is allowed, and the UTF-8
// helpers used to keep every string we emit valid JSON. Not part of the public API.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "server/protocol.h"

namespace oxyd::server::protocol::detail {

/// "a string", "an integer", "a decimal number", "a boolean", "an object", "an array", "null".
std::string type_name(const json& v);
/// A short, valid-UTF-8 rendering of a client value for an error message (truncated).
std::string quote_value(const json& v);

[[noreturn]] void invalid_type(const std::string& path, const char* expected, const json& got);
[[noreturn]] void invalid_value(const std::string& path, const std::string& why);
/// `message` is the whole sentence (it says what is not supported and what to send instead).
[[noreturn]] void not_supported(const std::string& path, const std::string& message);
[[noreturn]] void missing(const std::string& path);

/// The value of obj[key], or nullptr when absent or JSON null (OpenAI treats null as "not given").
const json* field(const json& obj, const char* key);

std::optional<bool> opt_bool(const json& obj, const char* key, const std::string& path);
std::optional<std::string> opt_string(const json& obj, const char* key, const std::string& path);
/// An integer (a decimal number such as 1.0 is a type error, as OpenAI) within [lo, hi].
int64_t as_int(const json& v, const std::string& path, int64_t lo, int64_t hi);
std::optional<int64_t> opt_int(const json& obj, const char* key, const std::string& path, int64_t lo, int64_t hi);
/// A number within [lo, hi]; lo_open makes the lower bound exclusive: (lo, hi].
double as_number(const json& v, const std::string& path, double lo, double hi, bool lo_open = false);
std::optional<double> opt_number(const json& obj, const char* key, const std::string& path, double lo, double hi,
                                 bool lo_open = false);

/// Fields shared by chat and completions (sampling, stop, n, stream...); not max_tokens, whose
/// rules differ between the two.
void parse_common(const json& body, CommonParams& p);
/// response_format / guided_* / structured_outputs → p.grammar (protocol_grammar.cc).
void parse_grammar_fields(const json& body, CommonParams& p);
/// Appends to `out` the top-level keys of `body` that are neither common fields nor in
/// `endpoint_fields` (the endpoint's own), in body order.
void collect_unknown_fields(const json& body, std::initializer_list<const char*> endpoint_fields,
                            std::vector<std::string>& out);

// ---- UTF-8 ----
/// Byte offset of the first byte of the first ill-formed sequence, or npos when valid.
size_t invalid_utf8_at(std::string_view s);
/// Each maximal ill-formed subpart replaced by U+FFFD (as Python's bytes.decode(errors="replace")).
std::string sanitize_utf8(std::string_view s);
/// Parses a JSON text nested at most 64 deep; nullopt when it is not valid JSON or too deep.
std::optional<json> parse_json_limited(const std::string& text);

/// Number of code points of valid UTF-8 text (Python len(str)).
int64_t utf8_length(std::string_view s);

}  // namespace oxyd::server::protocol::detail
