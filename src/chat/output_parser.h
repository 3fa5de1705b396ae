// Incremental parsers of a chat model's generated text into what an OpenAI message holds: content,
// reasoning_content and tool calls. Each parser consumes the text as it is generated, in pieces of
// any size, and returns events: content and reasoning text, a tool call's start (its name) and its
// arguments as fragments of a JSON text, as soon as they are decided. Which parser a model gets is
// read from its chat template and vocabulary (output_format.h), never from a model name.
//
// Invariant (tests/chat/output_parser_golden_test.cc): the events depend on the text only, not on
// how it was split; the message built from them is the same for any split.
//
// Fallback rule (documented in tests/data/chat/tool_calls/README.md): a call whose opening cannot
// be read as a call (no name, not JSON, not the format's syntax) is content, opener included; once
// a call's name was read, it stays a call, and when the output ends inside its arguments (length
// limit) the arguments are what was generated.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace oxyd::chat {

struct OutputEvent {
  enum class Kind { CONTENT, REASONING, TOOL_START, TOOL_ARGS };
  Kind kind = Kind::CONTENT;
  int32_t tool_index = -1;  // TOOL_START / TOOL_ARGS: 0, 1, ... in the order the calls were opened
  std::string text;         // TOOL_START: the function name; TOOL_ARGS: a fragment of the arguments
};
using OutputEvents = std::vector<OutputEvent>;

/// Collects events; adjacent text of one kind (and one call) is merged.
struct EventSink {
  OutputEvents events;
  int32_t num_tool_calls = 0;
  void content(std::string_view s) { text(OutputEvent::Kind::CONTENT, -1, s); }
  void reasoning(std::string_view s) { text(OutputEvent::Kind::REASONING, -1, s); }
  void tool_start(std::string name);
  void tool_args(std::string_view s) { text(OutputEvent::Kind::TOOL_ARGS, num_tool_calls - 1, s); }
  OutputEvents take() { return std::exchange(events, {}); }

 private:
  void text(OutputEvent::Kind k, int32_t idx, std::string_view s);
};

class OutputParser {
 public:
  virtual ~OutputParser() = default;
  /// The next generated text; returns what it decides. Text that may still turn into a marker is
  /// held until the next call.
  OutputEvents feed(std::string_view text);
  /// End of generation: decides everything held.
  OutputEvents finish();

 protected:
  /// Consumes a decided prefix of buf_[pos_..] into sink_; false when nothing more can be decided
  /// until more text comes (at_end: must consume everything, then return false).
  virtual bool step(bool at_end) = 0;
  std::string_view rest() const { return std::string_view(buf_).substr(pos_); }

  std::string buf_;
  size_t pos_ = 0;
  EventSink sink_;

 private:
  OutputEvents run(bool at_end);
};

/// The tool-call syntax a model's output uses. Names describe the syntax, not a model.
enum class ToolSyntax {
  NONE,          // no tool calls are parsed: all text is content
  TAG_JSON,      // <tool_call>{"name": N, "arguments": {...}}</tool_call>
  TAG_XML,       // <tool_call><function=N><parameter=P>V</parameter></function></tool_call>
  PYTHON_TAG,    // <|python_tag|>{"name": N, "parameters": {...}}, or that JSON bare
  BRACKET_LIST,  // [TOOL_CALLS] [{"name": N, "arguments": {...}}, ...]
  BRACKET_ARGS,  // [TOOL_CALLS]N[ARGS]{...}  (repeated per call)
  PIPE_LIST,     // <|tool_call|>[{"name": N, "arguments": {...}}, ...]
  HARMONY,       // <|channel|>commentary to=functions.N ...<|message|>{...}<|call|>
  CALL_COLON,    // <|tool_call>call:N{k:<|"|>text<|"|>,n:3}<tool_call|>
};

struct OutputFormat {
  ToolSyntax tools = ToolSyntax::NONE;
  bool think_tags = false;  // reasoning between think_open and think_close
  std::string think_open = "<think>", think_close = "</think>";
};

struct ParserOptions {
  bool parse_tools = true;            // false: tool syntax is content (no tools in the request)
  bool reasoning_open = false;        // the prompt ends inside think_open (the template opened it)
  nlohmann::ordered_json tools;       // the request's tools (TAG_XML reads parameter types)
};

std::unique_ptr<OutputParser> make_output_parser(const OutputFormat& format, const ParserOptions& opts);

/// The OpenAI message the events make: {"role":"assistant","content":…,"reasoning_content":…,
/// "tool_calls":[{"id","type":"function","function":{"name","arguments"}}]}; content null when
/// empty and there are tool calls; ids from `ids` (one per call, in order).
nlohmann::ordered_json build_message(const OutputEvents& events, const std::vector<std::string>& ids);

}  // namespace oxyd::chat
