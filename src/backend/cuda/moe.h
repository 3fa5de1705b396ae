// CUDA mixture-of-experts bookkeeping, same contracts as backend/cpu/moe.h (RouterParams in
// backend/op_params.h): moe_route (top-k by logit, lowest expert first on ties, weights in float64
// as the reference computes them), moe_group (pairs grouped by expert, tokens ascending within an
// expert) and moe_combine (y[t] = Σ_j w[t, j]·expert_out[rows[t, j]], in rank order). Every tensor
// in device memory. moe_group runs in one thread block (a counting sort with the order of a
// serial scan); the expert MLPs themselves go through Backend::moe_experts' default.
#pragma once

#include "backend/cuda/device.h"
#include "backend/op_params.h"
#include "core/tensor.h"

namespace oxyd::backend::cuda {

/// logits [T, E] F32 → ids [T, k] I32, weights [T, k] F32. E ≤ 1024.
void moe_route(const Tensor& logits, const RouterParams& p, const Tensor& ids, const Tensor& weights,
               const Stream& stream);
/// expert_out [N, H], rows [T, k] I32, weights [T, k] F32 → y [T, H] F32.
void moe_combine(const Tensor& expert_out, const Tensor& rows, const Tensor& weights, const Tensor& y,
                 const Stream& stream);
/// ids [T, k] I32 → offsets [E + 1], gather [T·k] (the token of each grouped row), rows [T, k]
/// (the grouped row of each pair).
void moe_group(const Tensor& ids, const Tensor& offsets, const Tensor& gather, const Tensor& rows,
               const Stream& stream);

}  // namespace oxyd::backend::cuda
