// CPU elementwise ops: same contract as backend/reference/elementwise.h, float32 vector code,
// threaded over elements / rows.
#pragma once

#include "core/tensor.h"

namespace oxyd::backend::cpu {

/// a [rows, n]; b [rows, n] or [n] (broadcast over rows); y [rows, n]; y may alias a or b.
void add(const Tensor& a, const Tensor& b, const Tensor& y);
/// a [rows, n]; b [rows, n] or [n] (broadcast over rows); y [rows, n]; y may alias a or b.
void mul(const Tensor& a, const Tensor& b, const Tensor& y);
/// y = s · x; any shape; y may alias x.
void scale(const Tensor& x, float s, const Tensor& y);
/// y = cap · tanh(x / cap), cap > 0; any shape; y may alias x.
void softcap(const Tensor& x, float cap, const Tensor& y);
/// y = min(max(x, -limit), limit): a plain loop (a few q/k/v rows per layer; no SIMD copy).
void clamp(const Tensor& x, float limit, const Tensor& y);

}  // namespace oxyd::backend::cpu
