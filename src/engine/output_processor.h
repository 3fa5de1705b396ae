// OutputProcessor: turns one request's RequestOutputs into text deltas: incremental
// detokenization (tokenizer::StreamDecoder), stop strings with hold-back (StopChecker), and the
// finish reason. A stop-token id (EOS/EOT) ends generation without its own text. When a stop
// string matches, `abort_engine` is set: the caller aborts the request in the engine.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "engine/engine_core.h"
#include "engine/stop_checker.h"
#include "tokenizer/stream_decoder.h"

namespace oxyd::engine {

struct OutputOptions {
  bool skip_special = true;       // control/special tokens add no text (vLLM's skip_special_tokens)
  int32_t min_tokens = 0;         // stop strings are not looked for before this many tokens (vLLM)
  bool include_stop_str = false;  // the matched stop string ends the text (include_stop_str_in_output)
};

struct TextDelta {
  std::string text;
  std::vector<sample::SampleResult> tokens;
  FinishReason finish_reason = FinishReason::NONE;
  std::string stop_string;  // the stop string that ended it, if any
  bool abort_engine = false;
};

class OutputProcessor {
 public:
  /// `prompt_tail`: the last few prompt ids, decoding context for the first generated tokens
  /// (see StreamDecoder::prime); their text is never emitted.
  OutputProcessor(const tokenizer::Tokenizer& tok, std::vector<std::string> stop_strings, OutputOptions opts = {},
                  std::span<const int32_t> prompt_tail = {})
      : decoder_(tok, opts.skip_special), stops_(std::move(stop_strings), opts.include_stop_str),
        min_tokens_(opts.min_tokens) {
    decoder_.prime(prompt_tail);
  }
  TextDelta process(const RequestOutput& out);
  bool finished() const { return finished_; }

 private:
  tokenizer::StreamDecoder decoder_;
  StopChecker stops_;
  int32_t min_tokens_ = 0;
  int32_t num_tokens_ = 0;  // output tokens seen
  bool finished_ = false;
};

}  // namespace oxyd::engine
