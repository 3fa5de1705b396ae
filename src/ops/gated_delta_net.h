// Op front ends for Gated DeltaNet layers (Qwen3.5 linear_attention): the causal short
// convolution with its per-request conv state, the decay / beta gating, and the gated delta rule
// with its per-request recurrent state. Requests of a flat batch are rows [query_start_loc[r],
// query_start_loc[r+1]); request r's states are slot state_slots[r] of the state arrays, which the
// ops read and leave updated (a new request's slot must be zeroed first). The layer's output norm
// is rms_norm then glu(SILU, z, ·) (ops/rms_norm.h, ops/activation.h). Contracts in
// backend/reference/gated_delta_net.h.
#pragma once

#include "core/tensor.h"

namespace oxyd::ops {

/// y = silu(depthwise causal conv of [conv state | x]). x [T, C] F32; weight [C, K] F32 (K ≥ 2);
/// conv_state [num_slots, K−1, C] F32; query_start_loc [R+1] I32; state_slots [R] I32 (distinct,
/// < num_slots); y [T, C] F32, not aliasing x.
void causal_conv1d(const Tensor& x, const Tensor& weight, const Tensor& conv_state, const Tensor& query_start_loc,
                   const Tensor& state_slots, const Tensor& y);

/// g = −exp(A_log) · softplus(a + dt_bias), beta = sigmoid(b). a, b, g, beta [T, Hv] F32;
/// A_log, dt_bias [Hv] F32; g / beta may alias a / b.
void gdn_gating(const Tensor& a, const Tensor& b, const Tensor& A_log, const Tensor& dt_bias, const Tensor& g,
                const Tensor& beta);

/// The gated delta rule over qkv [T, 2·Hk·dk + Hv·dv] (q | k | v, heads contiguous), with q and k
/// L2-normalised and q scaled by dk^−½ inside; g, beta [T, Hv]; state [num_slots, Hv, dk, dv] F32;
/// out [T, Hv, dv] F32. Hv a multiple of num_k_heads.
void gated_delta_rule(const Tensor& qkv, int64_t num_k_heads, const Tensor& g, const Tensor& beta,
                      const Tensor& state, const Tensor& query_start_loc, const Tensor& state_slots,
                      const Tensor& out);

}  // namespace oxyd::ops
