// Reference elementwise ops on F32 tensors: add, mul (b the same shape as a, or a vector [cols]
// broadcast over every row), scale, and logit soft-capping cap·tanh(x/cap). Float64 math.
#pragma once

#include "core/tensor.h"

namespace oxyd::backend::reference {

/// a [rows, n]; b [rows, n] or [n] (broadcast over rows); y [rows, n]; y may alias a or b.
void add(const Tensor& a, const Tensor& b, const Tensor& y);
/// a [rows, n]; b [rows, n] or [n] (broadcast over rows); y [rows, n]; y may alias a or b.
void mul(const Tensor& a, const Tensor& b, const Tensor& y);
/// y = s · x; any shape; y may alias x.
void scale(const Tensor& x, float s, const Tensor& y);
/// y = cap · tanh(x / cap), cap > 0; any shape; y may alias x.
void softcap(const Tensor& x, float cap, const Tensor& y);
/// y = min(max(x, -limit), limit).
void clamp(const Tensor& x, float limit, const Tensor& y);

}  // namespace oxyd::backend::reference
