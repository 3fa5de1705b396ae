// CPU RoPE: same contract as backend/reference/rope.h. Per token the cos/sin table is built once
// (angles in float64, like the reference) and every head is rotated with vector code; threaded
// over tokens.
#pragma once

#include "backend/op_params.h"
#include "core/tensor.h"

namespace oxyd::backend::cpu {

/// x [num_tokens, num_heads, head_dim] F32; positions [num_tokens] I32; inv_freq [rot_dim/2] F32;
/// freq_factors [rot_dim/2] F32 or nullptr; y same shape as x, may alias x. head_dim ≤ 1024.
void rope(const Tensor& x, const Tensor& positions, const Tensor& inv_freq,
          const Tensor* freq_factors, RopeStyle style, float attention_factor, const Tensor& y);

/// Same contract as reference::attn_temperature: one float factor per token (from float64), then
/// a vectorisable multiply of the token's heads.
void attn_temperature(const Tensor& x, const Tensor& positions, float beta, int64_t floor_scale, const Tensor& y);

}  // namespace oxyd::backend::cpu
