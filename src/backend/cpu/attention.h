// CPU paged attention and KV-cache write: same contract as backend/reference/attention.h.
// Flash-style: per (request, kv head, query tile) an online softmax over the key blocks of the
// block table, all query heads of a GQA group sharing each K/V block read; float32 math.
// Work items are handed out dynamically over the global thread pool.
#pragma once

#include "backend/op_params.h"
#include "core/tensor.h"

namespace oxyd::backend::cpu {

/// Writes p.out [num_tokens, num_heads, head_dim] (see AttentionParams).
void paged_attention(const AttentionParams& p);

/// key, value [num_tokens, num_kv_heads, head_dim] F32 → caches at slot_mapping [num_tokens] I32
/// (negative = skip); caches F32 | F16 | BF16 [num_blocks, block_size, num_kv_heads, head_dim].
void reshape_and_cache(const Tensor& key, const Tensor& value, const Tensor& k_cache,
                       const Tensor& v_cache, const Tensor& slot_mapping);

}  // namespace oxyd::backend::cpu
