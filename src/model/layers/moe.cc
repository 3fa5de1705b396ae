// MoE MLP (see moe.h). Shapes: E experts, k per token, I = expert width, N = T·k grouped rows.
#include "model/layers/moe.h"

#include <algorithm>

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

void moe_mlp(const LayerWeights& w, const MoeSpec& s, const Tensor& h, MlpWorkspace& mlp_ws, MoeWorkspace& ws,
             const Tensor& out) {
  const int64_t T = h.dim(0), H = h.dim(1), E = w.router.dim(0), k = s.route.top_k, N = T * k;
  const int64_t I = w.experts[0].gate.dim(0);
  const bool shared = w.shexp_down.data != nullptr;
  const int64_t Is = shared ? w.shexp_gate.dim(0) : 0, S = shared ? T : 0;  // S: shared rows after the N
  ws.logits.resize(T * E);
  ws.ids.resize(N);
  ws.weights.resize(N + S);
  ws.rows.resize(N + S);
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
    int32_t* row = reinterpret_cast<int32_t*>(ws.rows.data()) + N;
    for (int64_t t = 0; t < T; ++t) row[t] = static_cast<int32_t>(N + t);
  }
  Tensor logits = ws.logits.view({T, E});
  ops::matmul(h, w.router, logits);  // [T, E]
  if (w.router_bias.data) ops::add(logits, w.router_bias, logits);
  Tensor ids(DType::I32, ws.ids.data(), {T, k}, logits.device);
  Tensor rows(DType::I32, ws.rows.data(), {T, k}, logits.device);
  Tensor weights = ws.weights.view({T, k});
  ops::moe_route(logits, s.route, ids, weights);

  // Group the (token, rank) pairs by expert, tokens ascending within an expert (host-side: the
  // ids are read back, as the logits rows are; a device backend would do this on the device).
  const int32_t* id = ids.ptr<int32_t>();
  ws.offsets.assign(E + 1, 0);
  for (int64_t i = 0; i < N; ++i) ++ws.offsets[id[i] + 1];
  for (int64_t e = 0; e < E; ++e) ws.offsets[e + 1] += ws.offsets[e];
  ws.gather.resize(N);
  ws.next.assign(ws.offsets.begin(), ws.offsets.end() - 1);
  int32_t* row_of = rows.ptr<int32_t>();
  for (int64_t i = 0; i < N; ++i) {
    const int64_t r = ws.next[id[i]]++;
    ws.gather[r] = static_cast<int32_t>(i / k);
    row_of[i] = static_cast<int32_t>(r);
  }
  ops::embedding(h, ws.gather.data(), N, ws.xs.view({N, H}));  // xs[r] = h[gather[r]]

  for (int64_t e = 0; e < E; ++e) {
    const int64_t begin = ws.offsets[e], n = ws.offsets[e + 1] - begin;
    if (n == 0) continue;  // unselected experts' weights are never read
    const LayerWeights::Expert& x = w.experts[e];
    Tensor xe = rows_of(ws.xs, begin, n, H), ye = rows_of(ws.ys, begin, n, H);
    Tensor g = rows_of(mlp_ws.gate, begin, n, I), u = rows_of(mlp_ws.up, begin, n, I);
    ops::matmul(xe, x.gate, g);  // [n, I]
    ops::matmul(xe, x.up, u);
    if (x.gate_bias.data) ops::add(g, x.gate_bias, g);
    if (x.up_bias.data) ops::add(u, x.up_bias, u);
    if (s.swiglu_limit > 0) ops::glu_oai(g, u, s.swiglu_alpha, s.swiglu_limit, g);
    else ops::glu(s.act, g, u, g);
    ops::matmul(g, x.down, ye);  // [n, H]
    if (x.down_bias.data) ops::add(ye, x.down_bias, ye);
  }
  ops::moe_combine(ws.ys.view({N, H}), rows, weights, out);
  if (shared) {  // out += sigmoid(gate_t) · shared_t (a one-column combine into the free xs)
    Tensor srows(DType::I32, ws.rows.data() + N, {T, 1}, logits.device);
    Tensor sx = ws.xs.view({T, H});
    ops::moe_combine(ws.ys.view({N + T, H}), srows, rows_of(ws.weights, N, T, 1), sx);
    ops::add(out, sx, out);
  }
}

}  // namespace oxyd::model::layers
