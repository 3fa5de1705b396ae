// StopChecker: stop strings of any length over streamed text. Text that could still be the start
// of a stop string is held back, so a stop string never reaches the client, also when it spans
// tokens and stream chunks. Output = the text cut before the stop string that completes first
// (ties: the longer one), independent of how the text was split into chunks.
// Works on bytes; the detokenizer feeds whole UTF-8 characters, so cuts fall on characters.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace oxyd::engine {

class StopChecker {
 public:
  /// include_stop: the output ends with the matched stop string instead of before it.
  explicit StopChecker(std::vector<std::string> stop_strings, bool include_stop = false);

  /// Appends newly decoded text; returns the text now safe to send. After a stop string is found
  /// stopped() is true and later calls return "".
  std::string append(std::string_view delta);
  /// Generation ended for another reason (EOS, length): the held-back tail is released.
  std::string flush();
  /// Appends text no stop string may end in (vLLM's min_tokens): all of it is safe to send, and
  /// later searches start after it.
  std::string append_unchecked(std::string_view delta);
  bool stopped() const { return stopped_; }
  /// The stop string that ended generation (empty if none).
  const std::string& matched() const { return matched_; }

 private:
  std::vector<std::string> stops_;
  std::string text_;     // everything appended so far
  size_t emitted_ = 0;   // bytes of text_ already returned
  bool stopped_ = false;
  bool include_stop_ = false;
  std::string matched_;
};

}  // namespace oxyd::engine
