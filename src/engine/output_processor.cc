// OutputProcessor::process (see output_processor.h).
#include "engine/output_processor.h"

namespace oxyd::engine {

TextDelta OutputProcessor::process(const RequestOutput& out) {
  TextDelta d;
  if (finished_) return d;
  d.tokens = out.new_tokens;
  for (size_t i = 0; i < out.new_tokens.size(); ++i) {
    const bool stop_token =
        out.finish_reason == FinishReason::STOP && i + 1 == out.new_tokens.size() && !out.last_token_is_text;
    if (stop_token) break;  // EOS/EOT/stop id: no text of its own
    const std::string piece = decoder_.step(out.new_tokens[i].token);
    // Before min_tokens no stop string ends generation (vLLM): the text passes unchecked.
    d.text += ++num_tokens_ < min_tokens_ ? stops_.append_unchecked(piece) : stops_.append(piece);
    if (stops_.stopped()) break;
  }
  if (stops_.stopped()) {
    d.finish_reason = FinishReason::STOP;
    d.stop_string = stops_.matched();
    d.abort_engine = out.finish_reason == FinishReason::NONE;
  } else if (out.finish_reason != FinishReason::NONE) {
    d.text += stops_.append(decoder_.flush());
    if (stops_.stopped()) {
      d.finish_reason = FinishReason::STOP;
      d.stop_string = stops_.matched();
    } else {
      d.text += stops_.flush();
      d.finish_reason = out.finish_reason;
    }
  }
  finished_ = d.finish_reason != FinishReason::NONE;
  return d;
}

}  // namespace oxyd::engine
