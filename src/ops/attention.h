// Op front ends for paged attention and the KV-cache write (vLLM v1 layout, docs/architecture.md §3;
// semantics in backend/op_params.h AttentionParams). On the CPU the batch metadata
// (query_start_loc, seq_lens, block_table, slot_mapping) is validated too, so a bad block id
// or slot is an Error, never an out-of-bounds read or write.
#pragma once

#include "backend/op_params.h"
#include "core/tensor.h"

namespace oxyd::ops {

using backend::AttentionParams;

/// Writes p.out [num_tokens, num_heads, head_dim] from p.q and the paged caches.
void paged_attention(const AttentionParams& p);

/// key, value [num_tokens, num_kv_heads, head_dim] F32 → k_cache, v_cache
/// [num_blocks, block_size, num_kv_heads, head_dim] (F32 | F16 | BF16) at slot_mapping
/// [num_tokens] I32 (slot = block · block_size + offset; negative = skip). kv_format says what
/// the caches hold: its dtype, or Q4 / Q3 / Q2: U8 [..., kv_format_row_bytes] with each head vector quantized.
void reshape_and_cache(const Tensor& key, const Tensor& value, const Tensor& k_cache,
                       const Tensor& v_cache, const Tensor& slot_mapping, KvFormat kv_format);

}  // namespace oxyd::ops
