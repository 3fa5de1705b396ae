// Reference Gated DeltaNet ops (see gated_delta_net.h).
#include "backend/reference/gated_delta_net.h"

#include <cmath>
#include <vector>

namespace oxyd::backend::reference {

void causal_conv1d(const Tensor& x, const Tensor& weight, const Tensor& conv_state, const Tensor& query_start_loc,
                   const Tensor& state_slots, const Tensor& y) {
  const int64_t C = x.dim(1), K = weight.dim(1), R = state_slots.dim(0);
  const int32_t* qsl = query_start_loc.ptr<int32_t>();
  for (int64_t r = 0; r < R; ++r) {
    const int64_t t0 = qsl[r], n = qsl[r + 1] - qsl[r];
    float* st = conv_state.ptr<float>() + int64_t(state_slots.ptr<int32_t>()[r]) * (K - 1) * C;
    // in[i] for i in [0, K−1+n): the state, then the tokens
    auto in = [&](int64_t i, int64_t c) -> double {
      return i < K - 1 ? st[i * C + c] : x.ptr<float>()[(t0 + i - (K - 1)) * C + c];
    };
    for (int64_t t = 0; t < n; ++t)
      for (int64_t c = 0; c < C; ++c) {
        double s = 0;
        for (int64_t j = 0; j < K; ++j) s += double(weight.ptr<float>()[c * K + j]) * in(t + j, c);
        y.ptr<float>()[(t0 + t) * C + c] = float(s / (1.0 + std::exp(-s)));
      }
    std::vector<float> last((K - 1) * C);
    for (int64_t i = 0; i < K - 1; ++i)
      for (int64_t c = 0; c < C; ++c) last[i * C + c] = float(in(n + i, c));
    std::copy(last.begin(), last.end(), st);
  }
}

void gdn_gating(const Tensor& a, const Tensor& b, const Tensor& A_log, const Tensor& dt_bias, const Tensor& g,
                const Tensor& beta) {
  const int64_t T = a.dim(0), H = a.dim(1);
  for (int64_t t = 0; t < T; ++t)
    for (int64_t h = 0; h < H; ++h) {
      const double av = double(a.ptr<float>()[t * H + h]) + dt_bias.ptr<float>()[h];
      const double sp = av > 20 ? av : std::log1p(std::exp(av));  // torch softplus threshold 20
      const double bv = b.ptr<float>()[t * H + h];
      g.ptr<float>()[t * H + h] = float(-std::exp(double(A_log.ptr<float>()[h])) * sp);
      beta.ptr<float>()[t * H + h] = float(1.0 / (1.0 + std::exp(-bv)));
    }
}

void gated_delta_rule(const Tensor& qkv, int64_t num_k_heads, const Tensor& g, const Tensor& beta,
                      const Tensor& state, const Tensor& query_start_loc, const Tensor& state_slots,
                      const Tensor& out) {
  const int64_t Hv = out.dim(1), dv = out.dim(2), Hk = num_k_heads, R = state_slots.dim(0);
  const int64_t W = qkv.dim(1), dk = (W - Hv * dv) / (2 * Hk), key_dim = Hk * dk, group = Hv / Hk;
  const int32_t* qsl = query_start_loc.ptr<int32_t>();
  std::vector<double> S(dk * dv), q(dk), k(dk), u(dv);
  for (int64_t r = 0; r < R; ++r) {
    for (int64_t h = 0; h < Hv; ++h) {
      float* st = state.ptr<float>() + (int64_t(state_slots.ptr<int32_t>()[r]) * Hv + h) * dk * dv;
      for (int64_t i = 0; i < dk * dv; ++i) S[i] = st[i];
      const int64_t kh = h / group;
      for (int64_t t = qsl[r]; t < qsl[r + 1]; ++t) {
        const float* row = qkv.ptr<float>() + t * W;
        double qq = 0, kk = 0;
        for (int64_t i = 0; i < dk; ++i) {
          q[i] = row[kh * dk + i], k[i] = row[key_dim + kh * dk + i];
          qq += q[i] * q[i], kk += k[i] * k[i];
        }
        const double qs = 1.0 / std::sqrt(qq + 1e-6) / std::sqrt(double(dk)), ks = 1.0 / std::sqrt(kk + 1e-6);
        for (int64_t i = 0; i < dk; ++i) q[i] *= qs, k[i] *= ks;
        const double decay = std::exp(double(g.ptr<float>()[t * Hv + h])), bt = beta.ptr<float>()[t * Hv + h];
        const float* v = row + 2 * key_dim + h * dv;
        for (double& s : S) s *= decay;
        for (int64_t j = 0; j < dv; ++j) {
          double m = 0;
          for (int64_t i = 0; i < dk; ++i) m += S[i * dv + j] * k[i];
          u[j] = bt * (double(v[j]) - m);
        }
        for (int64_t i = 0; i < dk; ++i)
          for (int64_t j = 0; j < dv; ++j) S[i * dv + j] += k[i] * u[j];
        float* o = out.ptr<float>() + (t * Hv + h) * dv;
        for (int64_t j = 0; j < dv; ++j) {
          double m = 0;
          for (int64_t i = 0; i < dk; ++i) m += S[i * dv + j] * q[i];
          o[j] = float(m);
        }
      }
      for (int64_t i = 0; i < dk * dv; ++i) st[i] = float(S[i]);
    }
  }
}

}  // namespace oxyd::backend::reference
