// CPU Gated DeltaNet ops (see gated_delta_net.h). Shapes: qkv [T, 2·Hk·dk + Hv·dv], g / beta
// [T, Hv], state [num_slots, Hv, dk, dv], out [T, Hv, dv]. Scratch is per pool thread.
#include "backend/cpu/gated_delta_net.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "backend/cpu/dispatch.h"
#include "core/thread_pool.h"

namespace oxyd::backend::cpu {
namespace {

struct Dims {
  int64_t Hk, Hv, dk, dv, W, key_dim, group;
};

Dims dims_of(const Tensor& qkv, int64_t num_k_heads, const Tensor& out) {
  Dims d;
  d.Hk = num_k_heads, d.Hv = out.dim(1), d.dv = out.dim(2), d.W = qkv.dim(1);
  d.dk = (d.W - d.Hv * d.dv) / (2 * d.Hk), d.key_dim = d.Hk * d.dk, d.group = d.Hv / d.Hk;
  return d;
}

// q (L2-normalised, × dk^−½) and k (L2-normalised) of key head kh at token t.
void load_qk(const Dims& d, const float* row, int64_t kh, float* q, float* k) {
  float qq = 0, kk = 0;
  for (int64_t i = 0; i < d.dk; ++i) {
    q[i] = row[kh * d.dk + i], k[i] = row[d.key_dim + kh * d.dk + i];
    qq += q[i] * q[i], kk += k[i] * k[i];
  }
  const float qs = 1.0f / std::sqrt(qq + 1e-6f) / std::sqrt(float(d.dk)), ks = 1.0f / std::sqrt(kk + 1e-6f);
  for (int64_t i = 0; i < d.dk; ++i) q[i] *= qs, k[i] *= ks;
}

// Tokens [t0, t1) of value head h, one at a time, on state S [dk, dv].
void recurrent_head(const Dims& d, const Tensor& qkv, const Tensor& g, const Tensor& beta, int64_t h, int64_t t0,
                    int64_t t1, float* S, const Tensor& out) {
  thread_local std::vector<float> buf;
  buf.resize(2 * d.dk + d.dv);
  float *q = buf.data(), *k = q + d.dk, *u = k + d.dk;
  for (int64_t t = t0; t < t1; ++t) {
    const float* row = qkv.ptr<float>() + t * d.W;
    load_qk(d, row, h / d.group, q, k);
    const float decay = std::exp(g.ptr<float>()[t * d.Hv + h]), bt = beta.ptr<float>()[t * d.Hv + h];
    const float* v = row + 2 * d.key_dim + h * d.dv;
    for (int64_t j = 0; j < d.dv; ++j) u[j] = 0;
    for (int64_t i = 0; i < d.dk; ++i) {
      float* s = S + i * d.dv;
      for (int64_t j = 0; j < d.dv; ++j) s[j] *= decay, u[j] += s[j] * k[i];
    }
    for (int64_t j = 0; j < d.dv; ++j) u[j] = bt * (v[j] - u[j]);
    float* o = out.ptr<float>() + (t * d.Hv + h) * d.dv;
    for (int64_t j = 0; j < d.dv; ++j) o[j] = 0;
    for (int64_t i = 0; i < d.dk; ++i) {
      float* s = S + i * d.dv;
      for (int64_t j = 0; j < d.dv; ++j) s[j] += k[i] * u[j], o[j] += s[j] * q[i];
    }
  }
}

// Tokens [t0, t1) of value head h in chunks of kGdnChunk (the UT-transform form of transformers'
// torch_chunk_gated_delta_rule; a short last chunk needs no padding), on state S [dk, dv].
void chunked_head(const Dims& d, const Tensor& qkv, const Tensor& g, const Tensor& beta, int64_t h, int64_t t0,
                  int64_t t1, float* S, const Tensor& out) {
  const int64_t C = kGdnChunk, dk = d.dk, dv = d.dv;
  thread_local std::vector<float> buf;
  buf.resize(C * (3 * dk + 2 * dv + C + 2));
  float *Q = buf.data(), *K = Q + C * dk, *Wm = K + C * dk, *U = Wm + C * dk, *Vn = U + C * dv, *A = Vn + C * dv,
        *gam = A + C * C, *bt = gam + C;
  for (int64_t c0 = t0; c0 < t1; c0 += C) {
    const int64_t L = std::min(C, t1 - c0);
    float cum = 0;
    for (int64_t i = 0; i < L; ++i) {
      const int64_t t = c0 + i;
      const float* row = qkv.ptr<float>() + t * d.W;
      load_qk(d, row, h / d.group, Q + i * dk, K + i * dk);
      cum += g.ptr<float>()[t * d.Hv + h];
      gam[i] = cum;
      bt[i] = beta.ptr<float>()[t * d.Hv + h];
      const float* v = row + 2 * d.key_dim + h * dv;
      for (int64_t j = 0; j < dv; ++j) U[i * dv + j] = v[j] * bt[i];
      const float eg = std::exp(gam[i]);
      for (int64_t j = 0; j < dk; ++j) Wm[i * dk + j] = K[i * dk + j] * bt[i] * eg;
    }
    // A[i][j] = β_i (k_i·k_j) exp(γ_i − γ_j), j < i; forward substitution of (I + A) X = [vβ | kβ e^γ].
    for (int64_t i = 0; i < L; ++i)
      for (int64_t j = 0; j < i; ++j) {
        float s = 0;
        for (int64_t x = 0; x < dk; ++x) s += K[i * dk + x] * K[j * dk + x];
        A[i * C + j] = bt[i] * s * std::exp(gam[i] - gam[j]);
      }
    for (int64_t i = 1; i < L; ++i)
      for (int64_t j = 0; j < i; ++j) {
        const float a = A[i * C + j];
        for (int64_t x = 0; x < dv; ++x) U[i * dv + x] -= a * U[j * dv + x];
        for (int64_t x = 0; x < dk; ++x) Wm[i * dk + x] -= a * Wm[j * dk + x];
      }
    // V' = U − W S
    for (int64_t i = 0; i < L; ++i) {
      float* vn = Vn + i * dv;
      for (int64_t x = 0; x < dv; ++x) vn[x] = U[i * dv + x];
      for (int64_t y = 0; y < dk; ++y) {
        const float w = Wm[i * dk + y];
        const float* s = S + y * dv;
        for (int64_t x = 0; x < dv; ++x) vn[x] -= w * s[x];
      }
    }
    // O_i = e^{γ_i} q_iᵀ S + Σ_{j ≤ i} (q_i·k_j) e^{γ_i − γ_j} V'_j
    for (int64_t i = 0; i < L; ++i) {
      float* o = out.ptr<float>() + ((c0 + i) * d.Hv + h) * dv;
      const float eg = std::exp(gam[i]);
      for (int64_t x = 0; x < dv; ++x) o[x] = 0;
      for (int64_t y = 0; y < dk; ++y) {
        const float qv = Q[i * dk + y] * eg;
        const float* s = S + y * dv;
        for (int64_t x = 0; x < dv; ++x) o[x] += qv * s[x];
      }
      for (int64_t j = 0; j <= i; ++j) {
        float s = 0;
        for (int64_t x = 0; x < dk; ++x) s += Q[i * dk + x] * K[j * dk + x];
        s *= std::exp(gam[i] - gam[j]);
        for (int64_t x = 0; x < dv; ++x) o[x] += s * Vn[j * dv + x];
      }
    }
    // S ← e^{γ_L} S + Σ_j k_j e^{γ_L − γ_j} V'_jᵀ
    const float eL = std::exp(gam[L - 1]);
    for (int64_t y = 0; y < dk * dv; ++y) S[y] *= eL;
    for (int64_t j = 0; j < L; ++j) {
      const float e = std::exp(gam[L - 1] - gam[j]);
      for (int64_t y = 0; y < dk; ++y) {
        const float kv = K[j * dk + y] * e;
        float* s = S + y * dv;
        for (int64_t x = 0; x < dv; ++x) s[x] += kv * Vn[j * dv + x];
      }
    }
  }
}

enum class Form { AUTO, RECURRENT, CHUNKED };

void run(Form form, const Tensor& qkv, int64_t num_k_heads, const Tensor& g, const Tensor& beta, const Tensor& state,
         const Tensor& query_start_loc, const Tensor& state_slots, const Tensor& out) {
  const Dims d = dims_of(qkv, num_k_heads, out);
  const int64_t R = state_slots.dim(0);
  const int32_t* qsl = query_start_loc.ptr<int32_t>();
  const int32_t* slots = state_slots.ptr<int32_t>();
  parallel_for(R * d.Hv, 1, [&](int64_t begin, int64_t end) {
    for (int64_t p = begin; p < end; ++p) {
      const int64_t r = p / d.Hv, h = p % d.Hv, t0 = qsl[r], t1 = qsl[r + 1];
      float* S = state.ptr<float>() + (int64_t(slots[r]) * d.Hv + h) * d.dk * d.dv;
      const bool chunked = form == Form::CHUNKED || (form == Form::AUTO && t1 - t0 >= kGdnChunkMinTokens);
      if (chunked) chunked_head(d, qkv, g, beta, h, t0, t1, S, out);
      else recurrent_head(d, qkv, g, beta, h, t0, t1, S, out);
    }
  });
}

}  // namespace

void causal_conv1d(const Tensor& x, const Tensor& weight, const Tensor& conv_state, const Tensor& query_start_loc,
                   const Tensor& state_slots, const Tensor& y) {
  const int64_t C = x.dim(1), K = weight.dim(1), R = state_slots.dim(0);
  const int32_t* qsl = query_start_loc.ptr<int32_t>();
  const float* w = weight.ptr<float>();
  parallel_for(R, 1, [&](int64_t begin, int64_t end) {
    thread_local std::vector<float> win;
    for (int64_t r = begin; r < end; ++r) {
      const int64_t t0 = qsl[r], n = qsl[r + 1] - qsl[r];
      float* st = conv_state.ptr<float>() + int64_t(state_slots.ptr<int32_t>()[r]) * (K - 1) * C;
      // the window [state | tokens] as rows of C, then one output row per token
      win.resize((K - 1 + n) * C);
      std::copy_n(st, (K - 1) * C, win.data());
      std::copy_n(x.ptr<float>() + t0 * C, n * C, win.data() + (K - 1) * C);
      for (int64_t t = 0; t < n; ++t) {
        float* yo = y.ptr<float>() + (t0 + t) * C;
        for (int64_t c = 0; c < C; ++c) {
          float s = 0;
          for (int64_t j = 0; j < K; ++j) s += w[c * K + j] * win[(t + j) * C + c];
          yo[c] = s / (1.0f + std::exp(-s));
        }
      }
      std::copy_n(win.data() + n * C, (K - 1) * C, st);
    }
  });
}

void gdn_gating(const Tensor& a, const Tensor& b, const Tensor& A_log, const Tensor& dt_bias, const Tensor& g,
                const Tensor& beta) {
  const int64_t n = a.numel(), H = a.dim(1);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t h = i % H;
    const float av = a.ptr<float>()[i] + dt_bias.ptr<float>()[h];
    const float sp = av > 20.0f ? av : std::log1p(std::exp(av));
    const float bv = b.ptr<float>()[i];
    g.ptr<float>()[i] = -std::exp(A_log.ptr<float>()[h]) * sp;
    beta.ptr<float>()[i] = 1.0f / (1.0f + std::exp(-bv));
  }
}

void gated_delta_rule(const Tensor& qkv, int64_t num_k_heads, const Tensor& g, const Tensor& beta,
                      const Tensor& state, const Tensor& query_start_loc, const Tensor& state_slots,
                      const Tensor& out) {
  run(Form::AUTO, qkv, num_k_heads, g, beta, state, query_start_loc, state_slots, out);
}

void gated_delta_rule_recurrent(const Tensor& qkv, int64_t num_k_heads, const Tensor& g, const Tensor& beta,
                                const Tensor& state, const Tensor& query_start_loc, const Tensor& state_slots,
                                const Tensor& out) {
  run(Form::RECURRENT, qkv, num_k_heads, g, beta, state, query_start_loc, state_slots, out);
}

void gated_delta_rule_chunked(const Tensor& qkv, int64_t num_k_heads, const Tensor& g, const Tensor& beta,
                              const Tensor& state, const Tensor& query_start_loc, const Tensor& state_slots,
                              const Tensor& out) {
  run(Form::CHUNKED, qkv, num_k_heads, g, beta, state, query_start_loc, state_slots, out);
}

}  // namespace oxyd::backend::cpu
