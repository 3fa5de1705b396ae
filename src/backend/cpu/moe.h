// CPU mixture-of-experts routing and combine: same contracts as backend/reference/moe.h.
// Routing is O(T·E·k) scalar work per layer, negligible beside the expert matmuls, so it is the
// reference's float64 code (one definition of the selection rule and its tie-breaking). The
// combine runs in float over rows, threaded; each output row is summed in rank order j = 0..k-1,
// whatever the batch, so a token's result does not depend on its neighbours (batch invariance).
#pragma once

#include "backend/op_params.h"
#include "core/tensor.h"

namespace oxyd::backend::cpu {

void moe_route(const Tensor& logits, const RouterParams& p, const Tensor& ids, const Tensor& weights);
void moe_combine(const Tensor& expert_out, const Tensor& rows, const Tensor& weights, const Tensor& y);
/// ops/moe.h moe_group: a counting sort of the pairs by expert (O(T·k + E), one thread).
void moe_group(const Tensor& ids, const Tensor& offsets, const Tensor& gather, const Tensor& rows);
/// ops/moe.h moe_experts: the gate and up projections of every expert in one grouped matmul
/// (matmul.h matmul_grouped), the activation over all rows at once, then the down projections in
/// a second grouped matmul: two pool dispatches per layer instead of three per selected expert.
void moe_experts(const MoeExpertsParams& p);

}  // namespace oxyd::backend::cpu
