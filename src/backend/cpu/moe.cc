// CPU MoE routing / combine (see moe.h).
#include "backend/cpu/moe.h"

#include <vector>

#include "backend/cpu/activation.h"
#include "backend/cpu/dispatch.h"
#include "backend/cpu/elementwise.h"
#include "backend/cpu/matmul.h"
#include "backend/reference/moe.h"
#include "core/thread_pool.h"

namespace oxyd::backend::cpu {

void moe_route(const Tensor& logits, const RouterParams& p, const Tensor& ids, const Tensor& weights) {
  reference::moe_route(logits, p, ids, weights);
}

void moe_combine(const Tensor& expert_out, const Tensor& rows, const Tensor& weights, const Tensor& y) {
  const int64_t H = y.dim(1), k = rows.dim(1);
  const float* src = expert_out.ptr<float>();
  parallel_for(y.dim(0), row_grain(H * k), [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) {
      float* out = y.ptr<float>() + t * H;
      const int32_t* r = rows.ptr<int32_t>() + t * k;
      const float* w = weights.ptr<float>() + t * k;
      for (int64_t i = 0; i < H; ++i) out[i] = w[0] * src[int64_t(r[0]) * H + i];
      for (int64_t j = 1; j < k; ++j) {
        const float* e = src + int64_t(r[j]) * H;
        const float wj = w[j];
        for (int64_t i = 0; i < H; ++i) out[i] += wj * e[i];
      }
    }
  });
}

void moe_group(const Tensor& ids, const Tensor& offsets, const Tensor& gather, const Tensor& rows) {
  const int64_t N = ids.numel(), k = ids.dim(1), E = offsets.dim(0) - 1;
  const int32_t* id = ids.ptr<int32_t>();
  int32_t* off = offsets.ptr<int32_t>();
  std::fill_n(off, E + 1, 0);
  for (int64_t i = 0; i < N; ++i) ++off[id[i] + 1];
  for (int64_t e = 0; e < E; ++e) off[e + 1] += off[e];
  std::vector<int32_t> next(off, off + E);
  int32_t* g = gather.ptr<int32_t>();
  int32_t* r = rows.ptr<int32_t>();
  for (int64_t i = 0; i < N; ++i) {  // pairs in (token, rank) order: tokens ascend within an expert
    const int32_t at = next[size_t(id[i])]++;
    g[at] = int32_t(i / k);
    r[i] = at;
  }
}

namespace {

// Rows [row0, row0 + n) of a 2-D F32 tensor.
Tensor row_block(const Tensor& t, int64_t row0, int64_t n) {
  return Tensor(DType::F32, t.ptr<float>() + row0 * t.cols(), {n, t.cols()}, t.device);
}

}  // namespace

void moe_experts(const MoeExpertsParams& p) {
  const int64_t E = p.offsets.dim(0) - 1;
  std::vector<int64_t> off(static_cast<size_t>(E + 1));
  for (int64_t e = 0; e <= E; ++e) off[size_t(e)] = p.offsets.ptr<int32_t>()[e];
  const size_t ne = static_cast<size_t>(E);
  std::vector<const Tensor*> gw(ne), uw(ne), dw(ne);
  for (int64_t e = 0; e < E; ++e) {
    gw[size_t(e)] = &p.experts[e].gate;
    uw[size_t(e)] = &p.experts[e].up;
    dw[size_t(e)] = &p.experts[e].down;
  }
  // Per-expert biases over that expert's rows (gpt-oss); none for most families.
  auto add_biases = [&](Tensor ExpertWeights::*bias, const Tensor& y) {
    for (int64_t e = 0; e < E; ++e)
      if (const Tensor& b = p.experts[e].*bias; b.data && off[size_t(e) + 1] > off[size_t(e)]) {
        const Tensor blk = row_block(y, off[size_t(e)], off[size_t(e) + 1] - off[size_t(e)]);
        add(blk, b, blk);
      }
  };
  const MatmulGroupList gate_up[2] = {{gw.data(), p.gate}, {uw.data(), p.up}};
  matmul_grouped(p.xs, off.data(), E, gate_up, 2);
  add_biases(&ExpertWeights::gate_bias, p.gate);
  add_biases(&ExpertWeights::up_bias, p.up);
  if (p.swiglu_limit > 0) glu_oai(p.gate, p.up, p.swiglu_alpha, p.swiglu_limit, p.gate);
  else glu(p.act, p.gate, p.up, p.gate);
  const MatmulGroupList down{dw.data(), p.ys};
  matmul_grouped(p.gate, off.data(), E, &down, 1);
  add_biases(&ExpertWeights::down_bias, p.ys);
}

}  // namespace oxyd::backend::cpu
