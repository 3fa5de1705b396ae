// Op front ends for elementwise arithmetic: add / mul (b the same shape as a, or a vector over
// a's last dim broadcast over rows), scale, and logit soft-capping cap·tanh(x/cap).
#pragma once

#include "core/tensor.h"

namespace oxyd::ops {

/// a [..., n] F32; b same shape or [n]; y same shape as a, may alias a or b.
void add(const Tensor& a, const Tensor& b, const Tensor& y);
/// a [..., n] F32; b same shape, [n], or (a 2-D [rows, n]) a column [rows, 1] scaling each row;
/// y same shape as a, may alias a or b.
void mul(const Tensor& a, const Tensor& b, const Tensor& y);
/// y = s · x; x any shape F32; y same shape, may alias x.
void scale(const Tensor& x, float s, const Tensor& y);
/// y = cap · tanh(x / cap) (Gemma 2 attention / final logit soft-cap), cap > 0.
void softcap(const Tensor& x, float cap, const Tensor& y);
/// Copies x (any dtype, contiguous, on any device) into host memory dst of x.nbytes() bytes.
void copy_to_host(const Tensor& x, void* dst);
/// Copies dst.nbytes() bytes of host memory src into dst (contiguous, on any device).
void copy_from_host(const void* src, const Tensor& dst);
/// y = min(max(x, -limit), limit) (OLMoE's clip_qkv), limit > 0; y same shape, may alias x.
void clamp(const Tensor& x, float limit, const Tensor& y);
/// y = 0 (F32, any shape, contiguous): on the tensor's device.
void zero(const Tensor& y);
/// ids I32 [rows] = per row of x F32 [rows, n], the lowest id of the largest of its first `cols`
/// values (1 ≤ cols ≤ n; NaN never the largest, 0 for a row without a number): the device's
/// greedy sampling (backend.h argmax_rows).
void argmax_rows(const Tensor& x, int64_t cols, const Tensor& ids);

}  // namespace oxyd::ops
