// Gated MLP of one decoder layer: down(act(gate(h)) ⊙ up(h)) — SwiGLU (SILU) or GeGLU (GELU_TANH).
// A fused gate_up checkpoint arrives here already split into row views by model/weights.
// plain_mlp is the ungated MLP of encoders: down(act(up(h) + up_bias)) + down_bias.
#pragma once

#include <vector>

#include "backend/op_params.h"
#include "core/tensor.h"
#include "model/weights.h"
#include "model/workspace.h"

namespace oxyd::model::layers {

struct MlpWorkspace {
  Workspace gate, up;
};

/// h [T, H] → out [T, H].
void gated_mlp(const LayerWeights& w, backend::Activation act, const Tensor& h, MlpWorkspace& ws,
               const Tensor& out);

/// h [T, H] → out [T, H]; biases where present. out may not alias h.
void plain_mlp(const LayerWeights& w, backend::Activation act, const Tensor& h, MlpWorkspace& ws,
               const Tensor& out);

}  // namespace oxyd::model::layers
