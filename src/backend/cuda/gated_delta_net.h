// CUDA Gated DeltaNet ops, the contracts of backend/cpu/gated_delta_net.h (shapes: qkv [T, 2·Hk·dk +
// Hv·dv], g / beta [T, Hv], state [num_slots, Hv, dk, dv], conv_state [num_slots, K−1, C], out
// [T, Hv, dv]; query_start_loc / state_slots I32 in device memory). gated_delta_rule runs the
// recurrent form for every query length (the CPU switches to the chunked form for long prompts:
// the same function, rounded differently): one block per (request, value head), one thread per
// column of the state, which it alone reads and writes.
#pragma once

#include "backend/cuda/device.h"
#include "core/tensor.h"

namespace oxyd::backend::cuda {

/// Depthwise causal conv (kernel K ≤ 8) + SiLU over each request's tokens, continuing from and
/// updating its conv_state slot. x, y [T, C]; weight [C, K].
void causal_conv1d(const Tensor& x, const Tensor& weight, const Tensor& conv_state, const Tensor& query_start_loc,
                   const Tensor& state_slots, const Tensor& y, const Stream& stream);
/// g = −exp(A_log[h])·softplus(a + dt_bias[h]), beta = sigmoid(b); a, b, g, beta [T, Hv].
void gdn_gating(const Tensor& a, const Tensor& b, const Tensor& A_log, const Tensor& dt_bias, const Tensor& g,
                const Tensor& beta, const Stream& stream);
/// The gated delta rule over each request's tokens from its state slot (dk, dv ≤ 1024).
void gated_delta_rule(const Tensor& qkv, int64_t num_k_heads, const Tensor& g, const Tensor& beta,
                      const Tensor& state, const Tensor& query_start_loc, const Tensor& state_slots,
                      const Tensor& out, const Stream& stream);

}  // namespace oxyd::backend::cuda
