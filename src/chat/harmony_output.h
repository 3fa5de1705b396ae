// The final-channel text of an assistant turn in OpenAI's harmony format (gpt-oss), taken from the
// generated text as it streams (decoded with special tokens kept). A turn is messages
// `<|channel|>NAME<|message|>TEXT<|end|>` (the first one's `<|start|>assistant` is in the prompt),
// the last one ending in <|return|> or <|call|>. Only TEXT of the `final` channel (or of a message
// with no channel) is passed through; headers, markers and the analysis / commentary channels are
// dropped. Not a parser of reasoning_content or tool calls (issue 25): just what plain chat shows.
#pragma once

#include <string>
#include <string_view>

namespace oxyd::chat {

class HarmonyFinalText {
 public:
  /// Feeds the next piece of generated text; returns the final-channel text it completes. A
  /// piece that may be the start of a marker (`<|cha`) is held until the next call.
  std::string feed(std::string_view text);
  /// At the end of generation: the held text, or, when the model never opened a message (it did
  /// not speak harmony), everything it generated, so nothing is silently lost.
  std::string finish();

 private:
  void marker(std::string_view name);
  void plain(std::string_view text, std::string& out);

  std::string held_;        // a possible marker prefix, from "<|"
  std::string header_;      // text since <|start|> / the turn start, up to <|message|>
  std::string raw_;         // everything fed, for finish() when no message was opened
  bool in_header_ = true;   // the prompt ends inside a header (`<|start|>assistant`)
  bool shown_ = false;      // the current message's channel is final (or none)
  bool saw_message_ = false;
};

}  // namespace oxyd::chat
