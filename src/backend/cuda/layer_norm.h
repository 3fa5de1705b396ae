// CUDA LayerNorm: y = (x − mean)·(var + eps)^-½·w + b over the last dim (biased variance, like
// torch.nn.LayerNorm), fp32 math, centred two-pass variance. Mirrors
// backend/reference/layer_norm.h (BERT-style embedders use it).
#pragma once

#include "backend/cuda/device.h"
#include "core/tensor.h"

namespace oxyd::backend::cuda {

/// x [rows, n] F32 | BF16 | F16; weight [n] F32 or nullptr (1); bias [n] F32 or nullptr (0);
/// y same shape and dtype as x, may alias x. Queued on `stream`.
void layer_norm(const Tensor& x, const Tensor* weight, const Tensor* bias, float eps,
                const Tensor& y, const Stream& stream);

}  // namespace oxyd::backend::cuda
