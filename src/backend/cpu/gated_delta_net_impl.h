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
  const float* qs = row + kh * d.dk;
  const float* ks = row + d.key_dim + kh * d.dk;
  F qq = zero(), kk = zero();
  for (int64_t i = 0; i < d.dk; i += kW) {
    const int m = int(std::min<int64_t>(kW, d.dk - i));
    const F a = load_n(qs + i, m), b = load_n(ks + i, m);
    qq = fma(a, a, qq), kk = fma(b, b, kk);
  }
  const F qf = set1(1.0f / std::sqrt(hsum(qq) + 1e-6f) / std::sqrt(float(d.dk)));
  const F kf = set1(1.0f / std::sqrt(hsum(kk) + 1e-6f));
  for (int64_t i = 0; i < d.dk; i += kW) {
    const int m = int(std::min<int64_t>(kW, d.dk - i));
    store_n(q + i, qf * load_n(qs + i, m), m), store_n(k + i, kf * load_n(ks + i, m), m);
  }
}

// The q, k and v rows of head h of a token kAhead tokens on: a head's rows are a few hundred bytes
// of each token's qkv row (tens of KB apart), which the hardware prefetchers do not follow.
constexpr int64_t kAhead = 4;
inline void prefetch_head_rows(const Dims& d, const float* row, int64_t h) {
  const float* parts[3] = {row + h / d.group * d.dk, row + d.key_dim + h / d.group * d.dk,
                           row + 2 * d.key_dim + h * d.dv};
  const int64_t lens[3] = {d.dk, d.dk, d.dv};
  for (int p = 0; p < 3; ++p)
    for (int64_t i = 0; i < lens[p]; i += 16) __builtin_prefetch(parts[p] + i);
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

// C[i][n] (+)= Σ_p A[i·lda + p]·B[p·ldb + n] for i < m, n < nn, p < k: the small products of the
// chunked form. Tiles of RM rows × RN vectors stay in registers over the whole k loop (AVX-512
// 4 × 4: 16 accumulators; AVX2 4 × 2); a last partial vector takes masked loads and stores.
constexpr int kRN = kW == 16 ? 4 : 2;

template <int RM, int RN, bool kTail>
inline void gemm_tile(int64_t k, const float* A, int64_t lda, const float* B, int64_t ldb, float* C, int64_t ldc,
                      bool acc, int tail) {
  F c[RM][RN];
  const auto ld = [&](const float* p, int v) { return kTail && v == RN - 1 ? load_n(p, tail) : load(p); };
  for (int r = 0; r < RM; ++r)
    for (int v = 0; v < RN; ++v) c[r][v] = acc ? ld(C + r * ldc + v * kW, v) : zero();
  for (int64_t p = 0; p < k; ++p) {
    F b[RN];
    for (int v = 0; v < RN; ++v) b[v] = ld(B + p * ldb + v * kW, v);
    for (int r = 0; r < RM; ++r) {
      const F a = set1(A[r * lda + p]);
      for (int v = 0; v < RN; ++v) c[r][v] = fma(a, b[v], c[r][v]);
    }
  }
  for (int r = 0; r < RM; ++r)
    for (int v = 0; v < RN; ++v) {
      if (kTail && v == RN - 1) store_n(C + r * ldc + v * kW, c[r][v], tail);
      else store(C + r * ldc + v * kW, c[r][v]);
    }
}

template <int RM>
inline void gemm_rows(int64_t nn, int64_t k, const float* A, int64_t lda, const float* B, int64_t ldb, float* C,
                      int64_t ldc, bool acc) {
  int64_t j = 0;
  for (; j + kRN * kW <= nn; j += kRN * kW) gemm_tile<RM, kRN, false>(k, A, lda, B + j, ldb, C + j, ldc, acc, kW);
  for (; j + 2 * kW <= nn; j += 2 * kW) gemm_tile<RM, 2, false>(k, A, lda, B + j, ldb, C + j, ldc, acc, kW);
  for (; j < nn; j += kW)
    gemm_tile<RM, 1, true>(k, A, lda, B + j, ldb, C + j, ldc, acc, int(std::min<int64_t>(kW, nn - j)));
}

void gemm(int64_t m, int64_t nn, int64_t k, const float* A, int64_t lda, const float* B, int64_t ldb, float* C,
          int64_t ldc, bool acc) {
  int64_t i = 0;
  for (; i + 4 <= m; i += 4) gemm_rows<4>(nn, k, A + i * lda, lda, B, ldb, C + i * ldc, ldc, acc);
  switch (m - i) {
    case 3: gemm_rows<3>(nn, k, A + i * lda, lda, B, ldb, C + i * ldc, ldc, acc); break;
    case 2: gemm_rows<2>(nn, k, A + i * lda, lda, B, ldb, C + i * ldc, ldc, acc); break;
    case 1: gemm_rows<1>(nn, k, A + i * lda, lda, B, ldb, C + i * ldc, ldc, acc); break;
    default: break;
  }
}

// y[0, n) += a·x[0, n)
inline void axpy(int64_t n, float a, const float* __restrict x, float* __restrict y) {
  const F av = set1(a);
  for (int64_t j = 0; j < n; j += kW) {
    const int m = int(std::min<int64_t>(kW, n - j));
    store_n(y + j, fma(av, load_n(x + j, m), load_n(y + j, m)), m);
  }
}

// Tokens [t0, t1) of value head h in chunks of kGdnChunk (the UT-transform form of transformers'
// torch_chunk_gated_delta_rule; a short last chunk needs no padding), on state S [dk, dv]. Per chunk
// of L tokens, with γ the cumulative log decay inside it:
//   G = [K Kᵀ ; Q Kᵀ]; A[i][j] = β_i (k_i·k_j) e^{γ_i − γ_j} (j < i), M[i][j] = (q_i·k_j) e^{γ_i − γ_j} (j ≤ i)
//   (I + A) X = [Vβ | −Kβe^γ] by blocked forward substitution; V' = X_U + X_W S
//   O = diag(e^γ) Q S + M V';  S ← e^{γ_L} S + (K e^{γ_L − γ})ᵀ V'
// every product a register-tiled gemm above.
void chunked_head(const Dims& d, const Tensor& qkv, const Tensor& g, const Tensor& beta, int64_t h, int64_t t0,
                  int64_t t1, float* S, const Tensor& out) {
  const int64_t C = kGdnChunk, dk = d.dk, dv = d.dv, ldx = dv + dk, ldo = d.Hv * dv;
  float* Q = this_thread_scratch().get_as<float>(kGdnHeadSlot,
                                                 size_t(C * (3 * dk + 2 * C + ldx + dv + 3)));
  float *K = Q + C * dk, *KT = K + C * dk, *G = KT + dk * C, *X = G + 2 * C * C, *Vn = X + C * ldx,
        *gam = Vn + C * dv, *bt = gam + C, *e = bt + C;
  float* Mq = G + C * C;
  for (int64_t c0 = t0; c0 < t1; c0 += C) {
    const int64_t L = std::min(C, t1 - c0);
    float cum = 0;
    for (int64_t i = 0; i < L; ++i) {
      const int64_t t = c0 + i;
      const float* row = qkv.ptr<float>() + t * d.W;
      if (t + kAhead < t1) prefetch_head_rows(d, row + kAhead * d.W, h);
      load_qk(d, row, h / d.group, Q + i * dk, K + i * dk);
      cum += g.ptr<float>()[t * d.Hv + h];
      gam[i] = cum;
      bt[i] = beta.ptr<float>()[t * d.Hv + h];
      const float* v = row + 2 * d.key_dim + h * dv;
      float* x = X + i * ldx;
      const float kb = -bt[i] * std::exp(gam[i]);
      for (int64_t j = 0; j < dv; ++j) x[j] = v[j] * bt[i];
      for (int64_t j = 0; j < dk; ++j) x[dv + j] = K[i * dk + j] * kb, KT[j * C + i] = K[i * dk + j];
    }
    // lower triangles only: rows [i0, i0 + 4) need columns [0, i0 + 4)
    for (int64_t i0 = 0; i0 < L; i0 += 4) {
      const int64_t rm = std::min<int64_t>(4, L - i0), nc = i0 + rm;
      gemm(rm, nc, dk, K + i0 * dk, dk, KT, C, G + i0 * C, C, false);
      gemm(rm, nc, dk, Q + i0 * dk, dk, KT, C, Mq + i0 * C, C, false);
    }
    // G's rows become −A (strictly lower), Mq's M (lower with the diagonal); e = e^{γ_i − γ_j}
    for (int64_t i = 0; i < L; ++i) {
      const F gi = set1(gam[i]);
      for (int64_t j = 0; j <= i; j += kW) {
        const int m = int(std::min<int64_t>(kW, i + 1 - j));
        store_n(e + j, exp(gi - load_n(gam + j, m)), m);
      }
      float *a = G + i * C, *mq = Mq + i * C;
      for (int64_t j = 0; j <= i; ++j) {
        a[j] = j < i ? -bt[i] * a[j] * e[j] : 0.0f;
        mq[j] *= e[j];
      }
      for (int64_t j = i + 1; j < std::min(L, (i | 3) + 1); ++j) a[j] = 0.0f, mq[j] = 0.0f;
    }
    // forward substitution in blocks of 4 rows: the rows above by gemm, the block's own by axpy
    for (int64_t i0 = 0; i0 < L; i0 += 4) {
      const int64_t rm = std::min<int64_t>(4, L - i0);
      if (i0 > 0) gemm(rm, ldx, i0, G + i0 * C, C, X, ldx, X + i0 * ldx, ldx, true);
      for (int64_t r = 1; r < rm; ++r)
        for (int64_t q = 0; q < r; ++q) axpy(ldx, G[(i0 + r) * C + i0 + q], X + (i0 + q) * ldx, X + (i0 + r) * ldx);
    }
    // V' = X_U + X_W S (X_W holds −W)
    for (int64_t i = 0; i < L; ++i) std::copy_n(X + i * ldx, dv, Vn + i * dv);
    gemm(L, dv, dk, X + dv, ldx, S, dv, Vn, dv, true);
    // O = diag(e^γ) Q S + M V'
    for (int64_t i = 0; i < L; ++i) {
      const float eg = std::exp(gam[i]);
      for (int64_t j = 0; j < dk; ++j) Q[i * dk + j] *= eg;
    }
    float* o = out.ptr<float>() + (c0 * d.Hv + h) * dv;
    gemm(L, dv, dk, Q, dk, S, dv, o, ldo, false);
    for (int64_t i0 = 0; i0 < L; i0 += 4) {
      const int64_t rm = std::min<int64_t>(4, L - i0);
      gemm(rm, dv, i0 + rm, Mq + i0 * C, C, Vn, dv, o + i0 * ldo, ldo, true);
    }
    // S ← e^{γ_L} S + (K e^{γ_L − γ})ᵀ V'
    const float gL = gam[L - 1], eL = std::exp(gL);
    for (int64_t y = 0; y < dk * dv; y += kW) {
      const int m = int(std::min<int64_t>(kW, dk * dv - y));
      store_n(S + y, set1(eL) * load_n(S + y, m), m);
    }
    for (int64_t j = 0; j < L; ++j) e[j] = std::exp(gL - gam[j]);
    for (int64_t y = 0; y < dk; ++y)
      for (int64_t j = 0; j < L; ++j) KT[y * C + j] *= e[j];
    gemm(dk, dv, L, KT, C, Vn, dv, S, dv, true);
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
