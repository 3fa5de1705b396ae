// Reference paged attention and KV-cache write (layout and semantics: backend/op_params.h,
// AttentionParams). Plain scalar: per query row, every visible key's score in float64, a
// two-pass softmax, then the weighted sum of values. The oracle for cpu and cuda.
#pragma once

#include "backend/op_params.h"
#include "core/tensor.h"

namespace oxyd::backend::reference {

/// Writes p.out [num_tokens, num_heads, head_dim] from p.q and the paged K/V caches.
void paged_attention(const AttentionParams& p);

/// Writes the step's new keys and values into the caches: row t goes to slot slot_mapping[t]
/// (block slot / block_size, offset slot % block_size), converted to the cache dtype (round to
/// nearest even); a negative slot skips the token (padding).
/// key, value [num_tokens, num_kv_heads, head_dim] F32;
/// k_cache, v_cache [num_blocks, block_size, num_kv_heads, head_dim] F32 | F16 | BF16;
/// slot_mapping [num_tokens] I32. kv_format Q4 / Q3 / Q2: the caches are U8 [num_blocks, block_size,
/// num_kv_heads, kv_quant_row_bytes(head_dim, bits)] and each head vector is quantized
/// (core/kv_quant.h).
void reshape_and_cache(const Tensor& key, const Tensor& value, const Tensor& k_cache,
                       const Tensor& v_cache, const Tensor& slot_mapping, KvFormat kv_format);

}  // namespace oxyd::backend::reference
