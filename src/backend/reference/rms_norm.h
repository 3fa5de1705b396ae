// Reference RMSNorm: y = x · (mean(x²) + eps)^-½ · w over the last dim, plain scalar code with
// float64 accumulation. The oracle for backend/cpu and backend/cuda; never optimized.
// Gemma's (1 + w) is baked into w at load time, so there is no offset here.
#pragma once

#include "core/tensor.h"

namespace oxyd::backend::reference {

/// x [rows, n] F32 (any rank, normalized over the last dim); weight [n] F32 or nullptr (no
/// scale, Gemma4 v_norm / router norm); y same shape as x, F32, may alias x.
void rms_norm(const Tensor& x, const Tensor* weight, float eps, const Tensor& y);

}  // namespace oxyd::backend::reference
