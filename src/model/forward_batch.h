// ForwardBatch: the flat batch of one model step (docs/architecture.md §3, vLLM v1 layout). Prefill chunks
// and decode tokens of many requests are packed back to back; attention reads K/V through each
// request's block table and this step's K/V are written at slot_mapping first.
#pragma once

#include <cstdint>
#include <span>

namespace oxyd::model {

struct ForwardBatch {
  std::span<const int32_t> token_ids;        // [num_tokens]
  std::span<const int32_t> positions;        // [num_tokens] absolute position in its sequence
  std::span<const int32_t> query_start_loc;  // [num_reqs + 1]
  std::span<const int32_t> seq_lens;         // [num_reqs] cached tokens incl. this step's
  std::span<const int32_t> block_table;      // [num_reqs, max_blocks_per_req] row-major
  int64_t max_blocks_per_req = 0;
  std::span<const int32_t> slot_mapping;     // [num_tokens] block · block_size + offset
  std::span<const int32_t> logits_indices;   // [num_logits] token rows that need logits
  /// [num_reqs] recurrent-state slot of each request (models with linear_attention layers; empty
  /// otherwise). A request whose first row is position 0 starts from a zeroed state.
  std::span<const int32_t> state_slots;
  /// [num_reqs] the sequence length that picks each request's RoPE table where a model's rope
  /// depends on it (RopeTable::short_inv_freq): all the tokens the request knows (prompt and
  /// output so far), as transformers rotates a whole sequence with the table of its current
  /// length. Empty: every request uses the table of the longest context (llama.cpp's rule).
  std::span<const int32_t> rope_lens;
  int64_t num_tokens() const { return static_cast<int64_t>(token_ids.size()); }
  int64_t num_reqs() const { return static_cast<int64_t>(seq_lens.size()); }
};

}  // namespace oxyd::model
