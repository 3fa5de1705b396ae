// Reference softmax over the last dim of each row, of scale·x, in float64.
#pragma once

#include "core/tensor.h"

namespace oxyd::backend::reference {

/// x [rows, n] F32; y same shape, F32, may alias x. y = softmax(scale · x) per row.
void softmax(const Tensor& x, float scale, const Tensor& y);

}  // namespace oxyd::backend::reference
