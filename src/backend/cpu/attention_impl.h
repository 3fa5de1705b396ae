// Paged-attention tile kernel, compiled once per ISA (see simd.h), used for decode tiles (one query;
// attention_prefill_impl.h has the several-query kernel). One call handles request r,
// KV heads [g0, g1) and queries [i0, i1) of that request: M = queries · heads · group rows, each
// with a running max, sum and accumulator acc [M, head_dim] updated once per cache block
// (online softmax). Each K/V row is read once per tile and shared by its GQA group. Masked keys
// are never scored: a row only visits [max(block start, pos − W + 1), min(block end, pos + 1)).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "backend/cpu/attention_rows_impl.h"
#include "backend/cpu/simd.h"
#include "backend/op_params.h"
#include "core/kv_quant.h"

namespace oxyd::backend::cpu::OXYD_SIMD_NS {
namespace {

// Where keys and values are read from: float rows (an F32 cache, or a copy), or F16 / BF16 cache
// rows converted as they are loaded. Queries, scores and accumulators are always float.
struct F32Rows {
  using T = float;
  static F ld(const float* p) { return load(p); }
  static F ld_n(const float* p, int n) { return load_n(p, n); }
};
struct F16Rows {
  using T = uint16_t;
  static F ld(const uint16_t* p) { return load_f16(p); }
  static F ld_n(const uint16_t* p, int n) { return load_f16_n(p, n); }
};
struct BF16Rows {
  using T = uint16_t;
  static F ld(const uint16_t* p) { return load_bf16(p); }
  static F ld_n(const uint16_t* p, int n) { return load_bf16_n(p, n); }
};

template <class S>
inline float dot(const float* a, const typename S::T* b, int64_t n) {
  F s0 = zero(), s1 = zero();
  int64_t d = 0;
  for (; d + 2 * kW <= n; d += 2 * kW) {
    s0 = fma(load(a + d), S::ld(b + d), s0);
    s1 = fma(load(a + d + kW), S::ld(b + d + kW), s1);
  }
  for (; d < n; d += kW) {
    const int t = int(n - d < kW ? n - d : kW);
    s0 = fma(load_n(a + d, t), S::ld_n(b + d, t), s0);
  }
  return hsum(s0 + s1);
}

// Four dot products of a with b0..b3: one accumulator chain per key, so the FMAs of different
// keys overlap instead of waiting on each other.
template <class S, class T = typename S::T>
inline void dot4(const float* a, const T* b0, const T* b1, const T* b2, const T* b3, int64_t n, float* out) {
  F s0 = zero(), s1 = zero(), s2 = zero(), s3 = zero();
  int64_t d = 0;
  for (; d + kW <= n; d += kW) {
    const F x = load(a + d);
    s0 = fma(x, S::ld(b0 + d), s0), s1 = fma(x, S::ld(b1 + d), s1);
    s2 = fma(x, S::ld(b2 + d), s2), s3 = fma(x, S::ld(b3 + d), s3);
  }
  if (d < n) {
    const int t = int(n - d);
    const F x = load_n(a + d, t);
    s0 = fma(x, S::ld_n(b0 + d, t), s0), s1 = fma(x, S::ld_n(b1 + d, t), s1);
    s2 = fma(x, S::ld_n(b2 + d, t), s2), s3 = fma(x, S::ld_n(b3 + d, t), s3);
  }
  out[0] = hsum(s0), out[1] = hsum(s1), out[2] = hsum(s2), out[3] = hsum(s3);
}

// Dot products of two query rows with four keys: the key loads are shared by both rows.
template <class S>
inline void dot2x4(const float* a0, const float* a1, const typename S::T* k, int64_t ks, int64_t n, float* o0,
                   float* o1) {
  F s00 = zero(), s01 = zero(), s02 = zero(), s03 = zero(), s10 = zero(), s11 = zero(), s12 = zero(), s13 = zero();
  auto step = [&](F x0, F x1, F b0, F b1, F b2, F b3) {
    s00 = fma(x0, b0, s00), s01 = fma(x0, b1, s01), s02 = fma(x0, b2, s02), s03 = fma(x0, b3, s03);
    s10 = fma(x1, b0, s10), s11 = fma(x1, b1, s11), s12 = fma(x1, b2, s12), s13 = fma(x1, b3, s13);
  };
  int64_t d = 0;
  for (; d + kW <= n; d += kW)
    step(load(a0 + d), load(a1 + d), S::ld(k + d), S::ld(k + ks + d), S::ld(k + 2 * ks + d), S::ld(k + 3 * ks + d));
  if (d < n) {
    const int t = int(n - d);
    step(load_n(a0 + d, t), load_n(a1 + d, t), S::ld_n(k + d, t), S::ld_n(k + ks + d, t), S::ld_n(k + 2 * ks + d, t),
         S::ld_n(k + 3 * ks + d, t));
  }
  o0[0] = hsum(s00), o0[1] = hsum(s01), o0[2] = hsum(s02), o0[3] = hsum(s03);
  o1[0] = hsum(s10), o1[1] = hsum(s11), o1[2] = hsum(s12), o1[3] = hsum(s13);
}

// Scores of query rows q (and q1, if not null) against n keys k + j·ks.
template <class S>
void scores(const float* q, const float* q1, const typename S::T* k, int64_t ks, int64_t n, int64_t hd, float* s,
            float* s1) {
  int64_t j = 0;
  for (; j + 4 <= n; j += 4, k += 4 * ks) {
    if (q1) dot2x4<S>(q, q1, k, ks, hd, s + j, s1 + j);
    else dot4<S>(q, k, k + ks, k + 2 * ks, k + 3 * ks, hd, s + j);
  }
  for (; j < n; ++j, k += ks) {
    s[j] = dot<S>(q, k, hd);
    if (q1) s1[j] = dot<S>(q1, k, hd);
  }
}

// Two-row P·V: o0 = o0·alpha0 + Σ_j p0[j]·v_j, o1 likewise, over C chunks; V loads shared.
template <class S, int C>
inline void pv_chunks2(float* o0, float* o1, const typename S::T* v, int64_t stride, const float* p0, const float* p1,
                       int64_t n, F alpha0, F alpha1) {
  F acc0[C], acc1[C];
  for (int c = 0; c < C; ++c) acc0[c] = load(o0 + c * kW) * alpha0, acc1[c] = load(o1 + c * kW) * alpha1;
  for (int64_t j = 0; j < n; ++j, v += stride) {
    const F w0 = set1(p0[j]), w1 = set1(p1[j]);
    for (int c = 0; c < C; ++c) {
      const F x = S::ld(v + c * kW);
      acc0[c] = fma(w0, x, acc0[c]), acc1[c] = fma(w1, x, acc1[c]);
    }
  }
  for (int c = 0; c < C; ++c) store(o0 + c * kW, acc0[c]), store(o1 + c * kW, acc1[c]);
}

// o[0, C·kW) = o · alpha + Σ_j p[j] · v_j[0, C·kW) with v_j = v + j · stride. The C
// accumulators stay in registers across keys (independent FMA chains).
template <class S, int C>
inline void pv_chunks(float* o, const typename S::T* v, int64_t stride, const float* p, int64_t n, F alpha) {
  F acc[C];
  for (int c = 0; c < C; ++c) acc[c] = load(o + c * kW) * alpha;
  for (int64_t j = 0; j < n; ++j, v += stride) {
    const F pj = set1(p[j]);
    for (int c = 0; c < C; ++c) acc[c] = fma(pj, S::ld(v + c * kW), acc[c]);
  }
  for (int c = 0; c < C; ++c) store(o + c * kW, acc[c]);
}

template <class S>
void pv_row(float* o, const typename S::T* v, int64_t stride, const float* p, int64_t n, int64_t hd, F alpha) {
  int64_t d = 0;
  for (; d + 8 * kW <= hd; d += 8 * kW) pv_chunks<S, 8>(o + d, v + d, stride, p, n, alpha);
  if (d + 4 * kW <= hd) pv_chunks<S, 4>(o + d, v + d, stride, p, n, alpha), d += 4 * kW;
  if (d + 2 * kW <= hd) pv_chunks<S, 2>(o + d, v + d, stride, p, n, alpha), d += 2 * kW;
  if (d + kW <= hd) pv_chunks<S, 1>(o + d, v + d, stride, p, n, alpha), d += kW;
  if (d < hd) {  // masked tail chunk
    const int t = int(hd - d);
    F x = load_n(o + d, t) * alpha;
    for (int64_t j = 0; j < n; ++j) x = fma(set1(p[j]), S::ld_n(v + j * stride + d, t), x);
    store_n(o + d, x, t);
  }
}

template <class S>
void pv_row2(float* o0, float* o1, const typename S::T* v, int64_t stride, const float* p0, const float* p1, int64_t n,
             int64_t hd, F alpha0, F alpha1) {
  int64_t d = 0;
  for (; d + 4 * kW <= hd; d += 4 * kW) pv_chunks2<S, 4>(o0 + d, o1 + d, v + d, stride, p0, p1, n, alpha0, alpha1);
  if (d + 2 * kW <= hd) pv_chunks2<S, 2>(o0 + d, o1 + d, v + d, stride, p0, p1, n, alpha0, alpha1), d += 2 * kW;
  if (d + kW <= hd) pv_chunks2<S, 1>(o0 + d, o1 + d, v + d, stride, p0, p1, n, alpha0, alpha1), d += kW;
  if (d < hd) {  // masked tail chunk
    const int t = int(hd - d);
    F x0 = load_n(o0 + d, t) * alpha0, x1 = load_n(o1 + d, t) * alpha1;
    for (int64_t j = 0; j < n; ++j) {
      const F x = S::ld_n(v + j * stride + d, t);
      x0 = fma(set1(p0[j]), x, x0), x1 = fma(set1(p1[j]), x, x1);
    }
    store_n(o0 + d, x0, t), store_n(o1 + d, x1, t);
  }
}

}  // namespace

// keys [k_begin, k_end) limit the keys visited (split-K); partial == nullptr writes p.out,
// otherwise row m's unnormalized state goes to partial[m · (hd + 2)]: max, sum, acc[hd].
void attention_tile(const AttentionParams& p, int64_t r, int64_t g0, int64_t g1, int64_t i0, int64_t i1,
                    int64_t k_begin, int64_t k_end, float* partial) {
  const int64_t num_heads = p.num_heads(), num_kv_heads = p.num_kv_heads();
  const int64_t hd = p.head_dim(), bs = p.block_size(), group = num_heads / num_kv_heads;
  const int32_t* qsl = p.query_start_loc.ptr<int32_t>();
  const int64_t seq_len = p.seq_lens.ptr<int32_t>()[r];
  const int64_t query_len = qsl[r + 1] - qsl[r];
  const int64_t ctx = seq_len - query_len;  // position of query 0
  const int64_t G = g1 - g0;                // KV heads of this tile
  const int64_t M = (i1 - i0) * G * group;  // row m = ((i − i0)·G + (g − g0))·group + hh
  const int64_t W = p.sliding_window;
  const int32_t* blocks = p.block_table.ptr<int32_t>() + r * p.max_blocks_per_req();
  const bool f32 = p.k_cache.dtype == DType::F32, bf16 = p.k_cache.dtype == DType::BF16;
  const int64_t kv_stride = num_kv_heads * hd;  // elements between consecutive tokens of a block
  // Quantized cache: q arrives rotated (cpu::paged_attention), keys/values decode in that space.
  thread_local const KvQuantizer* kq = nullptr;
  if (p.kv_quant_bits > 0 && (!kq || kq->head_dim() != hd || kq->bits() != p.kv_quant_bits))
    kq = &kv_quantizer(hd, p.kv_quant_bits);
  const int64_t qrow_bytes = p.kv_quant_bits > 0 ? kq->row_bytes() : 0;

  // Over a quantized cache a tile decodes each block into f32 copies (all its heads of a token at
  // once); F32 / F16 / BF16 rows are read where they are, converted as they load. The dispatcher
  // gives this kernel one-query (decode) tiles, where a copy would cost more than the single pass
  // over the rows; several queries go to attention_prefill_tile (attention_prefill_impl.h).
  const bool copied = qrow_bytes > 0;
  thread_local std::vector<float> scratch;
  const size_t need = size_t(M * hd + 2 * M + group * (bs + 1) + (copied ? 2 * G * bs * hd : 0));
  if (scratch.size() < need) scratch.resize(need);
  float* acc = scratch.data();   // [M, hd]
  float* mrow = acc + M * hd;    // [M]
  float* lrow = mrow + M;        // [M]
  float* s = lrow + M;           // [group, bs] scores, then probabilities
  float* alphas = s + group * bs;  // [group] rescale of each row's accumulator this block
  float* kbuf = alphas + group;  // [G, bs, hd] (quantized caches)
  float* vbuf = kbuf + G * bs * hd;  // [G, bs, hd]
  std::fill(acc, acc + M * hd, 0.0f);
  std::fill(mrow, mrow + M, -INFINITY);
  std::fill(lrow, lrow + M, 0.0f);

  const int64_t k_lo = std::max(k_begin, W > 0 ? std::max<int64_t>(0, ctx + i0 - W + 1) : 0);
  const int64_t k_hi = std::min(k_end, ctx + i1);  // exclusive
  const F vscale = set1(p.scale);
  const bool cap = p.logit_softcap > 0;
  const F vcap = set1(p.logit_softcap), vinv = set1(cap ? 1.0f / p.logit_softcap : 0.0f);
  // Head g's keys [j0, j1) of one block: key j at kp + (j − j0)·kstride, value j likewise at vp.
  auto attend = [&]<class S>(S, int64_t g, int64_t j0, int64_t j1, const typename S::T* kp, const typename S::T* vp,
                             int64_t kstride) {
    for (int64_t ti = 0; ti < i1 - i0; ++ti) {
      const int64_t pos = ctx + i0 + ti;
      const int64_t a = std::max(j0, W > 0 ? pos - W + 1 : int64_t(0)), b = std::min(j1, pos + 1);
      if (a >= b) continue;
      const int64_t n = b - a;
      // The group's query heads share this key range: score them in pairs (key loads shared).
      const int64_t m0 = (ti * G + (g - g0)) * group;  // rows m0 .. m0 + group − 1
      const float* q = p.q.ptr<float>() + ((qsl[r] + i0 + ti) * num_heads + g * group) * hd;
      const auto* k0 = kp + (a - j0) * kstride;
      int64_t hh = 0;
      for (; hh + 2 <= group; hh += 2)
        scores<S>(q + hh * hd, q + (hh + 1) * hd, k0, kstride, n, hd, s + hh * bs, s + (hh + 1) * bs);
      if (hh < group) scores<S>(q + hh * hd, nullptr, k0, kstride, n, hd, s + hh * bs, nullptr);
      for (hh = 0; hh < group; ++hh) {
        float* sr = s + hh * bs;
        const int64_t m = m0 + hh;
        int64_t j;
        // scale and soft-cap the scores, then the running max
        for (j = 0; j < n; j += kW) {
          const int t = int(n - j < kW ? n - j : kW);
          F v = load_n(sr + j, t) * vscale;
          if (cap) v = vcap * tanh(v * vinv);
          store_n(sr + j, v, t);
        }
        float mx = mrow[m];
        for (j = 0; j < n; ++j) mx = std::max(mx, sr[j]);
        alphas[hh] = std::exp(mrow[m] - mx);  // exp(−inf) = 0 on the first visit
        F vsum = zero();
        const F vmx = set1(mx);
        for (j = 0; j < n; j += kW) {
          const int t = int(n - j < kW ? n - j : kW);
          const F e = keep_n(exp(load_n(sr + j, t) - vmx), t);
          store_n(sr + j, e, t);
          vsum = vsum + e;
        }
        lrow[m] = lrow[m] * alphas[hh] + hsum(vsum);
        mrow[m] = mx;
      }
      const auto* v0 = vp + (a - j0) * kstride;
      for (hh = 0; hh + 2 <= group; hh += 2)
        pv_row2<S>(acc + (m0 + hh) * hd, acc + (m0 + hh + 1) * hd, v0, kstride, s + hh * bs, s + (hh + 1) * bs, n,
                   hd, set1(alphas[hh]), set1(alphas[hh + 1]));
      if (hh < group) pv_row<S>(acc + (m0 + hh) * hd, v0, kstride, s + hh * bs, n, hd, set1(alphas[hh]));
    }
  };
  for (int64_t blk = k_lo / bs; k_lo < k_hi && blk * bs < k_hi; ++blk) {
    const int64_t j0 = std::max(k_lo, blk * bs), j1 = std::min(k_hi, (blk + 1) * bs);
    // A block is decoded token by token, all the tile's heads of a token at once: those are
    // contiguous in the cache, where one head's rows are num_kv_heads·head_dim apart.
    if (copied) {
      for (int64_t j = 0; j < j1 - j0; ++j) {
        const int64_t tok = int64_t(blocks[blk]) * bs + (j0 - blk * bs) + j;  // cache slot
        for (int64_t g = g0; g < g1; ++g) {
          const int64_t row = tok * num_kv_heads + g, dst = ((g - g0) * bs + j) * hd;
          dequant_row(*kq, p.k_cache.ptr<uint8_t>() + row * qrow_bytes, kbuf + dst);
          dequant_row(*kq, p.v_cache.ptr<uint8_t>() + row * qrow_bytes, vbuf + dst);
        }
      }
    }
    for (int64_t g = g0; g < g1; ++g) {
      const int64_t elem0 = ((int64_t(blocks[blk]) * bs + (j0 - blk * bs)) * num_kv_heads + g) * hd;
      if (copied)
        attend(F32Rows{}, g, j0, j1, kbuf + (g - g0) * bs * hd, vbuf + (g - g0) * bs * hd, hd);
      else if (f32)
        attend(F32Rows{}, g, j0, j1, p.k_cache.ptr<float>() + elem0, p.v_cache.ptr<float>() + elem0, kv_stride);
      else if (bf16)
        attend(BF16Rows{}, g, j0, j1, p.k_cache.ptr<uint16_t>() + elem0, p.v_cache.ptr<uint16_t>() + elem0, kv_stride);
      else
        attend(F16Rows{}, g, j0, j1, p.k_cache.ptr<uint16_t>() + elem0, p.v_cache.ptr<uint16_t>() + elem0, kv_stride);
    }
  }
  for (int64_t m = 0; m < M; ++m) {
    const int64_t ti = m / (G * group), g = g0 + (m / group) % G, h = g * group + m % group;
    finish_row(p, h, mrow[m], lrow[m], acc + m * hd, p.out.ptr<float>() + ((qsl[r] + i0 + ti) * num_heads + h) * hd,
               partial ? partial + m * (hd + 2) : nullptr);
  }
}

}  // namespace oxyd::backend::cpu::OXYD_SIMD_NS
