// MoE MLP (see moe.h). Shapes: E experts, k per token, I = expert width, N = T·k grouped rows.
#include "model/layers/moe.h"

#include "ops/activation.h"
#include "ops/elementwise.h"
#include "ops/embedding.h"
#include "ops/matmul.h"
#include "ops/moe.h"

namespace oxyd::model::layers {
void moe_mlp(const LayerWeights& w, const MoeSpec& s, const Tensor& router_in, const Tensor& h, MlpWorkspace& mlp_ws,
             MoeWorkspace& ws, const Tensor& out) {
  const int64_t T = h.dim(0), H = h.dim(1), E = w.router.dim(0), k = s.route.top_k, N = T * k;
  const int64_t I = w.experts[0].gate.dim(0);
  ws.logits.resize(T * E);
  ws.ids.resize(N);
  ws.weights.resize(N);
  ws.rows.resize(N);
  ws.offsets.resize(E + 1);
  ws.gather.resize(N);
  ws.xs.resize(N * H);
  ws.ys.resize(N * H);
  mlp_ws.gate.resize(N * I);
  mlp_ws.up.resize(N * I);
  Tensor logits = ws.logits.view({T, E});
  ops::matmul(router_in, w.router, logits);  // [T, E]
  if (w.router_bias.data) ops::add(logits, w.router_bias, logits);
  Tensor ids(DType::I32, ws.ids.data(), {T, k}, logits.device);
  Tensor rows(DType::I32, ws.rows.data(), {T, k}, logits.device);
  Tensor weights = ws.weights.view({T, k});
  ops::moe_route(logits, s.route, ids, weights);
  if (w.expert_scale.data) {  // host-side, as the ids are read below
    const int32_t* idp = ids.ptr<int32_t>();
    float* wp = weights.ptr<float>();
    for (int64_t i = 0; i < N; ++i) wp[i] *= w.expert_scale.ptr<float>()[idp[i]];
  }

  // Group the (token, rank) pairs by expert, gather each pair's input row, run the experts.
  Tensor offsets(DType::I32, ws.offsets.data(), {E + 1}, logits.device);
  Tensor gather(DType::I32, ws.gather.data(), {N}, logits.device);
  ops::moe_group(ids, offsets, gather, rows);
  ops::embedding(h, gather.ptr<int32_t>(), N, ws.xs.view({N, H}));  // xs[r] = h[gather[r]]
  backend::MoeExpertsParams p;
  p.xs = ws.xs.view({N, H});
  p.offsets = offsets;
  p.experts = w.experts.data();
  p.act = s.act;
  p.swiglu_limit = s.swiglu_limit;
  p.swiglu_alpha = s.swiglu_alpha;
  p.gate = mlp_ws.gate.view({N, I});
  p.up = mlp_ws.up.view({N, I});
  p.ys = ws.ys.view({N, H});
  ops::moe_experts(p);
  ops::moe_combine(ws.ys.view({N, H}), rows, weights, out);
}

}  // namespace oxyd::model::layers
