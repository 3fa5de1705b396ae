// CPU activations and gated linear units: same contract as backend/reference/activation.h,
// float32 vector math (simd.h exp/tanh/erf), threaded over elements or rows.
#pragma once

#include "backend/op_params.h"
#include "core/tensor.h"

namespace oxyd::backend::cpu {

/// x any shape F32; y same shape, may alias x.
void activation(Activation act, const Tensor& x, const Tensor& y);
/// gate, up [rows, ff] F32 → y [rows, ff] = act(gate) · up; y may alias gate or up.
void glu(Activation act, const Tensor& gate, const Tensor& up, const Tensor& y);
/// gate_up [rows, 2·ff] F32 (first half gate) → y [rows, ff].
void glu_fused(Activation act, const Tensor& gate_up, const Tensor& y);
/// gpt-oss: y = (clamp(up, ±limit) + 1) · g · σ(alpha · g), g = min(gate, limit).
void glu_oai(const Tensor& gate, const Tensor& up, float alpha, float limit, const Tensor& y);

}  // namespace oxyd::backend::cpu
