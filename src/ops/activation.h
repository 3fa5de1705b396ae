// Op front ends for activations and gated linear units (SwiGLU = glu(SILU), GeGLU =
// glu(GELU_TANH)); the fused form takes the [.., 2·ff] output of a merged gate_up projection.
#pragma once

#include "backend/op_params.h"
#include "core/tensor.h"

namespace oxyd::ops {

using backend::Activation;

/// y = act(x). x any shape F32; y same shape, may alias x.
void activation(Activation act, const Tensor& x, const Tensor& y);
/// y = act(gate) · up. gate, up, y [..., ff] F32, same shape; y may alias gate or up.
void glu(Activation act, const Tensor& gate, const Tensor& up, const Tensor& y);
/// gate_up [..., 2·ff] F32 (first half of each row is the gate) → y [..., ff] F32.
void glu_fused(Activation act, const Tensor& gate_up, const Tensor& y);
/// gpt-oss experts: y = (clamp(up, ±limit) + 1) · g · σ(alpha · g), g = min(gate, limit)
/// (swiglu_alpha 1.702, swiglu_limit 7.0). gate, up, y [..., ff] F32, gate/up de-interleaved.
void glu_oai(const Tensor& gate, const Tensor& up, float alpha, float limit, const Tensor& y);

}  // namespace oxyd::ops
