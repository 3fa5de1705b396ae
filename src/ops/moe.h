// Op front ends of mixture-of-experts routing (backend/op_params.h RouterParams) and of the
// weighted combine of the selected experts' outputs. Validate once, then dispatch.
#pragma once

#include "backend/op_params.h"
#include "core/tensor.h"

namespace oxyd::ops {

/// logits [T, E] F32 → ids [T, k] I32 (best first; equal logits: lower expert index first) and
/// weights [T, k] F32, k = p.top_k in [1, E].
void moe_route(const Tensor& logits, const backend::RouterParams& p, const Tensor& ids, const Tensor& weights);

/// y[t] = Σ_{j<k} weights[t, j] · expert_out[rows[t, j]], summed in j order (batch-invariant).
/// expert_out [N, H] F32, rows [T, k] I32 in [0, N), weights [T, k] F32, y [T, H] F32, y must not
/// alias expert_out.
void moe_combine(const Tensor& expert_out, const Tensor& rows, const Tensor& weights, const Tensor& y);

/// Groups the N = T·k (token, rank) pairs of ids [T, k] I32 (values in [0, E)) by expert, tokens
/// ascending within an expert: offsets [E + 1] I32 (expert e's rows are [offsets[e], offsets[e+1])),
/// gather [N] I32 (the token of each grouped row), rows [T, k] I32 (the grouped row of pair (t, j)).
void moe_group(const Tensor& ids, const Tensor& offsets, const Tensor& gather, const Tensor& rows);

/// The expert MLPs of one MoE layer over grouped rows (backend/op_params.h MoeExpertsParams).
void moe_experts(const backend::MoeExpertsParams& p);

}  // namespace oxyd::ops
