// Gated DeltaNet per-head kernels and the causal conv's rows (see gated_delta_net.h), compiled
// once per ISA (simd.h) on its vectors of floats. Included by gated_delta_net.cc (scalar),
// gated_delta_net_avx2.cc and gated_delta_net_avx512.cc.
#include <algorithm>
#include <cmath>

#include "backend/cpu/gated_delta_net.h"
#include "backend/cpu/scratch_slots.h"
#include "backend/cpu/simd.h"
#include "core/thread_scratch.h"

namespace oxyd::backend::cpu::OXYD_SIMD_NS {
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

// Column blocks of the state passes: kNV vectors of u and Sᵀq stay in registers while the pass
// walks the dk rows, instead of a load and a store of each per row. AVX-512's 32 registers hold
// a whole 128-wide row (8 + 8 accumulators): one sequential sweep of the state; AVX2's 16 hold 32
// columns a sweep.
constexpr int kNV = kW == 16 ? 8 : 4;
constexpr int64_t kCols = kNV * kW;

// u[j] = Σ_i S[i][j]·k[i] and oq[j] = Σ_i S[i][j]·q[i] over columns [j0, j0 + kCols), i ascending.
inline void read_block(const float* __restrict S, int64_t dk, int64_t dv, int64_t j0, const float* k,
                       const float* q, float* __restrict u, float* __restrict oq) {
  F a[kNV], b[kNV];
  for (int v = 0; v < kNV; ++v) a[v] = zero(), b[v] = zero();
  for (int64_t i = 0; i < dk; ++i) {
    const float* s = S + i * dv + j0;
    const F ki = set1(k[i]), qi = set1(q[i]);
    for (int v = 0; v < kNV; ++v) {
      const F x = load(s + v * kW);
      a[v] = fma(x, ki, a[v]);
      b[v] = fma(x, qi, b[v]);
    }
  }
  for (int v = 0; v < kNV; ++v) store(u + j0 + v * kW, a[v]), store(oq + j0 + v * kW, b[v]);
}

// S[i][j] = e^g·S[i][j] + k[i]·u[j] over columns [j0, j0 + kCols).
inline void update_block(float* __restrict S, int64_t dk, int64_t dv, int64_t j0, const float* k, float decay,
                         const float* __restrict u) {
  F uv[kNV];
  for (int v = 0; v < kNV; ++v) uv[v] = load(u + j0 + v * kW);
  const F dc = set1(decay);
  for (int64_t i = 0; i < dk; ++i) {
    float* s = S + i * dv + j0;
    const F ki = set1(k[i]);
    for (int v = 0; v < kNV; ++v) store(s + v * kW, fma(ki, uv[v], dc * load(s + v * kW)));
  }
}

// Tokens [t0, t1) of value head h, one at a time, on state S [dk, dv]. One read pass gives Sᵀk
// and Sᵀq of the undecayed state; then u = β(v − e^g·Sᵀk), o = e^g·Sᵀq + u·(k·q) (= S'ᵀq), and
// one update pass S' = e^g·S + k uᵀ: the state is read twice and written once per token.
void recurrent_head(const Dims& d, const Tensor& qkv, const Tensor& g, const Tensor& beta, int64_t h, int64_t t0,
                    int64_t t1, float* __restrict S, const Tensor& out) {
  float* __restrict q = this_thread_scratch().get_as<float>(kGdnHeadSlot, size_t(2 * d.dk + 2 * d.dv));
  float* __restrict k = q + d.dk;
  float* __restrict u = k + d.dk;
  float* __restrict oq = u + d.dv;
  // Whole column blocks in registers; the rest row by row, with the same fma per element (so both
  // give the same bits). Row by row too: every column of the scalar copy, and on AVX2 a lone token
  // (decode), whose state comes from memory: AVX2's 32-column blocks sweep it in four strided
  // passes, which measured ~20% slower there than one sequential pass.
  const int64_t dk = d.dk, dv = d.dv;
  const int64_t full = kW == 1 || (kW < 16 && t1 - t0 == 1) ? 0 : dv / kCols * kCols;
  for (int64_t t = t0; t < t1; ++t) {
    const float* row = qkv.ptr<float>() + t * d.W;
    load_qk(d, row, h / d.group, q, k);
    const float decay = std::exp(g.ptr<float>()[t * d.Hv + h]), bt = beta.ptr<float>()[t * d.Hv + h];
    const float* v = row + 2 * d.key_dim + h * dv;
    float kq = 0;
    for (int64_t i = 0; i < dk; ++i) kq += k[i] * q[i];
    for (int64_t j0 = 0; j0 < full; j0 += kCols) read_block(S, dk, dv, j0, k, q, u, oq);
    for (int64_t j = full; j < dv; ++j) u[j] = 0, oq[j] = 0;
    for (int64_t i = 0; i < dk && full < dv; ++i) {
      const float* s = S + i * dv;
      const F ki = set1(k[i]), qi = set1(q[i]);
      for (int64_t j = full; j < dv; j += kW) {
        const int m = int(std::min<int64_t>(kW, dv - j));
        const F x = load_n(s + j, m);
        store_n(u + j, fma(x, ki, load_n(u + j, m)), m);
        store_n(oq + j, fma(x, qi, load_n(oq + j, m)), m);
      }
    }
    float* __restrict o = out.ptr<float>() + (t * d.Hv + h) * dv;
    for (int64_t j = 0; j < dv; ++j) {
      u[j] = bt * (v[j] - decay * u[j]);
      o[j] = decay * oq[j] + u[j] * kq;
    }
    for (int64_t j0 = 0; j0 < full; j0 += kCols) update_block(S, dk, dv, j0, k, decay, u);
    const F dc = set1(decay);
    for (int64_t i = 0; i < dk && full < dv; ++i) {
      float* s = S + i * dv;
      const F ki = set1(k[i]);
      for (int64_t j = full; j < dv; j += kW) {
        const int m = int(std::min<int64_t>(kW, dv - j));
        store_n(s + j, fma(ki, load_n(u + j, m), dc * load_n(s + j, m)), m);
      }
    }
  }
}

// Tokens [t0, t1) of value head h in chunks of kGdnChunk (the UT-transform form of transformers'
// torch_chunk_gated_delta_rule; a short last chunk needs no padding), on state S [dk, dv].
void chunked_head(const Dims& d, const Tensor& qkv, const Tensor& g, const Tensor& beta, int64_t h, int64_t t0,
                  int64_t t1, float* S, const Tensor& out) {
  const int64_t C = kGdnChunk, dk = d.dk, dv = d.dv;
  float* Q = this_thread_scratch().get_as<float>(kGdnHeadSlot, size_t(C * (3 * dk + 2 * dv + C + 2)));
  float *K = Q + C * dk, *Wm = K + C * dk, *U = Wm + C * dk, *Vn = U + C * dv, *A = Vn + C * dv,
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

}  // namespace

/// One request's causal conv (gated_delta_net.h): win [(K−1) + n, C] holds its conv state then its
/// n tokens, w [C, K] the weight; y [n, C] = silu(Σ_j w[·][j]·win[t + j]). Per vector of channels
/// its K taps are gathered once and serve every token; the sum runs over whole vectors of channels.
void conv_rows(const float* win, const float* w, int64_t K, int64_t C, int64_t n, float* y) {
  constexpr int64_t kMaxK = 8;  // Qwen3.5's is 4; a wider kernel takes the plain loop
  alignas(64) float tap[kMaxK][kW];
  for (int64_t c = 0; c < C; c += kW) {
    const int m = int(std::min<int64_t>(kW, C - c));
    if (K > kMaxK) {
      for (int64_t t = 0; t < n; ++t)
        for (int64_t i = c; i < c + m; ++i) {
          float s = 0;
          for (int64_t j = 0; j < K; ++j) s += w[i * K + j] * win[(t + j) * C + i];
          y[t * C + i] = s / (1.0f + std::exp(-s));
        }
      continue;
    }
    for (int64_t j = 0; j < K; ++j)
      for (int l = 0; l < kW; ++l) tap[j][l] = l < m ? w[(c + l) * K + j] : 0.0f;
    for (int64_t t = 0; t < n; ++t) {
      F s = zero();
      for (int64_t j = 0; j < K; ++j) s = fma(load(tap[j]), load_n(win + (t + j) * C + c, m), s);
      store_n(y + t * C + c, silu(s), m);
    }
  }
}

/// Tokens [t0, t1) of value head h of one request on its state S [dk, dv], in the chunked or
/// the recurrent form.
void gdn_head(bool chunked, const Tensor& qkv, int64_t num_k_heads, const Tensor& g, const Tensor& beta,
              const Tensor& out, int64_t h, int64_t t0, int64_t t1, float* S) {
  const Dims d = dims_of(qkv, num_k_heads, out);
  if (chunked) chunked_head(d, qkv, g, beta, h, t0, t1, S, out);
  else recurrent_head(d, qkv, g, beta, h, t0, t1, S, out);
}

}  // namespace oxyd::backend::cpu::OXYD_SIMD_NS
