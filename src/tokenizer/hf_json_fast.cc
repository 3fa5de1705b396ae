// Path-tracking parser callback that diverts model.vocab / model.merges into CapturedModel.
#include "tokenizer/hf_json_fast.h"

#include "core/json_parse.h"

namespace oxyd::tokenizer {

using json = nlohmann::json;

json parse_tokenizer_json(std::string_view text, CapturedModel& cap, const std::string& source) {
  struct Level {
    std::string name;
    bool is_array;
  };
  std::vector<Level> stack;
  std::string last_key;
  std::vector<std::string> pair;  // a merge written as ["a", "b"]
  size_t merge_idx = 0;
  auto at = [&](std::initializer_list<const char*> names, size_t extra = 0) {
    if (stack.size() != names.size() + 1 + extra) return false;
    size_t k = 1;
    for (const char* n : names)
      if (stack[k++].name != n) return false;
    return true;
  };
  auto bad = [&](const std::string& msg) {
    if (cap.error.empty()) cap.error = msg;
  };
  auto cb = [&](int /*depth*/, json::parse_event_t event, json& parsed) -> bool {
    switch (event) {
      case json::parse_event_t::key:
        last_key = parsed.get<std::string>();
        if (at({"model", "vocab"}) && !stack.back().is_array) return false;  // value captured below
        return true;
      case json::parse_event_t::object_start:
      case json::parse_event_t::array_start: {
        const bool is_array = event == json::parse_event_t::array_start;
        std::string name = stack.empty() || !stack.back().is_array ? last_key : "[]";
        if (stack.empty()) name.clear();
        stack.push_back({name, is_array});
        if (at({"model", "vocab"}) && !is_array) cap.has_vocab = true;
        if (at({"model", "merges"}) && is_array) cap.has_merges = true;
        if (cap.has_merges && at({"model", "merges"}, 1)) pair.clear();
        return true;
      }
      case json::parse_event_t::object_end:
      case json::parse_event_t::array_end: {
        if (cap.has_merges && at({"model", "merges"}, 1) && stack.back().is_array) {
          if (pair.size() != 2) bad("model.merges[" + std::to_string(merge_idx) + "]: expected a pair of strings");
          else cap.merges.emplace_back(std::move(pair[0]), std::move(pair[1]));
          ++merge_idx;
          stack.pop_back();
          return false;
        }
        stack.pop_back();
        return true;
      }
      case json::parse_event_t::value:
        if (cap.has_vocab && at({"model", "vocab"}) && !stack.back().is_array) {
          if (!parsed.is_number_integer()) bad("model.vocab[\"" + last_key + "\"]: expected an integer id");
          else cap.vocab.emplace_back(last_key, parsed.get<int64_t>());
          return false;
        }
        if (cap.has_merges && at({"model", "merges"})) {
          if (!parsed.is_string()) {
            bad("model.merges[" + std::to_string(merge_idx) + "]: expected a string or a pair of strings");
          } else {
            const std::string& s = parsed.get_ref<const std::string&>();
            size_t sp = s.find(' ');
            if (sp == std::string::npos || s.find(' ', sp + 1) != std::string::npos)
              bad("model.merges[" + std::to_string(merge_idx) + "]: expected \"left right\", found '" + s + "'");
            else cap.merges.emplace_back(s.substr(0, sp), s.substr(sp + 1));
          }
          ++merge_idx;
          return false;
        }
        if (cap.has_merges && at({"model", "merges", "[]"})) {
          if (!parsed.is_string()) bad("model.merges[" + std::to_string(merge_idx) + "]: expected strings");
          else pair.push_back(parsed.get<std::string>());
          return false;
        }
        return true;
      default:
        return true;
    }
  };
  return parse_json_bounded(text, source, cb);
}

}  // namespace oxyd::tokenizer
