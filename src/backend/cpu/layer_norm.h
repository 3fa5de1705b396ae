// CPU LayerNorm: same contract as backend/reference/layer_norm.h; two passes per row (mean,
// centred variance) in float32, vectorized per ISA and threaded over rows.
#pragma once

#include "core/tensor.h"

namespace oxyd::backend::cpu {

/// x [rows, n] F32; weight, bias [n] F32 or nullptr; y same shape as x, may alias x.
void layer_norm(const Tensor& x, const Tensor* weight, const Tensor* bias, float eps,
                const Tensor& y);

}  // namespace oxyd::backend::cpu
