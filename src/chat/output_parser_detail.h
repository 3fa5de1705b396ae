// Pieces shared by the output parsers (output_parser.h): marker search that holds a possible
// marker prefix, content whose whitespace around tool calls is dropped, and a reader of one JSON
// call object {"name": N, "arguments"|"parameters": {...}} that streams the arguments.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "chat/output_parser.h"

namespace oxyd::chat::detail {

inline bool is_ws(char c) { return c == ' ' || c == '\n' || c == '\t' || c == '\r'; }

/// Length of the longest suffix of s that is a proper prefix of one of the markers.
size_t partial_suffix(std::string_view s, const std::vector<std::string_view>& markers);

/// Earliest full marker in s: its offset and which one (npos when none).
struct MarkerHit { size_t at = std::string_view::npos; size_t which = 0; };
MarkerHit find_marker(std::string_view s, const std::vector<std::string_view>& markers);

/// Content text in which whitespace just before a tool call, just after one and at the end of an
/// output that made calls is dropped (it only separates calls; OpenAI's content would not hold it).
class Content {
 public:
  explicit Content(EventSink& sink) : sink_(sink) {}
  void text(std::string_view s);  // trailing whitespace is held
  void end();                     // end of output: the held whitespace, when no call was made

 private:
  EventSink& sink_;
  std::string held_;
  int32_t calls_seen_ = 0;  // a call since the held whitespace: it is dropped, and the next leading
  bool skip_ws_ = false;
};

/// Scans one JSON value (object, array, string or scalar) incrementally; done once it closed.
/// A scalar is done at the first character that cannot continue it.
struct JsonScan {
  int depth = 0;
  bool started = false, in_str = false, esc = false, done = false, scalar = false;
  /// Advances over s; returns how many characters belong to the value (all of s unless done).
  size_t advance(std::string_view s);
};

/// Reads {"name": N, "arguments": V} (or "parameters") from buffer text starting at a '{'
/// (leading whitespace allowed): emits tool_start(N) once the name is read, then V's text as it
/// comes. When the keys come in another order the object is read whole, then emitted.
class JsonCallReader {
 public:
  enum class Result { NEED_MORE, DONE, FAILED };
  void reset() { *this = JsonCallReader(); }
  /// Consumes from s (advancing `used`); FAILED only before anything was emitted.
  Result read(std::string_view s, size_t& used, bool at_end, EventSink& sink);

 private:
  enum class State { PREFIX, ARGS_WS, ARGS, ARGS_STRING, TAIL, WHOLE };
  State state_ = State::PREFIX;
  JsonScan scan_;
  std::string pending_;  // ARGS_STRING / WHOLE: the text read so far
  int tail_depth_ = 1;   // TAIL: depth inside the call object
  bool tail_str_ = false, tail_esc_ = false;
};

}  // namespace oxyd::chat::detail
