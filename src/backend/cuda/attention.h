// CUDA paged attention and KV-cache write, same contract as backend/reference/attention.h
// (AttentionParams in backend/op_params.h; every tensor in device memory), plain F32 / F16 / BF16
// caches (plain kv_format; a quantized cache throws UNSUPPORTED). Flash-decoding: each
// (query token, head) splits its visible key range [max(0, pos − window + 1), pos] over several
// CTAs; each CTA's warps run an online softmax over their keys straight from the block table
// and the CTA writes its (max, sum, unnormalized output) partial; a combine kernel merges the
// partials with the sink logit and normalizes. GQA: heads of a group read the same K/V rows,
// which the L2 serves after the first. Prefill queries take the same path, one CTA row per
// query token (correct for any query_len; not a tiled prefill kernel).
#pragma once

#include "backend/cuda/device.h"
#include "backend/cuda/workspace.h"
#include "backend/op_params.h"
#include "core/tensor.h"

namespace oxyd::backend::cuda {

/// Writes p.out. head_dim ≤ 256. `ws` holds the split partials; queued on `stream`.
/// max_splits caps the key-range splits per query head (0: chosen from the shape; tests pin it).
void paged_attention(const AttentionParams& p, Workspace& ws, const Stream& stream,
                     int max_splits = 0);

/// key, value [num_tokens, num_kv_heads, head_dim] F32 → caches F32 | F16 | BF16 [num_blocks,
/// block_size, num_kv_heads, head_dim] at slot_mapping [num_tokens] I32 (negative: skip).
void reshape_and_cache(const Tensor& key, const Tensor& value, const Tensor& k_cache,
                       const Tensor& v_cache, const Tensor& slot_mapping, const Stream& stream);

}  // namespace oxyd::backend::cuda
