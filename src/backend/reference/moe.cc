// Reference MoE routing / combine (see moe.h): float64, selection sort by logit (ties: lower index).
#include "backend/reference/moe.h"

#include <cmath>
#include <vector>

namespace oxyd::backend::reference {

void moe_route(const Tensor& logits, const RouterParams& p, const Tensor& ids, const Tensor& weights) {
  const int64_t T = logits.dim(0), E = logits.dim(1), k = p.top_k;
  std::vector<char> taken(E);
  std::vector<double> w(k);
  for (int64_t t = 0; t < T; ++t) {
    const float* l = logits.ptr<float>() + t * E;
    int32_t* id = ids.ptr<int32_t>() + t * k;
    std::fill(taken.begin(), taken.end(), 0);
    for (int64_t j = 0; j < k; ++j) {  // the j-th best: largest logit, lowest index among equals
      int64_t best = -1;
      for (int64_t e = 0; e < E; ++e)
        if (!taken[e] && (best < 0 || l[e] > l[best])) best = e;
      taken[best] = 1;
      id[j] = static_cast<int32_t>(best);
    }
    if (p.softmax_after_topk) {
      double sum = 0;
      for (int64_t j = 0; j < k; ++j) sum += w[j] = std::exp(double(l[id[j]]) - double(l[id[0]]));
      for (int64_t j = 0; j < k; ++j) w[j] /= sum;
    } else if (p.scoring == RouterScoring::SIGMOID) {
      for (int64_t j = 0; j < k; ++j) w[j] = 1.0 / (1.0 + std::exp(-double(l[id[j]])));
    } else {
      double sum = 0;
      for (int64_t e = 0; e < E; ++e) sum += std::exp(double(l[e]) - double(l[id[0]]));
      for (int64_t j = 0; j < k; ++j) w[j] = std::exp(double(l[id[j]]) - double(l[id[0]])) / sum;
    }
    if (p.norm_topk_prob && !p.softmax_after_topk) {
      double sum = 0;
      for (int64_t j = 0; j < k; ++j) sum += w[j];
      for (int64_t j = 0; j < k; ++j) w[j] /= sum;
    }
    const float* scale = p.expert_scale.data ? p.expert_scale.ptr<float>() : nullptr;
    for (int64_t j = 0; j < k; ++j)
      weights.ptr<float>()[t * k + j] = static_cast<float>(w[j]) * (scale ? scale[id[j]] : 1.0f);
  }
}

void moe_combine(const Tensor& expert_out, const Tensor& rows, const Tensor& weights, const Tensor& y) {
  const int64_t T = y.dim(0), H = y.dim(1), k = rows.dim(1);
  for (int64_t t = 0; t < T; ++t) {
    float* out = y.ptr<float>() + t * H;
    for (int64_t i = 0; i < H; ++i) {
      double acc = 0;
      for (int64_t j = 0; j < k; ++j)
        acc += double(weights.ptr<float>()[t * k + j]) *
               double(expert_out.ptr<float>()[int64_t(rows.ptr<int32_t>()[t * k + j]) * H + i]);
      out[i] = static_cast<float>(acc);
    }
  }
}

}  // namespace oxyd::backend::reference
