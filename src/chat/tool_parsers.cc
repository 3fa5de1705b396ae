// The tool-call parsers whose calls follow an opener in the text (output_parser.h's ToolSyntax):
// content up to the opener, then a body read by a BodyReader, then an optional closer. A body
// that fails before it emitted anything makes the opener content (the fallback rule).
#include <algorithm>
#include <functional>

#include "chat/output_parser_detail.h"
#include "chat/output_parsers.h"

namespace oxyd::chat {

using json = nlohmann::ordered_json;
using namespace detail;

namespace {

using Result = JsonCallReader::Result;

struct BodyReader {
  virtual ~BodyReader() = default;
  virtual void reset() = 0;
  /// Reads from s (advancing used): FAILED only when nothing was emitted.
  virtual Result read(std::string_view s, size_t& used, bool at_end, EventSink& sink) = 0;
};

// One {"name", "arguments"} object.
struct JsonOne final : BodyReader {
  JsonCallReader r;
  void reset() override { r.reset(); }
  Result read(std::string_view s, size_t& used, bool at_end, EventSink& sink) override {
    return r.read(s, used, at_end, sink);
  }
};

size_t skip_ws(std::string_view s, size_t i = 0) {
  while (i < s.size() && is_ws(s[i])) ++i;
  return i;
}

// A JSON list of call objects ("[{…}, {…}]"), or a single object; list=false: objects separated
// by ';' or whitespace.
struct JsonMany final : BodyReader {
  explicit JsonMany(bool list) : list_(list) {}
  enum class State { OPEN, CALL, NEXT };
  State state = State::OPEN;
  JsonCallReader r;
  bool list_, bracketed = false;
  int32_t calls = 0;
  void reset() override { state = State::OPEN, r.reset(), bracketed = false, calls = 0; }
  Result read(std::string_view s, size_t& used, bool at_end, EventSink& sink) override {
    for (;;) {
      const std::string_view t = s.substr(used);
      const size_t i = skip_ws(t);
      switch (state) {
        case State::OPEN: {  // nothing is consumed until the first call emitted something
          if (i == t.size()) return at_end ? Result::FAILED : Result::NEED_MORE;
          bracketed = list_ && t[i] == '[';
          size_t u = used + (bracketed ? i + 1 : i);
          const int32_t before = sink.num_tool_calls;
          r.reset();
          const Result res = r.read(s, u, at_end, sink);
          if (res == Result::FAILED || (res == Result::NEED_MORE && sink.num_tool_calls == before)) return res;
          used = u;
          if (res == Result::NEED_MORE) {
            state = State::CALL;
            return res;
          }
          ++calls, state = State::NEXT;
          continue;
        }
        case State::CALL: {
          const Result res = r.read(s, used, at_end, sink);
          if (res == Result::NEED_MORE) return res;
          if (res == Result::FAILED) return calls == 0 ? Result::FAILED : Result::DONE;
          ++calls, state = State::NEXT;
          continue;
        }
        case State::NEXT:
          if (i == t.size()) return at_end ? Result::DONE : Result::NEED_MORE;
          if (bracketed && t[i] == ']') {
            used += i + 1;
            return Result::DONE;
          }
          if (t[i] == ',' || t[i] == ';') {
            const size_t j = skip_ws(t, i + 1);
            if (j == t.size() && !at_end) return Result::NEED_MORE;
            if (j < t.size() && t[j] == '{') {
              used += j, state = State::CALL, r.reset();
              continue;
            }
            return Result::DONE;
          }
          if (!list_ && t[i] == '{') {
            used += i, state = State::CALL, r.reset();
            continue;
          }
          return Result::DONE;
      }
    }
  }
};

// NAME[ARGS]{…} (NAME[CALL_ID]ID[ARGS]{…} also read; the id is not kept).
struct NameArgs final : BodyReader {
  enum class State { NAME, ARGS };
  State state = State::NAME;
  JsonScan scan;
  void reset() override { state = State::NAME, scan = JsonScan(); }
  static bool name_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
           c == '.';
  }
  Result read(std::string_view s, size_t& used, bool at_end, EventSink& sink) override {
    for (;;) {
      const std::string_view t = s.substr(used);
      if (state == State::NAME) {
        size_t i = skip_ws(t), e = i;
        while (e < t.size() && name_char(t[e])) ++e;
        if (e - i > 64) return Result::FAILED;
        const std::string_view after = t.substr(e);
        const MarkerHit hit = find_marker(after, {"[ARGS]", "[CALL_ID]"});
        if (e == i || hit.at != 0) {
          if (!at_end && (e == t.size() || partial_suffix(after, {"[ARGS]", "[CALL_ID]"}) == after.size()))
            return Result::NEED_MORE;
          return Result::FAILED;
        }
        size_t n = e + (hit.which == 0 ? 6 : 9);
        if (hit.which == 1) {  // [CALL_ID]id[ARGS]
          const size_t a = t.find("[ARGS]", n);
          if (a == std::string_view::npos) return at_end ? Result::FAILED : Result::NEED_MORE;
          n = a + 6;
        }
        sink.tool_start(std::string(t.substr(i, e - i)));
        used += n, state = State::ARGS;
        continue;
      }
      const size_t i = scan.started ? 0 : skip_ws(t);
      used += i;
      const size_t k = scan.advance(t.substr(i));
      sink.tool_args(t.substr(i, k));
      used += k;
      return scan.done || at_end ? Result::DONE : Result::NEED_MORE;
    }
  }
};

// JSON-escapes s without its quotes; bytes >= 0x80 pass through (pieces may split a character).
std::string escape(std::string_view s) {
  std::string out;
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20) {
          static const char* hex = "0123456789abcdef";
          out += "\\u00";
          out += hex[c >> 4];
          out += hex[c & 15];
        } else {
          out += char(c);
        }
    }
  }
  return out;
}

// <function=N><parameter=P>\nV\n</parameter>…</function>: arguments {"P": V, …}. V is a JSON
// string unless the tool's schema gives P another type and V parses as JSON; strings stream.
struct XmlFunction final : BodyReader {
  explicit XmlFunction(json tools) : tools_(std::move(tools)) {}
  enum class State { FUNC, PARAMS, STRING, OTHER };
  State state = State::FUNC;
  json tools_;
  std::string name, pending, param_type_;
  int32_t params = 0;
  bool started_value = false;
  void reset() override { state = State::FUNC, name.clear(), pending.clear(), params = 0; }

  std::string param_type(const std::string& p) const {
    if (!tools_.is_array()) return "string";
    for (const auto& t : tools_) {
      const json* fn = t.contains("function") ? &t["function"] : nullptr;
      if (!fn || fn->value("name", "") != name || !fn->contains("parameters")) continue;
      const json& props = (*fn)["parameters"].value("properties", json::object());
      if (props.contains(p) && props[p].is_object() && props[p].contains("type") && props[p]["type"].is_string())
        return props[p]["type"].get<std::string>();
    }
    return "string";
  }

  // Reads `<TAG=VALUE>` at t[i..]: 1 read (value, length), 0 need more, -1 not that tag.
  static int tag(std::string_view t, size_t i, std::string_view open, std::string& value, size_t& end) {
    const std::string_view u = t.substr(i);
    if (u.size() < open.size()) return open.substr(0, u.size()) == u ? 0 : -1;
    if (u.substr(0, open.size()) != open) return -1;
    const size_t gt = u.find('>', open.size());
    if (gt == std::string_view::npos) return u.size() > open.size() + 128 ? -1 : 0;
    value = std::string(u.substr(open.size(), gt - open.size()));
    end = i + gt + 1;
    return value.empty() || value.find_first_of("<\n") != std::string::npos ? -1 : 1;
  }

  Result read(std::string_view s, size_t& used, bool at_end, EventSink& sink) override {
    for (;;) {
      const std::string_view t = s.substr(used);
      const size_t i = skip_ws(t);
      switch (state) {
        case State::FUNC: {
          size_t end = 0;
          const int r = tag(t, i, "<function=", name, end);
          if (r == 0) return at_end ? Result::FAILED : Result::NEED_MORE;
          if (r < 0) return Result::FAILED;
          sink.tool_start(name);
          used += end, state = State::PARAMS;
          continue;
        }
        case State::PARAMS: {
          std::string p;
          size_t end = 0;
          const int r = tag(t, i, "<parameter=", p, end);
          if (r == 1) {
            sink.tool_args(std::string(params++ == 0 ? "{" : ", ") + "\"" + escape(p) + "\": ");
            used += end, pending.clear(), started_value = false;
            param_type_ = param_type(p);
            state = param_type_ == "string" ? State::STRING : State::OTHER;
            if (state == State::STRING) sink.tool_args("\"");
            continue;
          }
          constexpr std::string_view kEnd = "</function>";
          const std::string_view u = t.substr(i);
          if (u.substr(0, kEnd.size()) == kEnd) {
            used += i + kEnd.size();
            sink.tool_args(params == 0 ? "{}" : "}");
            return Result::DONE;
          }
          const bool partial = r == 0 || (u.size() < kEnd.size() && kEnd.substr(0, u.size()) == u);
          if (partial && !at_end) return Result::NEED_MORE;
          if (partial) {  // the output ended here: the arguments stay as generated
            used += t.size();
            return Result::DONE;
          }
          sink.tool_args(params == 0 ? "{}" : "}");  // other text: the call ends, the text is the caller's
          return Result::DONE;
        }
        case State::STRING:
        case State::OTHER: {
          constexpr std::string_view kClose = "</parameter>";
          std::string_view v = t;
          if (!started_value) {  // one leading newline is the template's
            if (v.empty()) return at_end ? Result::DONE : Result::NEED_MORE;
            if (v[0] == '\n') v.remove_prefix(1), ++used;
            started_value = true;
          }
          const size_t close = v.find(kClose);
          size_t take = close == std::string_view::npos ? v.size() - (at_end ? 0 : partial_suffix(v, {kClose})) : close;
          std::string_view piece = v.substr(0, take);
          // One trailing newline before </parameter> is the template's: hold a final '\n'.
          size_t consumed = take;
          if (close != std::string_view::npos) {
            if (!piece.empty() && piece.back() == '\n') piece.remove_suffix(1);
            consumed += kClose.size();
          } else if (!at_end && !piece.empty() && piece.back() == '\n') {
            piece.remove_suffix(1), --consumed;
          }
          if (state == State::STRING) sink.tool_args(escape(piece));
          else pending += piece;
          used += consumed;
          if (close == std::string_view::npos) {
            if (at_end && state == State::OTHER) sink.tool_args(pending);
            return at_end ? Result::DONE : Result::NEED_MORE;
          }
          if (state == State::STRING) {
            sink.tool_args("\"");
          } else {
            std::string text = pending;
            if (param_type_ == "boolean" && (pending == "True" || pending == "False")) {
              text = pending == "True" ? "true" : "false";  // the template writes Python's str(bool)
            } else {
              try {
                text = json::parse(pending).dump(-1, ' ', false, json::error_handler_t::replace);
              } catch (const std::exception&) {
                text = "\"" + escape(pending) + "\"";
              }
            }
            sink.tool_args(text);
          }
          state = State::PARAMS;
          continue;
        }
      }
    }
  }
};

// call:N{k:V,…} where strings are quoted by <|"|> and keys are bare (or <|"|>-quoted): the
// arguments are rewritten to JSON as they come ("k":V, strings JSON-escaped).
struct CallColon final : BodyReader {
  static constexpr std::string_view kQuote = "<|\"|>";
  enum class State { NAME, VALUE, KEY, STRING };
  State state = State::NAME;
  std::string stack;  // 'o' / 'a' per open container
  bool expect_key = false;
  void reset() override { state = State::NAME, stack.clear(), expect_key = false; }

  Result read(std::string_view s, size_t& used, bool at_end, EventSink& sink) override {
    for (;;) {
      const std::string_view t = s.substr(used);
      if (state == State::NAME) {
        constexpr std::string_view kCall = "call:";
        const size_t brace = t.find('{');
        const std::string_view head = t.substr(0, brace);
        if (head.substr(0, std::min(head.size(), kCall.size())) != kCall.substr(0, std::min(head.size(), kCall.size())))
          return Result::FAILED;
        if (brace == std::string_view::npos) return at_end || t.size() > 80 ? Result::FAILED : Result::NEED_MORE;
        const std::string_view name = head.size() > kCall.size() ? head.substr(kCall.size()) : std::string_view();
        if (name.empty() || !std::all_of(name.begin(), name.end(), NameArgs::name_char)) return Result::FAILED;
        sink.tool_start(std::string(name));
        sink.tool_args("{");
        used += brace + 1, stack = "o", expect_key = true, state = State::VALUE;
        continue;
      }
      if (t.empty()) return at_end ? Result::DONE : Result::NEED_MORE;
      if (state == State::STRING) {
        const size_t q = t.find(kQuote);
        const size_t take = q != std::string_view::npos ? q : t.size() - (at_end ? 0 : partial_suffix(t, {kQuote}));
        sink.tool_args(escape(t.substr(0, take)));
        used += take;
        if (q == std::string_view::npos) return at_end ? Result::DONE : Result::NEED_MORE;
        sink.tool_args("\"");  // a quoted key's ':' follows and passes through
        used += kQuote.size(), state = State::VALUE, expect_key = false;
        continue;
      }
      if (state == State::KEY) {  // a bare key, up to ':'
        const size_t colon = t.find(':');
        if (colon == std::string_view::npos) return at_end ? Result::DONE : Result::NEED_MORE;
        sink.tool_args("\"" + escape(t.substr(0, colon)) + "\":");
        used += colon + 1, state = State::VALUE, expect_key = false;
        continue;
      }
      const char c = t[0];
      if (t.substr(0, std::min(t.size(), kQuote.size())) == kQuote.substr(0, std::min(t.size(), kQuote.size()))) {
        if (t.size() < kQuote.size()) return at_end ? Result::DONE : Result::NEED_MORE;
        sink.tool_args("\"");
        used += kQuote.size(), state = State::STRING;  // a quoted key keeps expect_key until its end
        continue;
      }
      if (is_ws(c)) {
        ++used;
        continue;
      }
      if (expect_key && c != '}') {
        state = State::KEY;
        continue;
      }
      if (c != '{' && c != '[' && c != ',' && c != '}' && c != ']') {  // a bare literal, read whole
        size_t e = 0;
        while (e < t.size() && t[e] != ',' && t[e] != '}' && t[e] != ']' && !is_ws(t[e]) && t[e] != '<') ++e;
        if (e == t.size() && !at_end) return Result::NEED_MORE;
        const std::string_view lit = t.substr(0, e);
        // The template writes what jinja prints: Python's None / True / False where JSON has null / true / false.
        sink.tool_args(lit == "None" ? "null" : lit == "True" ? "true" : lit == "False" ? "false" : lit);
        used += e;
        if (e == t.size()) return Result::DONE;
        continue;
      }
      sink.tool_args(std::string_view(&c, 1));
      ++used;
      if (c == '{') stack += 'o', expect_key = true;
      else if (c == '[') stack += 'a';
      else if (c == ',') expect_key = !stack.empty() && stack.back() == 'o';
      else if (c == '}' || c == ']') {
        if (!stack.empty()) stack.pop_back();
        expect_key = false;
        if (stack.empty()) return Result::DONE;
      }
    }
  }
};

// Content, then at each opener a body; `closer` (may be empty) is consumed after a body. With
// bare_json, an output that starts with '{' is read as calls without an opener.
class MarkedCallParser final : public OutputParser {
 public:
  MarkedCallParser(std::string_view opener, std::string_view closer, std::unique_ptr<BodyReader> body, bool bare_json)
      : opener_(opener), closer_(closer), body_(std::move(body)), state_(bare_json ? State::START : State::TEXT) {}

 private:
  enum class State { START, TEXT, BODY, CLOSE };

  bool step(bool at_end) override {
    const std::string_view s = rest();
    switch (state_) {
      case State::START: {
        const size_t i = skip_ws(s);
        if (i == s.size() && !at_end) return false;
        state_ = State::TEXT;
        if (i < s.size() && s[i] == '{') state_ = State::BODY, bare_ = true, body_->reset();
        return true;
      }
      case State::TEXT: {
        const MarkerHit hit = find_marker(s, {opener_});
        if (hit.at != std::string_view::npos) {
          content_.text(s.substr(0, hit.at));
          pos_ += hit.at + opener_.size(), state_ = State::BODY, bare_ = false, body_->reset();
          return true;
        }
        const size_t keep = at_end ? 0 : partial_suffix(s, {opener_});
        content_.text(s.substr(0, s.size() - keep));
        pos_ += s.size() - keep;
        if (at_end) content_.end();
        return false;
      }
      case State::BODY: {
        size_t used = 0;
        const Result r = body_->read(s, used, at_end, sink_);
        pos_ += used;
        if (r == Result::NEED_MORE) return false;
        if (r == Result::FAILED) {
          if (!bare_) content_.text(opener_);
          state_ = State::TEXT;
          return true;
        }
        state_ = closer_.empty() ? State::TEXT : State::CLOSE;
        return true;
      }
      case State::CLOSE: {
        const size_t i = skip_ws(s);
        const std::string_view t = s.substr(i);
        if (t.substr(0, closer_.size()) == closer_) {
          pos_ += i + closer_.size(), state_ = State::TEXT;
          return true;
        }
        if (!at_end && closer_.substr(0, t.size()) == t) return false;
        state_ = State::TEXT;
        return true;
      }
    }
    return false;
  }

  std::string_view opener_, closer_;
  std::unique_ptr<BodyReader> body_;
  State state_;
  bool bare_ = false;
  Content content_{sink_};
};

}  // namespace

std::unique_ptr<OutputParser> make_tool_parser(ToolSyntax syntax, const ParserOptions& opts) {
  switch (syntax) {
    case ToolSyntax::TAG_JSON:
      return std::make_unique<MarkedCallParser>("<tool_call>", "</tool_call>", std::make_unique<JsonOne>(), false);
    case ToolSyntax::TAG_XML:
      return std::make_unique<MarkedCallParser>("<tool_call>", "</tool_call>",
                                                std::make_unique<XmlFunction>(opts.tools), false);
    case ToolSyntax::PYTHON_TAG:
      return std::make_unique<MarkedCallParser>("<|python_tag|>", "", std::make_unique<JsonMany>(false), true);
    case ToolSyntax::BRACKET_LIST:
      return std::make_unique<MarkedCallParser>("[TOOL_CALLS]", "", std::make_unique<JsonMany>(true), false);
    case ToolSyntax::BRACKET_ARGS:
      return std::make_unique<MarkedCallParser>("[TOOL_CALLS]", "", std::make_unique<NameArgs>(), false);
    case ToolSyntax::PIPE_LIST:
      return std::make_unique<MarkedCallParser>("<|tool_call|>", "", std::make_unique<JsonMany>(true), false);
    case ToolSyntax::CALL_COLON:
      return std::make_unique<MarkedCallParser>("<|tool_call>", "<tool_call|>", std::make_unique<CallColon>(), false);
    case ToolSyntax::NONE:
    case ToolSyntax::HARMONY: break;
  }
  return make_tool_parser(ToolSyntax::TAG_JSON, opts);
}

}  // namespace oxyd::chat
