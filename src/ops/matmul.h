// ops::matmul — the device-agnostic front end of y = x·wᵀ (a Linear without bias). Checks
// shapes, dtypes and devices once with clear errors, then dispatches to the backend of the
// tensors' device. Weight formats: see backend/cpu/matmul.h.
// Backend lookup: ops/dispatch.h.
#pragma once

#include <initializer_list>

#include "backend/backend.h"
#include "core/tensor.h"

namespace oxyd::ops {

/// y [m, n] F32 = x [m, k] F32 · w [n, k]ᵀ. x and y may have leading dims that flatten to m.
/// Throws Error(INVALID_ARGUMENT) on a shape/dtype mismatch, Error(UNSUPPORTED) for a weight
/// dtype or device without a kernel.
void matmul(const Tensor& x, const Tensor& w, const Tensor& y);

/// matmul(x, w_i, y_i) for every pair, each checked as matmul checks it, all of one x (no y_i may
/// overlap x): the backend prepares x once (backend.h matmul_same_x). Results equal matmul's.
void matmul_same_x(const Tensor& x, std::initializer_list<backend::MatmulOut> outs);

/// Weight preparation (packed copies) and the activation scratch a shape needs are the backend's:
/// device_backend(d).wants_packed / pack / matmul_scratch_bytes ... (ops/dispatch.h, backend/backend.h).
}  // namespace oxyd::ops
