// StreamDecoder: incremental detokenization for streaming output. Each step re-decodes a short
// window (the tokens emitted last step as context + the new ones) and emits only what the window
// added, so decoders that look at neighbours (SentencePiece ▁ / Strip, WordPiece ##) never drop
// or double a space, and text ending in an incomplete UTF-8 sequence (U+FFFD) is held back until
// the next token completes it. Invariant: concat(step(...)..., flush()) == decode(all ids).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "tokenizer/tokenizer.h"

namespace oxyd::tokenizer {

class StreamDecoder {
 public:
  /// `tok` must outlive the decoder. Not thread-safe (one per request).
  explicit StreamDecoder(const Tokenizer& tok, bool skip_special = false)
      : tok_(tok), skip_special_(skip_special) {}
  /// Seeds the window with already-shown tokens (the tail of the prompt) without emitting them,
  /// so the first generated token decodes in context: a SentencePiece decoder that strips the
  /// leading space of a whole text would otherwise drop the space of the first word (HF/vLLM
  /// decode generated text after the prompt the same way). Call before the first step().
  void prime(std::span<const int32_t> context);
  /// Adds one token; returns the newly final text (possibly empty).
  std::string step(int32_t id);
  /// Returns everything still held back (e.g. a dangling partial character, as U+FFFD).
  std::string flush();
  /// All ids seen so far (primed context included).
  const std::vector<int32_t>& ids() const { return ids_; }

 private:
  std::string emit_if_ready(bool final);
  const Tokenizer& tok_;
  bool skip_special_;
  std::vector<int32_t> ids_;
  size_t prefix_idx_ = 0;  // start of the context window
  size_t read_idx_ = 0;    // tokens before this index have been emitted
};

}  // namespace oxyd::tokenizer
