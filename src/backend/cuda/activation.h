// CUDA activations and gated linear units, mirroring backend/reference/activation.h:
// silu, gelu (erf) and gelu (tanh) elementwise, and glu = act(gate)·up from separate gate/up
// tensors or one fused gate_up row (gate first). fp32 math on F32 | BF16 | F16 storage.
#pragma once

#include "backend/cuda/device.h"
#include "backend/op_params.h"
#include "core/tensor.h"

namespace oxyd::backend::cuda {

/// x any shape; y same shape and dtype, may alias x.
void activation(Activation act, const Tensor& x, const Tensor& y, const Stream& stream);

/// gate [rows, ff], up [rows, ff] → y [rows, ff] = act(gate) · up; y may alias gate or up.
void glu(Activation act, const Tensor& gate, const Tensor& up, const Tensor& y,
         const Stream& stream);

/// gate_up [rows, 2·ff] (first half of each row is the gate) → y [rows, ff].
void glu_fused(Activation act, const Tensor& gate_up, const Tensor& y, const Stream& stream);

/// gpt-oss's clamped SwiGLU: y = (clamp(up, ±limit) + 1)·g·σ(alpha·g), g = min(gate, limit);
/// gate, up, y the same shape; y may alias gate or up.
void glu_oai(const Tensor& gate, const Tensor& up, float alpha, float limit, const Tensor& y,
             const Stream& stream);

}  // namespace oxyd::backend::cuda
