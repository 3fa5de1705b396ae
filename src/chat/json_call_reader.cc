// JsonCallReader (output_parser_detail.h): {"name": N, "arguments"|"parameters": V}, V streamed.
#include "chat/output_parser_detail.h"

namespace oxyd::chat::detail {

using json = nlohmann::ordered_json;

namespace {

enum class Match { MATCH, PARTIAL, FAIL };
constexpr size_t kMaxName = 256;

// `{"name": "N", "arguments":` (or "parameters") with any whitespace; n: its length.
Match match_prefix(std::string_view s, std::string& name, size_t& n) {
  size_t i = 0;
  auto ws = [&] {
    while (i < s.size() && is_ws(s[i])) ++i;
  };
  // 1 matched, 0 s ended inside it, -1 differs.
  auto lit = [&](std::string_view l) {
    size_t k = 0;
    for (; k < l.size() && i + k < s.size(); ++k)
      if (s[i + k] != l[k]) return -1;
    if (k < l.size()) return 0;
    i += k;
    return 1;
  };
  int r;
  ws();
  if ((r = lit("{")) != 1) return r == 0 ? Match::PARTIAL : Match::FAIL;
  ws();
  if ((r = lit("\"name\"")) != 1) return r == 0 ? Match::PARTIAL : Match::FAIL;
  ws();
  if ((r = lit(":")) != 1) return r == 0 ? Match::PARTIAL : Match::FAIL;
  ws();
  if (i >= s.size()) return Match::PARTIAL;
  if (s[i] != '"') return Match::FAIL;
  size_t j = i + 1;
  for (bool esc = false; j < s.size(); ++j) {
    if (esc) esc = false;
    else if (s[j] == '\\') esc = true;
    else if (s[j] == '"') break;
  }
  if (j >= s.size()) return j - i > kMaxName ? Match::FAIL : Match::PARTIAL;
  try {
    name = json::parse(s.substr(i, j - i + 1)).get<std::string>();
  } catch (const std::exception&) {
    return Match::FAIL;
  }
  if (name.empty()) return Match::FAIL;
  i = j + 1;
  ws();
  if ((r = lit(",")) != 1) return r == 0 ? Match::PARTIAL : Match::FAIL;
  ws();
  const size_t key_at = i;
  if ((r = lit("\"arguments\"")) == -1) {
    i = key_at;
    r = lit("\"parameters\"");
  }
  if (r != 1) return r == 0 ? Match::PARTIAL : Match::FAIL;
  ws();
  if ((r = lit(":")) != 1) return r == 0 ? Match::PARTIAL : Match::FAIL;
  n = i;
  return Match::MATCH;
}

}  // namespace

JsonCallReader::Result JsonCallReader::read(std::string_view s, size_t& used, bool at_end, EventSink& sink) {
  for (;;) {
    const std::string_view t = s.substr(used);
    switch (state_) {
      case State::PREFIX: {
        std::string name;
        size_t n = 0;
        switch (match_prefix(t, name, n)) {
          case Match::MATCH:
            sink.tool_start(std::move(name));
            used += n, state_ = State::ARGS_WS;
            continue;
          case Match::PARTIAL:
            if (at_end) return Result::FAILED;
            return Result::NEED_MORE;
          case Match::FAIL: {
            size_t i = 0;
            while (i < t.size() && is_ws(t[i])) ++i;
            if (i == t.size() || t[i] != '{') return Result::FAILED;
            state_ = State::WHOLE;
            continue;
          }
        }
        return Result::FAILED;
      }
      case State::WHOLE: {  // the keys in another order: read the whole object, then check it
        JsonScan scan;
        const size_t k = scan.advance(t);
        if (!scan.done) return at_end ? Result::FAILED : Result::NEED_MORE;
        json obj;
        try {
          obj = json::parse(t.substr(0, k));
        } catch (const std::exception&) {
          return Result::FAILED;
        }
        const json* args = nullptr;
        for (const char* key : {"arguments", "parameters"})
          if (obj.contains(key)) args = &obj[key];
        if (!obj.contains("name") || !obj["name"].is_string() || obj["name"].get<std::string>().empty() || !args ||
            !(args->is_object() || args->is_string()))
          return Result::FAILED;
        sink.tool_start(obj["name"].get<std::string>());
        sink.tool_args(args->is_string() ? args->get<std::string>() : args->dump());
        used += k;
        return Result::DONE;
      }
      case State::ARGS_WS: {
        size_t i = 0;
        while (i < t.size() && is_ws(t[i])) ++i;
        used += i;
        if (i == t.size()) return at_end ? Result::DONE : Result::NEED_MORE;
        state_ = t[i] == '"' ? State::ARGS_STRING : State::ARGS;
        continue;
      }
      case State::ARGS: {
        const size_t k = scan_.advance(t);
        sink.tool_args(t.substr(0, k));
        used += k;
        if (scan_.done) {
          state_ = State::TAIL;
          continue;
        }
        return at_end ? Result::DONE : Result::NEED_MORE;
      }
      case State::ARGS_STRING: {  // arguments given as a JSON string holding the JSON text
        const size_t k = scan_.advance(t);
        pending_ += t.substr(0, k);
        used += k;
        if (scan_.done) {
          try {
            sink.tool_args(json::parse(pending_).get<std::string>());
          } catch (const std::exception&) {
            sink.tool_args(pending_);
          }
          state_ = State::TAIL;
          continue;
        }
        if (at_end) sink.tool_args(pending_);
        return at_end ? Result::DONE : Result::NEED_MORE;
      }
      case State::TAIL: {  // after the arguments: '}' closes the call; ", more keys" are skipped
        size_t i = 0;
        while (i < t.size() && is_ws(t[i])) ++i;
        if (i == t.size()) return at_end ? Result::DONE : Result::NEED_MORE;
        if (t[i] == '}') {
          used += i + 1;
          return Result::DONE;
        }
        if (t[i] != ',') return Result::DONE;  // malformed tail: left to the caller as text
        // Skip to the object's end, minding strings.
        size_t j = i + 1;
        for (; j < t.size(); ++j) {
          const char c = t[j];
          if (tail_str_) {
            if (tail_esc_) tail_esc_ = false;
            else if (c == '\\') tail_esc_ = true;
            else if (c == '"') tail_str_ = false;
          } else if (c == '"') {
            tail_str_ = true;
          } else if (c == '{' || c == '[') {
            ++tail_depth_;
          } else if ((c == '}' || c == ']') && --tail_depth_ == 0) {
            used += j + 1;
            return Result::DONE;
          }
        }
        if (at_end) {
          used += j;
          return Result::DONE;
        }
        // Keep scanning from the comma next time: reset the scan state (it is recomputed).
        tail_depth_ = 1, tail_str_ = false, tail_esc_ = false;
        return Result::NEED_MORE;
      }
    }
  }
}

}  // namespace oxyd::chat::detail
