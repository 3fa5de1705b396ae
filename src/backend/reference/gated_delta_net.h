// Reference Gated DeltaNet ops (Qwen3.5 linear_attention layers), plain loops in float64 over a
// flat batch of requests (query_start_loc) whose fixed-size states live in per-slot arrays
// (state_slots[r] = the slot of request r). The recurrent form only: the oracle the CPU chunked
// and recurrent kernels are tested against (and they all against transformers' torch functions).
#pragma once

#include "core/tensor.h"

namespace oxyd::backend::reference {

/// Depthwise causal conv over time, then SiLU: y[t, c] = silu(Σ_j weight[c, j] · in[t − K + 1 + j, c])
/// where `in` is the request's conv state (its K−1 previous inputs) followed by its tokens.
/// x [T, C] F32; weight [C, K] F32; conv_state [num_slots, K−1, C] F32, left holding each request's
/// last K−1 inputs; query_start_loc [R+1] I32; state_slots [R] I32; y [T, C] F32 (not x).
void causal_conv1d(const Tensor& x, const Tensor& weight, const Tensor& conv_state, const Tensor& query_start_loc,
                   const Tensor& state_slots, const Tensor& y);

/// g = −exp(A_log) · softplus(a + dt_bias), beta = sigmoid(b). a, b, g, beta [T, Hv] F32;
/// A_log, dt_bias [Hv] F32. g / beta may alias a / b.
void gdn_gating(const Tensor& a, const Tensor& b, const Tensor& A_log, const Tensor& dt_bias, const Tensor& g,
                const Tensor& beta);

/// The gated delta rule. qkv [T, 2·Hk·dk + Hv·dv] F32 (the conv output: q | k | v, heads
/// contiguous); q and k are L2-normalised per head (x · rsqrt(Σx² + 1e−6)) and q scaled by dk^−½;
/// value head j reads key head j / (Hv / Hk). g, beta [T, Hv]; state [num_slots, Hv, dk, dv] F32,
/// per token S ← exp(g)·S; S ← S + k (β (v − Sᵀk))ᵀ; out = Sᵀq. out [T, Hv, dv].
void gated_delta_rule(const Tensor& qkv, int64_t num_k_heads, const Tensor& g, const Tensor& beta,
                      const Tensor& state, const Tensor& query_start_loc, const Tensor& state_slots,
                      const Tensor& out);

}  // namespace oxyd::backend::reference
