// CUDA row softmax of scale·x over the last dim, fp32 math: one read for an online
// (max, sum) per thread, a warp-shuffle merge of those pairs, one read to write y. Mirrors
// backend/reference/softmax.h. A row that is all -inf yields NaN, as the reference does.
#pragma once

#include "backend/cuda/device.h"
#include "core/tensor.h"

namespace oxyd::backend::cuda {

/// x [rows, n] F32 | BF16 | F16; y same shape and dtype, may alias x. y = softmax(scale · x)
/// per row. Queued on `stream`.
void softmax(const Tensor& x, float scale, const Tensor& y, const Stream& stream);

}  // namespace oxyd::backend::cuda
