// Gated MLP (see mlp.h). Shapes: gate/up [T, I].
#include "model/layers/mlp.h"

#include "ops/activation.h"
#include "ops/matmul.h"

namespace oxyd::model::layers {

void gated_mlp(const LayerWeights& w, backend::Activation act, const Tensor& h, MlpWorkspace& ws,
               const Tensor& out) {
  const int64_t T = h.dim(0), I = w.gate.dim(0);
  ws.gate.resize(T * I);
  ws.up.resize(T * I);
  Tensor g = ws.gate.view({T, I}), u = ws.up.view({T, I});
  ops::matmul(h, w.gate, g);
  ops::matmul(h, w.up, u);
  ops::glu(act, g, u, g);
  ops::matmul(g, w.down, out);
}

}  // namespace oxyd::model::layers
