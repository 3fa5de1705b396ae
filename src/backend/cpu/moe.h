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

}  // namespace oxyd::backend::cpu
