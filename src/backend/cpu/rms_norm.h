// CPU RMSNorm: same contract as backend/reference/rms_norm.h, vectorized (scalar / AVX2 /
// AVX-512 picked at run time) and threaded over rows. Sums in float32 with 4 accumulators.
#pragma once

#include "core/tensor.h"

namespace oxyd::backend::cpu {

/// x [rows, n] F32; weight [n] F32 or nullptr; y same shape as x, may alias x.
void rms_norm(const Tensor& x, const Tensor* weight, float eps, const Tensor& y);

}  // namespace oxyd::backend::cpu
