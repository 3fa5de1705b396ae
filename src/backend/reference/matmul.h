// Reference matmul: the plain scalar oracle for backend/cpu and backend/cuda matmul kernels.
// Every weight row is dequantized with oxyd::dequantize_row, products are summed in double.
// Never optimize this file; it exists to be obviously right.
#pragma once

#include "core/tensor.h"

namespace oxyd::backend::reference {

/// y = x · wᵀ. x F32 [m, k] (any rank, rows flattened), w any dequantizable dtype [n, k],
/// y F32 [m, n] (preallocated). Accumulates in double, rounds once to float per output.
/// Throws Error(INVALID_ARGUMENT) on a shape/dtype/device mismatch, Error(UNSUPPORTED) for a
/// weight dtype without a decoder.
void matmul(const Tensor& x, const Tensor& w, const Tensor& y);

}  // namespace oxyd::backend::reference
