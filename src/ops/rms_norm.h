// Op front ends for the normalizations: RMSNorm and LayerNorm. Check shapes/dtypes once, then
// dispatch to the backend of the tensors' device (ops/dispatch.h).
#pragma once

#include "core/tensor.h"

namespace oxyd::ops {

/// y = x · (mean(x²) + eps)^-½ · weight over the last dim, in fp32.
/// x [..., n] F32; weight [n] F32 or nullptr (no scale); y same shape as x, may alias x.
void rms_norm(const Tensor& x, const Tensor* weight, float eps, const Tensor& y);

/// y = (x − mean) · (var + eps)^-½ · weight + bias over the last dim (biased variance).
/// x [..., n] F32; weight, bias [n] F32 or nullptr; y same shape as x, may alias x.
void layer_norm(const Tensor& x, const Tensor* weight, const Tensor* bias, float eps, const Tensor& y);

}  // namespace oxyd::ops
