// layers::moe_mlp (grouped expert execution) against a float64 per-token reference written here
// from transformers' Qwen3MoeSparseMoeBlock: out[t] = Σ_j w_j · down_e(silu(gate_e·h) ⊙ up_e·h)
// over the token's top-k experts e. Cases: a batch in which one expert gets every token and the
// others none (router bias), top_k = num_experts, and batch invariance (a row alone equals the
// same row inside a batch, bit for bit).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <vector>

#include "model/layers/moe.h"

namespace oxyd::model::test {
namespace {

struct Owned {
  std::vector<std::vector<float>> bufs;
  Tensor make(std::initializer_list<int64_t> dims, std::mt19937& rng, float scale) {
    int64_t n = 1;
    for (int64_t d : dims) n *= d;
    std::normal_distribution<float> d(0.0f, scale);
    auto& b = bufs.emplace_back(n);
    for (float& x : b) x = d(rng);
    return Tensor(DType::F32, b.data(), dims);
  }
};

struct Fixture {
  int64_t H = 48, I = 24, E = 6;
  Owned own;
  LayerWeights w;
  explicit Fixture(uint32_t seed) {
    std::mt19937 rng(seed);
    w.router = own.make({E, H}, rng, 1.0f);
    w.experts.resize(E);
    for (auto& x : w.experts) {
      x.gate = own.make({I, H}, rng, 0.2f);
      x.up = own.make({I, H}, rng, 0.2f);
      x.down = own.make({H, I}, rng, 0.2f);
    }
  }
  // float64 reference of one token.
  std::vector<double> ref(const float* h, const backend::RouterParams& p) const {
    std::vector<double> l(E);
    for (int64_t e = 0; e < E; ++e) {
      for (int64_t i = 0; i < H; ++i) l[e] += double(w.router.ptr<float>()[e * H + i]) * h[i];
      if (w.router_bias.data) l[e] += w.router_bias.ptr<float>()[e];
    }
    std::vector<int> order(E);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return l[a] > l[b]; });
    const double mx = l[order[0]];
    for (double& x : l) x -= mx;  // exp without overflow (the bias test adds 1000)
    double z = 0, zk = 0;
    for (double x : l) z += std::exp(x);
    for (int j = 0; j < p.top_k; ++j) zk += std::exp(l[order[j]]) / z;
    std::vector<double> out(H);
    for (int j = 0; j < p.top_k; ++j) {
      const auto& x = w.experts[order[j]];
      double wt = std::exp(l[order[j]]) / z;
      if (p.norm_topk_prob) wt /= zk;
      std::vector<double> a(I);
      for (int64_t r = 0; r < I; ++r) {
        double g = 0, u = 0;
        for (int64_t i = 0; i < H; ++i) {
          g += double(x.gate.ptr<float>()[r * H + i]) * h[i];
          u += double(x.up.ptr<float>()[r * H + i]) * h[i];
        }
        a[r] = g / (1.0 + std::exp(-g)) * u;
      }
      for (int64_t o = 0; o < H; ++o) {
        double d = 0;
        for (int64_t r = 0; r < I; ++r) d += double(x.down.ptr<float>()[o * I + r]) * a[r];
        out[o] += wt * d;
      }
    }
    return out;
  }
  std::vector<float> run(const std::vector<float>& h, const layers::MoeSpec& s) const {
    const int64_t T = int64_t(h.size()) / H;
    layers::MlpWorkspace mws;
    layers::MoeWorkspace ws;
    std::vector<float> out(h.size());
    moe_mlp(w, s, Tensor(DType::F32, const_cast<float*>(h.data()), {T, H}), mws, ws,
            Tensor(DType::F32, out.data(), {T, H}));
    return out;
  }
};

std::vector<float> inputs(int64_t T, int64_t H, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.0f, 1.0f);
  std::vector<float> h(T * H);
  for (float& x : h) x = d(rng);
  return h;
}

void expect_matches_reference(const Fixture& f, const std::vector<float>& h, const layers::MoeSpec& s) {
  const auto out = f.run(h, s);
  for (int64_t t = 0; t < int64_t(h.size()) / f.H; ++t) {
    const auto want = f.ref(h.data() + t * f.H, s.route);
    for (int64_t i = 0; i < f.H; ++i) ASSERT_NEAR(out[t * f.H + i], want[i], 2e-5) << "token " << t << " dim " << i;
  }
}

TEST(MoeLayer, MatchesPerTokenReference) {
  Fixture f(1);
  for (int k : {1, 2, 4})
    for (bool norm : {false, true}) {
      layers::MoeSpec s;
      s.route.top_k = k;
      s.route.norm_topk_prob = norm;
      expect_matches_reference(f, inputs(29, f.H, 2), s);
    }
}

TEST(MoeLayer, OneExpertGetsEveryToken) {
  Fixture f(3);
  std::vector<float> bias(f.E, 0.0f);
  bias[4] = 1000.0f;  // expert 4 first for every token; with k = 1 the other experts get none
  f.w.router_bias = Tensor(DType::F32, bias.data(), {f.E});
  for (int k : {1, 2}) {
    layers::MoeSpec s;
    s.route.top_k = k;
    s.route.norm_topk_prob = true;
    expect_matches_reference(f, inputs(17, f.H, 4), s);
  }
}

TEST(MoeLayer, TopKEqualsNumExperts) {
  Fixture f(5);
  layers::MoeSpec s;
  s.route.top_k = int(f.E);
  expect_matches_reference(f, inputs(11, f.H, 6), s);
}

TEST(MoeLayer, RowAloneEqualsRowInBatch) {
  Fixture f(7);
  layers::MoeSpec s;
  s.route.top_k = 2;
  const auto h = inputs(40, f.H, 8);
  const auto all = f.run(h, s);
  for (int64_t t : {0, 13, 39}) {
    const auto one = f.run(std::vector<float>(h.begin() + t * f.H, h.begin() + (t + 1) * f.H), s);
    for (int64_t i = 0; i < f.H; ++i) ASSERT_EQ(one[i], all[t * f.H + i]) << "token " << t << " dim " << i;
  }
}

}  // namespace
}  // namespace oxyd::model::test
