// CUDA elementwise ops, mirroring backend/reference/elementwise.h: add, mul (b the same shape as
// a, or a vector [cols] broadcast over rows), scale, logit soft-capping cap·tanh(x/cap) and clamp to ±limit.
// fp32 math on F32 | BF16 | F16 storage; every tensor the same dtype, in device memory.
#pragma once

#include "backend/cuda/device.h"
#include "core/tensor.h"

namespace oxyd::backend::cuda {

/// a [rows, n]; b [rows, n] or [n] (broadcast over rows); y [rows, n]; y may alias a or b.
void add(const Tensor& a, const Tensor& b, const Tensor& y, const Stream& stream);
/// a [rows, n]; b [rows, n] or [n] (broadcast over rows); y [rows, n]; y may alias a or b.
void mul(const Tensor& a, const Tensor& b, const Tensor& y, const Stream& stream);
/// y = s · x; any shape; y may alias x.
void scale(const Tensor& x, float s, const Tensor& y, const Stream& stream);
/// y = cap · tanh(x / cap), cap > 0; any shape; y may alias x.
void softcap(const Tensor& x, float cap, const Tensor& y, const Stream& stream);

/// y = x clamped to [−limit, limit]; any shape; y may alias x.
void clamp(const Tensor& x, float limit, const Tensor& y, const Stream& stream);

}  // namespace oxyd::backend::cuda
