// CPU paged attention and KV-cache write: same contract as backend/reference/attention.h.
// Flash-style: per (request, kv head, query tile) an online softmax over 64-key chunks of the
// block table, all query heads of a GQA group sharing each K/V block read; float32 math.
// Work items are handed out dynamically over the global thread pool. A quantized cache is read
// in the rotated space of core/kv_quant.h: q is rotated once per head, each key/value block is
// decoded to ‖x‖·level rows (no inverse transform per key), and the output is un-rotated once.
#pragma once

#include <cstdint>

#include "backend/op_params.h"
#include "core/tensor.h"

namespace oxyd::backend::cpu {

/// Writes p.out [num_tokens, num_heads, head_dim] (see AttentionParams).
void paged_attention(const AttentionParams& p);

/// Prefill tiles of one call share their request's keys prepared once (transposed, converted) when
/// they take at most this many bytes (default 64 MiB); beyond it each tile prepares its own. Returns
/// the previous limit: tests set 0 to cover the per-tile path.
int64_t set_prefill_shared_keys_limit(int64_t bytes);

/// key, value [num_tokens, num_kv_heads, head_dim] F32 → caches at slot_mapping [num_tokens] I32
/// (negative = skip); caches F32 | F16 | BF16 [num_blocks, block_size, num_kv_heads, head_dim],
/// or with a quantized kv_format U8 [..., kv_format_row_bytes(kv_format, head_dim)] (core/kv_quant.h).
void reshape_and_cache(const Tensor& key, const Tensor& value, const Tensor& k_cache,
                       const Tensor& v_cache, const Tensor& slot_mapping, KvFormat kv_format);

}  // namespace oxyd::backend::cpu
