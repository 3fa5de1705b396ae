// Gated DeltaNet block of one linear_attention layer (Qwen3.5) over the flat batch: in_proj_qkv →
// causal conv (per-request conv state) → q/k/v; in_proj_a / in_proj_b → decay g and beta; the gated
// delta rule (per-request recurrent state); per-head RMSNorm gated by silu(in_proj_z); out_proj.
// The states are slots of the KvCache (model/kv_cache.h); request r uses slot state_slots[r].
#pragma once

#include "core/tensor.h"
#include "model/weights.h"
#include "model/workspace.h"

namespace oxyd::model::layers {

struct LinearAttentionSpec {
  int64_t num_k_heads = 0, num_v_heads = 0, head_k_dim = 0, head_v_dim = 0, conv_kernel = 0;
  float rms_norm_eps = 1e-6f;
  int64_t conv_dim() const { return 2 * num_k_heads * head_k_dim + num_v_heads * head_v_dim; }
};

struct LinearAttentionWorkspace {
  Workspace mixed, qkv, z, a, b, core;
};

/// h [T, H] (normed input) → out [T, H] (may alias h). conv_state [num_slots, K−1, conv_dim] and
/// state [num_slots, Hv, dk, dv] are read and left updated for the requests of the batch.
void gated_delta_net(const LayerWeights& w, const LinearAttentionSpec& spec, const Tensor& query_start_loc,
                     const Tensor& state_slots, const Tensor& conv_state, const Tensor& state, const Tensor& h,
                     LinearAttentionWorkspace& ws, const Tensor& out);

}  // namespace oxyd::model::layers
