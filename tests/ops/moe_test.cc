// MoE routing and combine (ops::moe_route / moe_combine) against a float64 reference written here
// from the definition (transformers' Qwen3MoeTopKRouter / OlmoeTopKRouter: softmax over all experts,
// top-k, optional renormalisation; sigmoid scoring; gpt-oss: top-k of the logits, then softmax over
// those k), with the documented tie rule: equal logits go to the lower expert index first. Edge
// cases: ties, every token choosing the same experts, top_k = num_experts.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <vector>

#include "backend/reference/moe.h"
#include "core/error.h"
#include "op_test_util.h"
#include "ops/moe.h"

namespace oxyd::test {
namespace {

using backend::RouterParams;
using backend::RouterScoring;

struct Routed {
  std::vector<int32_t> ids;
  std::vector<double> w;
};

// The definition, one token: stable sort of the indices by descending logit.
Routed definition(const std::vector<float>& l, const RouterParams& p) {
  std::vector<int32_t> order(l.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return l[a] > l[b]; });
  Routed r;
  r.ids.assign(order.begin(), order.begin() + p.top_k);
  if (p.softmax_after_topk) {
    double z = 0;
    for (int32_t e : r.ids) z += std::exp(double(l[e]));
    for (int32_t e : r.ids) r.w.push_back(std::exp(double(l[e])) / z);
    return r;
  }
  double z = 0;
  for (float x : l) z += std::exp(double(x));
  for (int32_t e : r.ids)
    r.w.push_back(p.scoring == RouterScoring::SIGMOID ? 1.0 / (1.0 + std::exp(-double(l[e]))) : std::exp(double(l[e])) / z);
  if (p.norm_topk_prob) {
    const double s = std::accumulate(r.w.begin(), r.w.end(), 0.0);
    for (double& x : r.w) x /= s;
  }
  return r;
}

// Routes T tokens of E logits with ops::moe_route and checks every token against the definition.
void check_route(const std::vector<float>& logits, int64_t T, int64_t E, const RouterParams& p) {
  HostTensor l(DType::F32, {T, E}), ids(DType::I32, {T, int64_t(p.top_k)}), w(DType::F32, {T, int64_t(p.top_k)});
  std::copy(logits.begin(), logits.end(), l.f());
  ops::moe_route(l.t, p, ids.t, w.t);
  for (int64_t t = 0; t < T; ++t) {
    const Routed want = definition(std::vector<float>(logits.begin() + t * E, logits.begin() + (t + 1) * E), p);
    for (int j = 0; j < p.top_k; ++j) {
      EXPECT_EQ(ids.i()[t * p.top_k + j], want.ids[j]) << "token " << t << " rank " << j;
      EXPECT_NEAR(w.f()[t * p.top_k + j], want.w[j], 1e-6) << "token " << t << " rank " << j;
    }
  }
}

std::vector<RouterParams> variants(int k) {
  std::vector<RouterParams> out;
  for (bool norm : {false, true})
    for (RouterScoring s : {RouterScoring::SOFTMAX, RouterScoring::SIGMOID}) out.push_back({s, k, norm, false});
  out.push_back({RouterScoring::SOFTMAX, k, false, true});
  return out;
}

TEST(MoeRoute, RandomLogitsMatchTheDefinition) {
  const int64_t T = 37, E = 16;
  std::mt19937 rng(5);
  std::normal_distribution<float> d(0.0f, 2.0f);
  std::vector<float> l(T * E);
  for (float& x : l) x = d(rng);
  for (int k : {1, 2, 4, 8})
    for (const RouterParams& p : variants(k)) check_route(l, T, E, p);
}

TEST(MoeRoute, TiesGoToTheLowerExpertIndex) {
  // Token 0: four experts share the best logit; token 1: every logit equal; token 2: a tie for
  // the last place (experts 3 and 6).
  const int64_t E = 8;
  std::vector<float> l = {0.5f, 1.0f, 1.0f, 0.2f, 1.0f, 1.0f, -3.0f, 0.0f,
                          0.25f, 0.25f, 0.25f, 0.25f, 0.25f, 0.25f, 0.25f, 0.25f,
                          2.0f, 1.5f, -1.0f, 0.7f, 0.1f, 1.9f, 0.7f, 0.3f};
  for (int k : {1, 2, 3, 4})
    for (const RouterParams& p : variants(k)) check_route(l, 3, E, p);
  // Spelled out, independent of the definition above: softmax top-3 of token 0 is experts 1, 2, 4.
  HostTensor lt(DType::F32, {1, E}), ids(DType::I32, {1, 3}), w(DType::F32, {1, 3});
  std::copy(l.begin(), l.begin() + E, lt.f());
  ops::moe_route(lt.t, {RouterScoring::SOFTMAX, 3, true, false}, ids.t, w.t);
  EXPECT_EQ(std::vector<int32_t>(ids.i(), ids.i() + 3), (std::vector<int32_t>{1, 2, 4}));
  for (int j = 0; j < 3; ++j) EXPECT_NEAR(w.f()[j], 1.0 / 3.0, 1e-7);
}

TEST(MoeRoute, TopKEqualsNumExperts) {
  const int64_t T = 5, E = 6;
  std::mt19937 rng(9);
  std::uniform_real_distribution<float> d(-4.0f, 4.0f);
  std::vector<float> l(T * E);
  for (float& x : l) x = d(rng);
  for (const RouterParams& p : variants(int(E))) check_route(l, T, E, p);
  // Softmax weights over all experts sum to 1 with or without renormalisation.
  HostTensor lt(DType::F32, {T, E}), ids(DType::I32, {T, E}), w(DType::F32, {T, E});
  std::copy(l.begin(), l.end(), lt.f());
  ops::moe_route(lt.t, {RouterScoring::SOFTMAX, int(E), false, false}, ids.t, w.t);
  for (int64_t t = 0; t < T; ++t) {
    double s = 0;
    std::vector<int32_t> seen(ids.i() + t * E, ids.i() + (t + 1) * E);
    std::sort(seen.begin(), seen.end());
    for (int64_t e = 0; e < E; ++e) EXPECT_EQ(seen[e], e);
    for (int64_t j = 0; j < E; ++j) s += w.f()[t * E + j];
    EXPECT_NEAR(s, 1.0, 1e-6);
  }
}

TEST(MoeRoute, RejectsBadTopK) {
  HostTensor l(DType::F32, {2, 4}), ids(DType::I32, {2, 5}), w(DType::F32, {2, 5});
  EXPECT_THROW(ops::moe_route(l.t, {RouterScoring::SOFTMAX, 5, false, false}, ids.t, w.t), Error);
  HostTensor ids0(DType::I32, {2, 1}), w0(DType::F32, {2, 1});
  EXPECT_THROW(ops::moe_route(l.t, {RouterScoring::SOFTMAX, 0, false, false}, ids0.t, w0.t), Error);
}

TEST(MoeCombine, SumsInRankOrderAndMatchesFloat64) {
  const int64_t T = 9, H = 70, k = 3, N = 20;
  HostTensor ys(DType::F32, {N, H}), rows(DType::I32, {T, k}), w(DType::F32, {T, k}), y(DType::F32, {T, H});
  fill_uniform(ys, -2.0f, 2.0f, 3);
  fill_uniform(w, 0.0f, 1.0f, 4);
  for (int64_t i = 0; i < T * k; ++i) rows.i()[i] = int32_t((i * 7) % N);
  ops::moe_combine(ys.t, rows.t, w.t, y.t);
  for (int64_t t = 0; t < T; ++t)
    for (int64_t i = 0; i < H; ++i) {
      double want = 0;
      for (int64_t j = 0; j < k; ++j) want += double(w.f()[t * k + j]) * ys.f()[rows.i()[t * k + j] * H + i];
      EXPECT_NEAR(y.f()[t * H + i], want, 1e-5) << t << " " << i;
    }
  rows.i()[4] = int32_t(N);  // outside expert_out
  EXPECT_THROW(ops::moe_combine(ys.t, rows.t, w.t, y.t), Error);
}

}  // namespace
}  // namespace oxyd::test
