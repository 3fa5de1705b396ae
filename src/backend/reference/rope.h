// Reference rotary position embedding, applied per token and head. rot_dim = 2·inv_freq.size();
// dims ≥ rot_dim pass through unchanged (partial rotary). Angle of pair i at position p:
// θ_i = p · inv_freq[i] / freq_factors[i]; the rotated pair is
// (x0·cos θ − x1·sin θ, x0·sin θ + x1·cos θ) · attention_factor. Angles in float64.
#pragma once

#include "backend/op_params.h"
#include "core/tensor.h"

namespace oxyd::backend::reference {

/// x [num_tokens, num_heads, head_dim] F32; positions [num_tokens] I32;
/// inv_freq [rot_dim/2] F32 with rot_dim ≤ head_dim, rot_dim even (ops::rope_frequencies);
/// freq_factors [rot_dim/2] F32 or nullptr (ggml rope_freqs / longrope factors: θ divided by it);
/// attention_factor scales cos and sin (yarn / longrope; 1 otherwise);
/// y same shape as x, F32, may alias x.
void rope(const Tensor& x, const Tensor& positions, const Tensor& inv_freq,
          const Tensor* freq_factors, RopeStyle style, float attention_factor, const Tensor& y);

/// Query temperature by position (llama 4 / Ministral 3 attention scaling): every head of token t
/// times 1 + beta·ln(1 + floor(positions[t] / floor_scale)), the factor in float64.
/// x [num_tokens, num_heads, head_dim] F32; positions [num_tokens] I32; floor_scale > 0;
/// y same shape, may alias x.
void attn_temperature(const Tensor& x, const Tensor& positions, float beta, int64_t floor_scale, const Tensor& y);

}  // namespace oxyd::backend::reference
