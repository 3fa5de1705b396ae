// Reference LayerNorm: y = (x − mean) · (var + eps)^-½ · w + b over the last dim (biased
// variance, like torch.nn.LayerNorm), plain scalar code with float64 accumulation.
#pragma once

#include "core/tensor.h"

namespace oxyd::backend::reference {

/// x [rows, n] F32; weight [n] F32 or nullptr (1); bias [n] F32 or nullptr (0);
/// y same shape as x, F32, may alias x.
void layer_norm(const Tensor& x, const Tensor* weight, const Tensor* bias, float eps,
                const Tensor& y);

}  // namespace oxyd::backend::reference
