// Reference activations and gated linear units, elementwise in float64:
// silu(x) = x·σ(x); gelu_erf(x) = ½x(1 + erf(x/√2)); gelu_tanh(x) = ½x(1 + tanh(√(2/π)(x + 0.044715x³))).
// glu = act(gate)·up (SwiGLU with SILU, GeGLU with GELU_TANH).
#pragma once

#include "backend/op_params.h"
#include "core/tensor.h"

namespace oxyd::backend::reference {

/// x any shape F32; y same shape, F32, may alias x.
void activation(Activation act, const Tensor& x, const Tensor& y);

/// gate [rows, ff] F32, up [rows, ff] F32 → y [rows, ff] F32 = act(gate) · up; y may alias gate or up.
void glu(Activation act, const Tensor& gate, const Tensor& up, const Tensor& y);

/// gate_up [rows, 2·ff] F32 (first half of each row is the gate) → y [rows, ff] F32.
void glu_fused(Activation act, const Tensor& gate_up, const Tensor& y);

/// gpt-oss expert activation (transformers modeling_gpt_oss.py): g = min(gate, limit),
/// u = clamp(up, −limit, limit), y = (u + 1) · g · σ(alpha · g). gate, up, y [rows, ff] F32
/// (gate and up already de-interleaved); y may alias gate or up.
void glu_oai(const Tensor& gate, const Tensor& up, float alpha, float limit, const Tensor& y);

}  // namespace oxyd::backend::reference
