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
#include "ops/dispatch.h"
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

RouterParams route(RouterScoring s, int k, bool norm, bool after) {
  RouterParams p;
  p.scoring = s, p.top_k = k, p.norm_topk_prob = norm, p.softmax_after_topk = after;
  return p;
}

std::vector<RouterParams> variants(int k) {
  std::vector<RouterParams> out;
  for (bool norm : {false, true})
    for (RouterScoring s : {RouterScoring::SOFTMAX, RouterScoring::SIGMOID}) out.push_back(route(s, k, norm, false));
  out.push_back(route(RouterScoring::SOFTMAX, k, false, true));
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
  ops::moe_route(lt.t, route(RouterScoring::SOFTMAX, 3, true, false), ids.t, w.t);
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
  ops::moe_route(lt.t, route(RouterScoring::SOFTMAX, int(E), false, false), ids.t, w.t);
  for (int64_t t = 0; t < T; ++t) {
    double s = 0;
    std::vector<int32_t> seen(ids.i() + t * E, ids.i() + (t + 1) * E);
    std::sort(seen.begin(), seen.end());
    for (int64_t e = 0; e < E; ++e) EXPECT_EQ(seen[e], e);
    for (int64_t j = 0; j < E; ++j) s += w.f()[t * E + j];
    EXPECT_NEAR(s, 1.0, 1e-6);
  }
}

TEST(MoeRoute, ExpertScaleMultipliesTheRoutedWeights) {
  // Gemma 4: the routed (renormalised) weights times a per-expert scale, gathered by expert id.
  const int64_t T = 9, E = 8;
  std::mt19937 rng(11);
  std::normal_distribution<float> d(0.0f, 1.5f);
  std::vector<float> l(T * E);
  for (float& x : l) x = d(rng);
  HostTensor lt(DType::F32, {T, E}), scale(DType::F32, {E}), ids(DType::I32, {T, 2}), w(DType::F32, {T, 2});
  std::copy(l.begin(), l.end(), lt.f());
  for (int64_t e = 0; e < E; ++e) scale.f()[e] = 0.25f + 0.5f * float(e);
  RouterParams p = route(RouterScoring::SOFTMAX, 2, true, false);
  p.expert_scale = scale.t;
  ops::moe_route(lt.t, p, ids.t, w.t);
  for (int64_t t = 0; t < T; ++t) {
    const Routed want = definition(std::vector<float>(l.begin() + t * E, l.begin() + (t + 1) * E), p);
    for (int j = 0; j < 2; ++j) {
      EXPECT_EQ(ids.i()[t * 2 + j], want.ids[j]);
      EXPECT_NEAR(w.f()[t * 2 + j], want.w[j] * (0.25 + 0.5 * want.ids[j]), 1e-6) << "token " << t;
    }
  }
  HostTensor short_scale(DType::F32, {E - 1});
  p.expert_scale = short_scale.t;
  EXPECT_THROW(ops::moe_route(lt.t, p, ids.t, w.t), Error);
}

TEST(MoeRoute, RejectsBadTopK) {
  HostTensor l(DType::F32, {2, 4}), ids(DType::I32, {2, 5}), w(DType::F32, {2, 5});
  EXPECT_THROW(ops::moe_route(l.t, route(RouterScoring::SOFTMAX, 5, false, false), ids.t, w.t), Error);
  HostTensor ids0(DType::I32, {2, 1}), w0(DType::F32, {2, 1});
  EXPECT_THROW(ops::moe_route(l.t, route(RouterScoring::SOFTMAX, 0, false, false), ids0.t, w0.t), Error);
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

TEST(MoeGroup, CountingSortByExpertTokensAscending) {
  const int64_t T = 11, k = 3, E = 7;
  HostTensor ids(DType::I32, {T, k}), off(DType::I32, {E + 1}), gather(DType::I32, {T * k}), rows(DType::I32, {T, k});
  std::mt19937 rng(5);
  for (int64_t t = 0; t < T; ++t) {  // k distinct experts per token, expert 4 never chosen
    std::vector<int32_t> pool{0, 1, 2, 3, 5, 6};
    std::shuffle(pool.begin(), pool.end(), rng);
    for (int64_t j = 0; j < k; ++j) ids.i()[t * k + j] = pool[size_t(j)];
  }
  ops::moe_group(ids.t, off.t, gather.t, rows.t);
  // The definition: expert e's rows are its (token, rank) pairs in token order, after all of e-1's.
  int32_t next = 0;
  for (int32_t e = 0; e < E; ++e) {
    EXPECT_EQ(off.i()[e], next) << "expert " << e;
    for (int64_t t = 0; t < T; ++t)
      for (int64_t j = 0; j < k; ++j)
        if (ids.i()[t * k + j] == e) {
          EXPECT_EQ(rows.i()[t * k + j], next);
          EXPECT_EQ(gather.i()[next], t);
          ++next;
        }
  }
  EXPECT_EQ(off.i()[E], T * k);
  EXPECT_EQ(off.i()[4], off.i()[5]);
  ids.i()[3] = int32_t(E);
  EXPECT_THROW(ops::moe_group(ids.t, off.t, gather.t, rows.t), Error);
}

// ops::moe_experts on the CPU (grouped matmuls, one activation pass) against the backend's default
// (one matmul / add / glu per expert) — bit-identical — and against float64 from the definition.
void check_moe_experts(bool oai) {
  const int64_t E = 6, H = 64, I = 32;
  const std::vector<int32_t> offsets{0, 2, 2, 5, 6, 6, 9};
  const int64_t N = offsets.back();
  std::vector<HostTensor> store;
  std::vector<backend::ExpertWeights> experts(static_cast<size_t>(E));
  auto make = [&](std::initializer_list<int64_t> dims, uint32_t seed) {
    store.emplace_back(DType::F32, dims);
    fill_uniform(store.back(), -0.3f, 0.3f, seed);
    return store.back().t;
  };
  store.reserve(size_t(E) * 6);
  for (int64_t e = 0; e < E; ++e) {
    backend::ExpertWeights& x = experts[size_t(e)];
    x.gate = make({I, H}, uint32_t(10 * e + 1));
    x.up = make({I, H}, uint32_t(10 * e + 2));
    x.down = make({H, I}, uint32_t(10 * e + 3));
    if (oai) {
      x.gate_bias = make({I}, uint32_t(10 * e + 4));
      x.up_bias = make({I}, uint32_t(10 * e + 5));
      x.down_bias = make({H}, uint32_t(10 * e + 6));
    }
  }
  HostTensor xs(DType::F32, {N, H}), off(DType::I32, {E + 1}), g(DType::F32, {N, I}), u(DType::F32, {N, I});
  HostTensor ys(DType::F32, {N, H}), ys_loop(DType::F32, {N, H});
  fill_uniform(xs, -2.0f, 2.0f, 99);
  std::copy(offsets.begin(), offsets.end(), off.i());
  backend::MoeExpertsParams p;
  p.xs = xs.t;
  p.offsets = off.t;
  p.experts = experts.data();
  p.act = backend::Activation::SILU;
  if (oai) p.swiglu_limit = 7.0f, p.swiglu_alpha = 1.702f;
  p.gate = g.t;
  p.up = u.t;
  p.ys = ys.t;
  ops::moe_experts(p);
  p.ys = ys_loop.t;
  ops::device_backend(Device::CPU).Backend::moe_experts(p);
  for (int64_t i = 0; i < N * H; ++i) ASSERT_EQ(ys.f()[i], ys_loop.f()[i]) << "element " << i;
  for (int64_t e = 0; e < E; ++e)
    for (int64_t r = offsets[size_t(e)]; r < offsets[size_t(e) + 1]; ++r) {
      const backend::ExpertWeights& x = experts[size_t(e)];
      std::vector<double> act(static_cast<size_t>(I));
      for (int64_t i = 0; i < I; ++i) {
        double a = oai ? x.gate_bias.ptr<float>()[i] : 0, b = oai ? x.up_bias.ptr<float>()[i] : 0;
        for (int64_t h = 0; h < H; ++h) {
          a += double(x.gate.ptr<float>()[i * H + h]) * xs.f()[r * H + h];
          b += double(x.up.ptr<float>()[i * H + h]) * xs.f()[r * H + h];
        }
        if (oai) {  // gpt-oss: gate clamped above, up clamped both ways, gate·σ(α·gate)·(up + 1)
          a = std::min(a, 7.0), b = std::clamp(b, -7.0, 7.0);
          act[size_t(i)] = a / (1 + std::exp(-1.702 * a)) * (b + 1);
        } else {
          act[size_t(i)] = a / (1 + std::exp(-a)) * b;
        }
      }
      for (int64_t h = 0; h < H; ++h) {
        double want = oai ? x.down_bias.ptr<float>()[h] : 0;
        for (int64_t i = 0; i < I; ++i) want += double(x.down.ptr<float>()[h * I + i]) * act[size_t(i)];
        EXPECT_NEAR(ys.f()[r * H + h], want, 1e-4) << "expert " << e << " row " << r << " h " << h;
      }
    }
}

TEST(MoeExperts, GroupedEqualsPerExpertLoopAndDefinition) { check_moe_experts(false); }
TEST(MoeExperts, BiasesAndClampedSwigluEqualPerExpertLoopAndDefinition) { check_moe_experts(true); }

TEST(MoeExperts, RejectsBadOffsetsAndShapes) {
  const int64_t E = 2, H = 8, I = 4;
  HostTensor w1(DType::F32, {I, H}), w2(DType::F32, {H, I}), xs(DType::F32, {3, H}), off(DType::I32, {E + 1});
  HostTensor g(DType::F32, {3, I}), u(DType::F32, {3, I}), ys(DType::F32, {3, H});
  std::vector<backend::ExpertWeights> experts(2);
  for (auto& x : experts) x.gate = w1.t, x.up = w1.t, x.down = w2.t;
  backend::MoeExpertsParams p;
  p.xs = xs.t, p.offsets = off.t, p.experts = experts.data(), p.gate = g.t, p.up = u.t, p.ys = ys.t;
  off.i()[0] = 0, off.i()[1] = 2, off.i()[2] = 1;  // decreasing
  EXPECT_THROW(ops::moe_experts(p), Error);
  off.i()[2] = 2;  // ends before the rows of xs
  EXPECT_THROW(ops::moe_experts(p), Error);
  off.i()[2] = 3;
  experts[1].down = w1.t;  // [I, H] where [H, I] is due
  EXPECT_THROW(ops::moe_experts(p), Error);
}

}  // namespace
}  // namespace oxyd::test
