// Bounded JSON parsing for untrusted documents: every JSON file read from a model directory
// (config.json, tokenizer*.json, generation_config.json, index files, safetensors headers) and
// every request body. The nesting limit is enforced while parsing (nlohmann's parser callback
// sees each container before it is built), so "[[[[..." never builds a deep tree; nlohmann's
// parser itself keeps an explicit stack and does not recurse.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace oxyd {

/// The one nesting limit (arrays + objects) for untrusted JSON. Real configs and tokenizer.json
/// files nest 6–8 levels; every consumer may recurse this deep without bounding itself again.
inline constexpr int kMaxJsonDepth = 64;
/// Parse error messages quote the offending token; longer ones are cut to this many bytes.
inline constexpr size_t kMaxJsonErrorBytes = 300;

/// Parses `text`. Throws Error(INVALID_ARGUMENT) "<source>: not valid JSON: ..." or "<source>:
/// arrays/objects nested deeper than 64 levels". `cb`, if given, runs after the depth check with
/// nlohmann's parser_callback_t contract (return false to discard the value).
nlohmann::json parse_json_bounded(std::string_view text, const std::string& source,
                                  const nlohmann::json::parser_callback_t& cb = nullptr);

/// read_text_file(path) then parse_json_bounded with `path` as the source.
nlohmann::json read_json_file(const std::string& path);

/// The depth error message parse_json_bounded gives for `source`.
std::string json_depth_message(const std::string& source);

}  // namespace oxyd
