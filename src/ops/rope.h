// Op front end for rotary position embeddings (NEOX / interleaved pairing, partial rotary,
// per-pair frequency factors). The frequencies come from rope_frequencies() (rope_scaling.h).
#pragma once

#include "backend/op_params.h"
#include "core/tensor.h"

namespace oxyd::ops {

using backend::RopeStyle;

/// Rotates the first rot_dim = 2·inv_freq.dim(0) dims of every head of x; the rest pass
/// through. θ_i = positions[t] · inv_freq[i] / freq_factors[i]; cos and sin are multiplied by
/// attention_factor. x [num_tokens, num_heads, head_dim] F32 (head_dim ≤ 1024); positions
/// [num_tokens] I32; inv_freq [rot_dim/2] F32; freq_factors [rot_dim/2] F32 or nullptr;
/// y same shape as x, may alias x.
void rope(const Tensor& x, const Tensor& positions, const Tensor& inv_freq,
          const Tensor* freq_factors, RopeStyle style, float attention_factor, const Tensor& y);

/// Query temperature by position (transformers' get_llama_4_attn_scale, llama.cpp's attn_temp):
/// y[t] = x[t] · (1 + beta · ln(1 + floor(positions[t] / floor_scale))). x [num_tokens,
/// num_heads, head_dim] F32; positions [num_tokens] I32 (≥ 0); floor_scale > 0; y same shape as
/// x, may alias x.
void attn_temperature(const Tensor& x, const Tensor& positions, float beta, int64_t floor_scale, const Tensor& y);

}  // namespace oxyd::ops
