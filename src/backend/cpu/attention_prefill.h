// What the CPU attention dispatcher (attention.cc) and the prefill tile kernel
// (attention_prefill_impl.h) share: a prefill request's keys prepared once per call for all its tiles.
#pragma once

#include <cstdint>

namespace oxyd::backend::cpu {

/// Keys per chunk: a tile meets its key range chunk by chunk, chunk c holding keys [c·kPrefillChunk,
/// (c + 1)·kPrefillChunk) of its request.
inline constexpr int64_t kPrefillChunk = 64;

/// Keys per segment: every query row folds its online softmax state once per segment of keys
/// [s·kAttentionSegment, (s + 1)·kAttentionSegment) into its running total (attention_rows_impl.h's
/// merge_state, left to right), and split-K hands out whole segments, so a row's result is the same
/// whether its key range is split across threads or not, alone or batched.
inline constexpr int64_t kAttentionSegment = 4 * kPrefillChunk;

/// A request's chunks [first_chunk, first_chunk + chunks) for each KV head g, prepared once: unit
/// g·chunks + (c − first_chunk) at data + unit·unit_floats (layout: attention_prefill_impl.h's
/// prefill_prepare_chunk). data == nullptr: each tile prepares its own.
struct PrefillKeys {
  const float* data = nullptr;
  int64_t first_chunk = 0, chunks = 0, unit_floats = 0;
};

}  // namespace oxyd::backend::cpu
