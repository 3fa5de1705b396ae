// CPU row softmax: same contract as backend/reference/softmax.h; float32 with a vector exp,
// three passes per row (max, exp + sum, normalize), threaded over rows.
#pragma once

#include "core/tensor.h"

namespace oxyd::backend::cpu {

/// x [rows, n] F32; y same shape, may alias x. y = softmax(scale · x) per row.
void softmax(const Tensor& x, float scale, const Tensor& y);

}  // namespace oxyd::backend::cpu
