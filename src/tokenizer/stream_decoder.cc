// Window re-decoding, as Hugging Face's DecodeStream does.
#include "tokenizer/stream_decoder.h"

namespace oxyd::tokenizer {

std::string StreamDecoder::step(int32_t id) {
  ids_.push_back(id);
  return emit_if_ready(false);
}

void StreamDecoder::prime(std::span<const int32_t> context) {
  ids_.assign(context.begin(), context.end());
  prefix_idx_ = 0;
  read_idx_ = ids_.size();
}

std::string StreamDecoder::flush() { return emit_if_ready(true); }

std::string StreamDecoder::emit_if_ready(bool final) {
  if (read_idx_ >= ids_.size()) return "";
  std::vector<int32_t> window(ids_.begin() + static_cast<std::ptrdiff_t>(prefix_idx_), ids_.end());
  std::vector<int32_t> context(ids_.begin() + static_cast<std::ptrdiff_t>(prefix_idx_),
                               ids_.begin() + static_cast<std::ptrdiff_t>(read_idx_));
  const std::string prefix = context.empty() ? std::string() : tok_.decode(context, skip_special_);
  const std::string text = tok_.decode(window, skip_special_);
  static const std::string kReplacement = "\xEF\xBF\xBD";
  const bool incomplete = text.size() >= 3 && text.compare(text.size() - 3, 3, kReplacement) == 0;
  if (!final && (text.size() <= prefix.size() || incomplete)) return "";
  if (text.compare(0, prefix.size(), prefix) != 0) {
    // The new token rewrote the context (a decoder clean-up rule): wait for a stable prefix.
    if (!final) return "";
    return text.size() > prefix.size() ? text.substr(prefix.size()) : std::string();
  }
  std::string out = text.substr(prefix.size());
  prefix_idx_ = read_idx_;
  read_idx_ = ids_.size();
  return out;
}

}  // namespace oxyd::tokenizer
