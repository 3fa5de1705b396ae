// Reference mixture-of-experts routing and combine (contracts: backend/op_params.h RouterParams),
// plain scalar code in float64: the oracle backend/cpu/moe.cc is tested against.
#pragma once

#include "backend/op_params.h"
#include "core/tensor.h"

namespace oxyd::backend::reference {

/// logits [T, E] F32 → ids [T, k] I32 (rank order), weights [T, k] F32.
void moe_route(const Tensor& logits, const RouterParams& p, const Tensor& ids, const Tensor& weights);
/// y[t] = Σ_{j<k} weights[t, j] · expert_out[rows[t, j]], summed in j order. expert_out [N, H] F32,
/// rows [T, k] I32 in [0, N), weights [T, k] F32, y [T, H] F32 (must not alias expert_out).
void moe_combine(const Tensor& expert_out, const Tensor& rows, const Tensor& weights, const Tensor& y);

}  // namespace oxyd::backend::reference
