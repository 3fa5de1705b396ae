// MoE MLP (see moe.h). Shapes: E experts, k per token, I = expert width, N = T·k grouped rows.
#include "model/layers/moe.h"

#include <algorithm>
#include <vector>

#include "ops/activation.h"
#include "ops/elementwise.h"
#include "ops/embedding.h"
#include "ops/matmul.h"
#include "ops/moe.h"

namespace oxyd::model::layers {
namespace {

// Rows [begin, begin + n) of a [*, cols] F32 workspace as a tensor.
Tensor rows_of(const Workspace& w, int64_t begin, int64_t n, int64_t cols) {
  Tensor t = w.view({n, cols});
  t.data = w.data() + begin * cols;
  return t;
}

}  // namespace
void moe_mlp(const LayerWeights& w, const MoeSpec& s, const Tensor& router_in, const Tensor& h, MlpWorkspace& mlp_ws,
             MoeWorkspace& ws, const Tensor& out) {
  const int64_t T = h.dim(0), H = h.dim(1), E = w.router.dim(0), k = s.route.top_k, N = T * k;
  const int64_t I = w.experts[0].gate.dim(0);
  const bool shared = w.shexp_down.data != nullptr;
  const int64_t Is = shared ? w.shexp_gate.dim(0) : 0, S = shared ? T : 0;  // S: shared rows after the N
  ws.logits.resize(T * E);
  ws.ids.resize(N);
  ws.weights.resize(N + S);
  ws.rows.resize(N + S);
  ws.offsets.resize(E + 1);
  ws.gather.resize(N);
  ws.xs.resize(N * H);
  ws.ys.resize((N + S) * H);
  mlp_ws.gate.resize(std::max(N * I, S * Is));
  mlp_ws.up.resize(std::max(N * I, S * Is));
  if (shared) {  // before anything writes out, which may alias h
    Tensor g = mlp_ws.gate.view({T, Is}), u = mlp_ws.up.view({T, Is});
    ops::matmul(h, w.shexp_gate, g);
    ops::matmul(h, w.shexp_up, u);
    ops::glu(s.act, g, u, g);
    ops::matmul(g, w.shexp_down, rows_of(ws.ys, N, T, H));
    Tensor gate = rows_of(ws.weights, N, T, 1);
    ops::matmul(h, w.shexp_gate_inp, gate);  // [T, 1]
    ops::activation(backend::Activation::SIGMOID, gate, gate);
    std::vector<int32_t> row(static_cast<size_t>(T));  // the shared rows N.. of ys, one per token
    for (int64_t t = 0; t < T; ++t) row[size_t(t)] = static_cast<int32_t>(N + t);
    ops::copy_from_host(row.data(), Tensor(DType::I32, ws.rows.data() + N, {T}, h.device));
  }
  Tensor logits = ws.logits.view({T, E});
  ops::matmul(router_in, w.router, logits);  // [T, E]
  if (w.router_bias.data) ops::add(logits, w.router_bias, logits);
  Tensor ids(DType::I32, ws.ids.data(), {T, k}, logits.device);
  Tensor rows(DType::I32, ws.rows.data(), {T, k}, logits.device);
  Tensor weights = ws.weights.view({T, k});
  ops::moe_route(logits, s.route, ids, weights);
  if (w.expert_scale.data) {  // host-side (the device's copies come and go; on the CPU plain copies)
    std::vector<int32_t> idh(static_cast<size_t>(N));
    std::vector<float> wh(static_cast<size_t>(N)), sh(static_cast<size_t>(E));
    ops::copy_to_host(ids, idh.data());
    ops::copy_to_host(weights, wh.data());
    ops::copy_to_host(w.expert_scale, sh.data());
    for (int64_t i = 0; i < N; ++i) wh[size_t(i)] *= sh[size_t(idh[size_t(i)])];
    ops::copy_from_host(wh.data(), weights);
  }

  // Group the (token, rank) pairs by expert, gather each pair's input row, run the experts.
  Tensor offsets(DType::I32, ws.offsets.data(), {E + 1}, logits.device);
  Tensor gather(DType::I32, ws.gather.data(), {N}, logits.device);
  ops::moe_group(ids, offsets, gather, rows);
  const int32_t* gather_ids = gather.ptr<int32_t>();  // get_rows takes host ids
  std::vector<int32_t> gather_host;
  if (gather.device != Device::CPU) {
    gather_host.resize(static_cast<size_t>(N));
    ops::copy_to_host(gather, gather_host.data());
    gather_ids = gather_host.data();
  }
  ops::embedding(h, gather_ids, N, ws.xs.view({N, H}));  // xs[r] = h[gather[r]]
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
  if (shared) {  // out += sigmoid(gate_t) · shared_t (a one-column combine into the free xs)
    Tensor srows(DType::I32, ws.rows.data() + N, {T, 1}, logits.device);
    Tensor sx = ws.xs.view({T, H});
    ops::moe_combine(ws.ys.view({N + T, H}), srows, rows_of(ws.weights, N, T, 1), sx);
    ops::add(out, sx, out);
  }
}

}  // namespace oxyd::model::layers
