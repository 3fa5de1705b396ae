// OutputParser's driver, the shared pieces of output_parser_detail.h, the <think> reasoning
// wrapper, the plain parser and the factory (see output_parser.h).
#include "chat/output_parser.h"

#include "chat/output_parser_detail.h"
#include "chat/output_parsers.h"

namespace oxyd::chat {

using json = nlohmann::ordered_json;
using namespace detail;

void EventSink::tool_start(std::string name) {
  events.push_back({OutputEvent::Kind::TOOL_START, num_tool_calls++, std::move(name)});
}

void EventSink::text(OutputEvent::Kind k, int32_t idx, std::string_view s) {
  if (s.empty()) return;
  if (!events.empty() && events.back().kind == k && events.back().tool_index == idx) {
    events.back().text += s;
    return;
  }
  events.push_back({k, idx, std::string(s)});
}

OutputEvents OutputParser::feed(std::string_view text) {
  buf_ += text;
  return run(false);
}

OutputEvents OutputParser::finish() { return run(true); }

OutputEvents OutputParser::run(bool at_end) {
  while (step(at_end)) {
  }
  if (pos_ > 0) buf_.erase(0, pos_), pos_ = 0;
  return sink_.take();
}

namespace detail {

size_t partial_suffix(std::string_view s, const std::vector<std::string_view>& markers) {
  size_t best = 0;
  for (std::string_view m : markers)
    for (size_t n = std::min(s.size(), m.size() - 1); n > best; --n)
      if (s.substr(s.size() - n) == m.substr(0, n)) {
        best = n;
        break;
      }
  return best;
}

MarkerHit find_marker(std::string_view s, const std::vector<std::string_view>& markers) {
  MarkerHit hit;
  for (size_t k = 0; k < markers.size(); ++k) {
    const size_t at = s.find(markers[k]);
    if (at < hit.at) hit = {at, k};
  }
  return hit;
}

void Content::text(std::string_view s) {
  if (sink_.num_tool_calls != calls_seen_) held_.clear(), skip_ws_ = true, calls_seen_ = sink_.num_tool_calls;
  if (skip_ws_) {
    while (!s.empty() && is_ws(s.front())) s.remove_prefix(1);
    if (s.empty()) return;
    skip_ws_ = false;
  }
  size_t e = s.size();
  while (e > 0 && is_ws(s[e - 1])) --e;
  if (e > 0) {
    sink_.content(held_);
    held_.clear();
    sink_.content(s.substr(0, e));
  }
  held_ += s.substr(e);
}

void Content::end() {
  if (sink_.num_tool_calls == 0) sink_.content(held_);
  held_.clear();
}

size_t JsonScan::advance(std::string_view s) {
  size_t i = 0;
  for (; i < s.size(); ++i) {
    const char c = s[i];
    if (!started) {
      if (is_ws(c)) continue;
      started = true;
      if (c == '{' || c == '[') depth = 1;
      else if (c == '"') in_str = true;
      else scalar = true;
      continue;
    }
    if (scalar) {
      if (c == ',' || c == '}' || c == ']' || is_ws(c)) {
        done = true;
        return i;
      }
      continue;
    }
    if (in_str) {
      if (esc) esc = false;
      else if (c == '\\') esc = true;
      else if (c == '"') {
        in_str = false;
        if (depth == 0) {
          done = true;
          return i + 1;
        }
      }
      continue;
    }
    if (c == '"') in_str = true;
    else if (c == '{' || c == '[') ++depth;
    else if ((c == '}' || c == ']') && --depth == 0) {
      done = true;
      return i + 1;
    }
  }
  return i;
}

}  // namespace detail

namespace {

// All text is content, as generated.
class PlainParser final : public OutputParser {
  bool step(bool) override {
    if (pos_ == buf_.size()) return false;
    sink_.content(rest());
    pos_ = buf_.size();
    return false;
  }
};

// <think>REASONING</think>CONTENT (or the format's other pair of markers): the reasoning, then the
// rest through the tool-call parser.
// Whitespace at both ends of the reasoning and at the start of the content is dropped (the
// templates write "<think>\n…\n</think>\n\n"). The output opens <think> itself, or the prompt did.
class ThinkParser final : public OutputParser {
 public:
  ThinkParser(std::unique_ptr<OutputParser> inner, bool open, std::string open_tag, std::string close_tag)
      : inner_(std::move(inner)), state_(open ? State::REASON : State::START), open_(std::move(open_tag)),
        close_(std::move(close_tag)) {}

 private:
  enum class State { START, REASON, PASS };

  bool step(bool at_end) override {
    std::string_view s = rest();
    switch (state_) {
      case State::START: {
        const std::string_view kOpen = open_;
        size_t i = 0;
        while (i < s.size() && is_ws(s[i])) ++i;
        const std::string_view t = s.substr(i);
        if (t.substr(0, kOpen.size()) == kOpen) {
          pos_ += i + kOpen.size(), state_ = State::REASON;
          return true;
        }
        if (!at_end && kOpen.substr(0, t.size()) == t) return false;  // "", "<th": wait
        state_ = State::PASS;
        return true;
      }
      case State::REASON: {
        const std::string_view kClose = close_;
        if (!started_) {
          size_t i = 0;
          while (i < s.size() && is_ws(s[i])) ++i;
          pos_ += i, s.remove_prefix(i);
          if (s.empty()) return false;
          started_ = true;
        }
        const size_t close = s.find(kClose);
        if (close != std::string_view::npos) {
          reason(s.substr(0, close), true);
          pos_ += close + kClose.size(), state_ = State::PASS, skip_ws_ = true;
          return true;
        }
        const size_t keep = at_end ? 0 : partial_suffix(s, {kClose});
        reason(s.substr(0, s.size() - keep), at_end);
        pos_ += s.size() - keep;
        return false;
      }
      case State::PASS: {
        if (skip_ws_) {
          size_t i = 0;
          while (i < s.size() && is_ws(s[i])) ++i;
          pos_ += i, s.remove_prefix(i);
          if (s.empty() && !at_end) return false;
          skip_ws_ = false;
        }
        append(inner_->feed(s));
        pos_ = buf_.size();
        if (at_end) append(inner_->finish());
        return false;
      }
    }
    return false;
  }

  // Reasoning text; trailing whitespace is held until more reasoning follows (dropped at the end).
  void reason(std::string_view s, bool last) {
    size_t e = s.size();
    while (e > 0 && is_ws(s[e - 1])) --e;
    if (e > 0) {
      sink_.reasoning(held_);
      held_.clear();
      sink_.reasoning(s.substr(0, e));
    }
    held_ += s.substr(e);
    if (last) held_.clear();
  }

  void append(OutputEvents ev) {
    for (auto& e : ev) {
      if (e.kind == OutputEvent::Kind::TOOL_START) sink_.tool_start(std::move(e.text));
      else if (e.kind == OutputEvent::Kind::TOOL_ARGS) sink_.tool_args(e.text);
      else if (e.kind == OutputEvent::Kind::REASONING) sink_.reasoning(e.text);
      else sink_.content(e.text);
    }
  }

  std::unique_ptr<OutputParser> inner_;
  State state_;
  std::string open_, close_;
  std::string held_;
  bool started_ = false, skip_ws_ = false;
};

}  // namespace

std::unique_ptr<OutputParser> make_output_parser(const OutputFormat& format, const ParserOptions& opts) {
  std::unique_ptr<OutputParser> p;
  if (format.tools == ToolSyntax::HARMONY) return make_harmony_parser(opts);
  if (opts.parse_tools && format.tools != ToolSyntax::NONE) p = make_tool_parser(format.tools, opts);
  else p = std::make_unique<PlainParser>();
  if (format.think_tags)
    p = std::make_unique<ThinkParser>(std::move(p), opts.reasoning_open, format.think_open, format.think_close);
  return p;
}

json build_message(const OutputEvents& events, const std::vector<std::string>& ids) {
  std::string content, reasoning;
  std::vector<std::pair<std::string, std::string>> calls;
  for (const auto& e : events) {
    switch (e.kind) {
      case OutputEvent::Kind::CONTENT: content += e.text; break;
      case OutputEvent::Kind::REASONING: reasoning += e.text; break;
      case OutputEvent::Kind::TOOL_START: calls.emplace_back(e.text, ""); break;
      case OutputEvent::Kind::TOOL_ARGS: calls.at(size_t(e.tool_index)).second += e.text; break;
    }
  }
  json m = json::object();
  m["role"] = "assistant";
  m["content"] = content.empty() && !calls.empty() ? json(nullptr) : json(content);
  if (!reasoning.empty()) m["reasoning_content"] = reasoning;
  if (!calls.empty()) {
    json tc = json::array();
    for (size_t i = 0; i < calls.size(); ++i)
      tc.push_back({{"id", i < ids.size() ? ids[i] : ""},
                    {"type", "function"},
                    {"function", {{"name", calls[i].first}, {"arguments", calls[i].second}}}});
    m["tool_calls"] = std::move(tc);
  }
  return m;
}

}  // namespace oxyd::chat
