// Parsing tokenizer.json without building a JSON DOM for its two huge members: model.vocab (an
// object of up to 262k token -> id pairs) and model.merges (up to 515k entries) are streamed into
// flat vectors by a parser callback, everything else becomes an nlohmann::json as usual. This
// halves load time for the large vocabularies (the DOM of a 33 MB file costs ~1.7 s).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace oxyd::tokenizer {

struct CapturedModel {
  bool has_vocab = false;   // model.vocab was an object and was captured (removed from the DOM)
  bool has_merges = false;  // model.merges was an array and was captured
  std::vector<std::pair<std::string, int64_t>> vocab;  // ids unchecked
  std::vector<std::pair<std::string, std::string>> merges;
  std::string error;        // first malformed entry ("model.merges[12]: ..."), empty if none
};

/// Parses `text` under the project's JSON depth limit (core/json_parse.h); throws
/// Error(INVALID_ARGUMENT) naming `source` on invalid or too deeply nested JSON.
nlohmann::json parse_tokenizer_json(std::string_view text, CapturedModel& cap, const std::string& source);

}  // namespace oxyd::tokenizer
