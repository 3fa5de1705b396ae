// Op front end for row softmax (with an optional scale on the inputs).
#pragma once

#include "core/tensor.h"

namespace oxyd::ops {

/// y = softmax(scale · x) over the last dim. x [..., n] F32; y same shape, may alias x.
void softmax(const Tensor& x, const Tensor& y, float scale = 1.0f);

}  // namespace oxyd::ops
