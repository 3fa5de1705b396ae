// Gated MLP (see mlp.h). Shapes: gate/up [T, I].
#include "model/layers/mlp.h"

#include "ops/activation.h"
#include "ops/elementwise.h"
#include "ops/matmul.h"

namespace oxyd::model::layers {

void gated_mlp(const LayerWeights& w, backend::Activation act, const Tensor& h, MlpWorkspace& ws,
               const Tensor& out) {
  const int64_t T = h.dim(0), I = w.gate.dim(0);
  ws.gate.resize(T * I);
  ws.up.resize(T * I);
  Tensor g = ws.gate.view({T, I}), u = ws.up.view({T, I});
  ops::matmul_same_x(h, {{&w.gate, &g}, {&w.up, &u}});
  ops::glu(act, g, u, g);
  ops::matmul(g, w.down, out);
}

void plain_mlp(const LayerWeights& w, backend::Activation act, const Tensor& h, MlpWorkspace& ws,
               const Tensor& out) {
  const int64_t T = h.dim(0), I = w.up.dim(0);
  ws.up.resize(T * I);
  Tensor u = ws.up.view({T, I});
  ops::matmul(h, w.up, u);
  if (w.up_bias.data) ops::add(u, w.up_bias, u);
  ops::activation(act, u, u);
  ops::matmul(u, w.down, out);
  if (w.down_bias.data) ops::add(out, w.down_bias, out);
}

}  // namespace oxyd::model::layers
