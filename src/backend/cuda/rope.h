// CUDA rotary position embedding, mirroring backend/reference/rope.h: NEOX (i, i + rot/2) or
// INTERLEAVED (2i, 2i + 1) pairs over the first rot_dim = 2·inv_freq.size() dims of each head,
// the rest copied. Angles θ_i = p·inv_freq[i]/freq_factors[i] are formed and reduced mod 2π in
// float64 (once per token and pair, shared by all heads), so long positions lose no accuracy.
#pragma once

#include "backend/cuda/device.h"
#include "backend/op_params.h"
#include "core/tensor.h"

namespace oxyd::backend::cuda {

/// x [num_tokens, num_heads, head_dim] F32 | BF16 | F16; positions [num_tokens] I32;
/// inv_freq [rot_dim/2] F32, rot_dim ≤ head_dim; freq_factors [rot_dim/2] F32 or nullptr;
/// attention_factor scales cos and sin; y same shape and dtype as x, may alias x. All tensors
/// in device memory; queued on `stream`.
void rope(const Tensor& x, const Tensor& positions, const Tensor& inv_freq,
          const Tensor* freq_factors, RopeStyle style, float attention_factor, const Tensor& y,
          const Stream& stream);

/// x, y [num_tokens, num_heads, head_dim] F32 (y may alias x); positions [num_tokens] I32:
/// y = x·(1 + beta·log(1 + floor(pos / floor_scale))) per token (Llama 4's attn_temperature).
void attn_temperature(const Tensor& x, const Tensor& positions, float beta, int64_t floor_scale,
                      const Tensor& y, const Stream& stream);

}  // namespace oxyd::backend::cuda
