// One chat choice's generated text → what OpenAI sends for it, through the model's output parser
// (chat/output_parser.h): streamed deltas (content, reasoning_content, tool_calls[i] with id, type
// and name once, then argument fragments) and, accumulated, the whole message. Tool-call ids are
// made here ("call_" + 24 alphanumerics; 9 alphanumerics for the [TOOL_CALLS] syntaxes, whose
// templates require that length when the call comes back in a later turn).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "chat/output_parser.h"
#include "server/protocol.h"

namespace oxyd::server {

class ChoiceOutput {
 public:
  ChoiceOutput(std::unique_ptr<chat::OutputParser> parser, bool short_ids)
      : parser_(std::move(parser)), short_ids_(short_ids) {}

  /// The deltas one generated chunk makes (its `index` left 0); with `finished` the parser's
  /// held text too. num_tokens: the chunk's tokens, counted as reasoning tokens when the chunk
  /// only continued reasoning (a chunk with no decided text counts as the last text did).
  std::vector<protocol::ChatDelta> feed(const std::string& text, size_t num_tokens, bool finished);

  const std::string& content() const { return content_; }
  const std::string& reasoning() const { return reasoning_; }
  /// null or the calls so far, each {"id","type":"function","function":{"name","arguments"}}.
  const protocol::json& tool_calls() const { return tool_calls_; }
  int64_t reasoning_tokens() const { return reasoning_tokens_; }

 private:
  std::unique_ptr<chat::OutputParser> parser_;
  bool short_ids_;
  std::string content_, reasoning_;
  protocol::json tool_calls_;
  int64_t reasoning_tokens_ = 0;
  bool last_reasoning_ = false;
};

/// "stop" becomes "tool_calls" when the choice made calls (OpenAI's finish_reason).
std::string chat_finish_reason(const std::string& reason, const ChoiceOutput& out);

}  // namespace oxyd::server
