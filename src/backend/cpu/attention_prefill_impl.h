// Paged-attention tile kernel for several queries (prefill), compiled once per ISA (see simd.h):
// the contract of backend/reference/attention.h, computed as small matrix products.
// For each KV head of the tile, its R = queries · group query rows (scaled) meet the key range
// chunk by chunk (kChunk keys, across blocks, at multiples of kChunk): the chunk's keys transposed
// into kt [hd, kChunk] (one dimension of every key a contiguous run) and its values as float rows
// of hdp (F32 rows of one KV head read in place), prepared once per call for all tiles
// (PrefillKeys, attention.cc) or by the tile itself. Scores S = Q·Kᵀ come from register tiles of
// NR rows × 2·kW keys (no horizontal sums), are masked (causal unless p.causal is false, window),
// soft-capped and folded
// into each row's online softmax, and O = O·α + P·V from register tiles of NR rows × 2·kW dims.
// Every query takes this kernel, decode steps included (one query, its group's rows): a row's
// result then depends on its own query and keys only (chunks and segments at absolute key
// positions), not on how many queries or requests share the call (batch invariance).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "backend/cpu/attention_prefill.h"
#include "backend/cpu/attention_rows_impl.h"
#include "backend/cpu/scratch_slots.h"
#include "backend/cpu/simd.h"
#include "backend/op_params.h"
#include "core/kv_quant.h"
#include "core/thread_scratch.h"

namespace oxyd::backend::cpu::OXYD_SIMD_NS {
namespace {

constexpr int64_t kChunk = kPrefillChunk;  // kt and vb stay within L2 next to Q and O
constexpr int kTileRows = 6;  // NR: 6 rows × 2 vectors = 12 accumulators, plus the shared loads

// s[i·kChunk + j] = q_i · k_j for rows i < NR (q rows qs apart) and keys j in [0, 2·kW) of kt.
template <int NR>
inline void score_tile(const float* q, int64_t qs, int64_t hd, const float* kt, float* s) {
  F a0[NR], a1[NR];
  for (int i = 0; i < NR; ++i) a0[i] = zero(), a1[i] = zero();
  for (int64_t d = 0; d < hd; ++d, kt += kChunk) {
    const F k0 = load(kt), k1 = load(kt + kW);
    for (int i = 0; i < NR; ++i) {
      const F x = set1(q[i * qs + d]);
      a0[i] = fma(x, k0, a0[i]), a1[i] = fma(x, k1, a1[i]);
    }
  }
  for (int i = 0; i < NR; ++i) store(s + i * kChunk, a0[i]), store(s + i * kChunk + kW, a1[i]);
}

// o_i[0, 2·kW) = o_i·alpha_i + Σ_{j ∈ [j0, j1)} p_i[j]·v_j for rows i < NR (o rows os apart, p rows
// kChunk apart, value j at v[j] + d).
template <int NR>
inline void pv_tile(float* o, int64_t os, const float* const* v, int64_t d, const float* p, int64_t j0, int64_t j1,
                    const float* alpha) {
  F a0[NR], a1[NR];
  for (int i = 0; i < NR; ++i) {
    const F al = set1(alpha[i]);
    a0[i] = load(o + i * os) * al, a1[i] = load(o + i * os + kW) * al;
  }
  for (int64_t j = j0; j < j1; ++j) {
    const F v0 = load(v[j] + d), v1 = load(v[j] + d + kW);
    for (int i = 0; i < NR; ++i) {
      const F w = set1(p[i * kChunk + j]);
      a0[i] = fma(w, v0, a0[i]), a1[i] = fma(w, v1, a1[i]);
    }
  }
  for (int i = 0; i < NR; ++i) store(o + i * os, a0[i]), store(o + i * os + kW, a1[i]);
}

// fn(std::integral_constant<int, NR>) for NR = nr ∈ [1, kTileRows].
template <class Fn>
inline void with_rows(int nr, Fn&& fn) {
  static_assert(kTileRows == 6);
  switch (nr) {
    case 6: return fn(std::integral_constant<int, 6>{});
    case 5: return fn(std::integral_constant<int, 5>{});
    case 4: return fn(std::integral_constant<int, 4>{});
    case 3: return fn(std::integral_constant<int, 3>{});
    case 2: return fn(std::integral_constant<int, 2>{});
    default: return fn(std::integral_constant<int, 1>{});
  }
}

// kt[d·kChunk + j] = rows[j][d] for keys j < nk and dimensions d < hd. With AVX2, 8 × 8 blocks
// are transposed in registers (a scalar scatter cost a tenth of the tile's time).
void transpose_keys(const float* const* rows, int64_t nk, int64_t hd, float* kt) {
  int64_t j = 0;
#if defined(OXYD_ISA_AVX2) || defined(OXYD_ISA_AVX512)
  for (; j + 8 <= nk; j += 8) {
    const float* const* rw = rows + j;
    int64_t d = 0;
    for (; d + 8 <= hd; d += 8) {
      __m256 t[8], u[8];
      for (int k = 0; k < 8; k += 2) {
        const __m256 a = _mm256_loadu_ps(rw[k] + d), b = _mm256_loadu_ps(rw[k + 1] + d);
        t[k] = _mm256_unpacklo_ps(a, b), t[k + 1] = _mm256_unpackhi_ps(a, b);  // pairs of rows k, k+1
      }
      for (int k = 0; k < 8; k += 4) {  // quads of rows: dimensions {0,4}, {1,5}, {2,6}, {3,7}
        u[k] = _mm256_shuffle_ps(t[k], t[k + 2], 0x44), u[k + 1] = _mm256_shuffle_ps(t[k], t[k + 2], 0xEE);
        u[k + 2] = _mm256_shuffle_ps(t[k + 1], t[k + 3], 0x44), u[k + 3] = _mm256_shuffle_ps(t[k + 1], t[k + 3], 0xEE);
      }
      float* dst = kt + d * kChunk + j;
      for (int k = 0; k < 4; ++k) {
        _mm256_storeu_ps(dst + k * kChunk, _mm256_permute2f128_ps(u[k], u[k + 4], 0x20));
        _mm256_storeu_ps(dst + (k + 4) * kChunk, _mm256_permute2f128_ps(u[k], u[k + 4], 0x31));
      }
    }
    for (; d < hd; ++d)
      for (int k = 0; k < 8; ++k) kt[d * kChunk + j + k] = rw[k][d];
  }
#endif
  for (; j < nk; ++j)
    for (int64_t d = 0; d < hd; ++d) kt[d * kChunk + j] = rows[j][d];
}

// Cache slot `slot`, KV head g, as float32: the row itself (F32 cache) or tmp, filled from it.
inline const float* cache_row(const AttentionParams& p, const Tensor& cache, const KvQuantizer* kq, int64_t slot,
                              int64_t g, float* tmp) {
  const int64_t hd = p.head_dim(), row = slot * p.num_kv_heads() + g;
  if (kq) {
    dequant_row(*kq, cache.ptr<uint8_t>() + row * kq->row_bytes(), tmp);
  } else if (cache.dtype == DType::F32) {
    return cache.ptr<float>() + row * hd;
  } else {
    to_f32_row(cache.ptr<uint16_t>() + row * hd, cache.dtype == DType::BF16, hd, tmp);
  }
  return tmp;
}

// O and V rows padded to whole register tiles.
inline int64_t padded_dim(int64_t hd) { return (hd + 2 * kW - 1) / (2 * kW) * (2 * kW); }

// Values are read where they are when they are contiguous F32 rows of whole tiles (one KV head),
// otherwise copied into padded rows (reading a head's rows num_kv_heads·hd apart measured slower).
inline bool values_in_place(const AttentionParams& p) {
  return !kv_format_quantized(p.kv_format) && p.v_cache.dtype == DType::F32 && padded_dim(p.head_dim()) == p.head_dim() &&
         p.num_kv_heads() == 1;
}

inline const KvQuantizer* quantizer(const AttentionParams& p) {
  const int bits = kv_format_bits(p.kv_format);
  return bits == 0 ? nullptr : &kv_quantizer(p.head_dim(), bits);
}

inline int64_t slot_of(const AttentionParams& p, int64_t r, int64_t key) {
  const int64_t bs = p.block_size();
  return int64_t(p.block_table.ptr<int32_t>()[r * p.max_blocks_per_req() + key / bs]) * bs + key % bs;
}

// Keys [c0 + lo, c0 + hi) of request r, KV head g (0 ≤ lo < hi ≤ kChunk): kt [hd, kChunk] gets them
// transposed, vb [kChunk, hdp] (unless values_in_place) their values as float rows. The chunk's
// other columns of kt and the padding of vb rows are left as they are: register tiles compute them,
// but no score outside a row's visible keys is read, and O's padding columns are never output.
void fill_chunk(const AttentionParams& p, int64_t r, int64_t g, int64_t c0, int64_t lo, int64_t hi, float* kt,
                float* vb) {
  const int64_t hd = p.head_dim(), hdp = padded_dim(hd);
  const KvQuantizer* kq = quantizer(p);
  float* kb = this_thread_scratch().get_as<float>(kAttnKeySlot, size_t(kChunk * hd));  // converted keys
  const float* krows[kChunk];
  const bool in_place = values_in_place(p);
  for (int64_t j = lo; j < hi; ++j) {
    const int64_t slot = slot_of(p, r, c0 + j);
    krows[j] = cache_row(p, p.k_cache, kq, slot, g, kb + j * hd);
    if (in_place) continue;
    float* v = vb + j * hdp;
    if (const float* src = cache_row(p, p.v_cache, kq, slot, g, v); src != v) std::copy_n(src, hd, v);
  }
  transpose_keys(krows + lo, hi - lo, hd, kt + lo);
}

}  // namespace

int64_t prefill_unit_floats(const AttentionParams& p) {
  return p.head_dim() * kChunk + (values_in_place(p) ? 0 : kChunk * padded_dim(p.head_dim()));
}

// One unit of PrefillKeys: kt [hd, kChunk], then (unless values_in_place) vb [kChunk, hdp].
void prefill_prepare_chunk(const AttentionParams& p, int64_t r, int64_t g, int64_t c0, int64_t lo, int64_t hi,
                           float* unit) {
  fill_chunk(p, r, g, c0, lo, hi, unit, unit + p.head_dim() * kChunk);
}

// keys [k_begin, k_end) limit the keys visited (split-K); partial == nullptr writes p.out, otherwise
// row m's unnormalized state goes to partial[m · (hd + 2)]: max, sum, acc[hd]. pk: request r's
// prepared chunks, or data == nullptr.
void attention_prefill_tile(const AttentionParams& p, const PrefillKeys& pk, int64_t r, int64_t g0, int64_t g1,
                            int64_t i0, int64_t i1, int64_t k_begin, int64_t k_end, float* partial) {
  const int64_t num_heads = p.num_heads(), num_kv_heads = p.num_kv_heads();
  const int64_t hd = p.head_dim(), group = num_heads / num_kv_heads, hdp = padded_dim(hd);
  const int32_t* qsl = p.query_start_loc.ptr<int32_t>();
  const int64_t query_len = qsl[r + 1] - qsl[r];
  const int64_t ctx = p.seq_lens.ptr<int32_t>()[r] - query_len;  // position of query 0
  const int64_t G = g1 - g0, nq = i1 - i0, R = nq * group, W = p.sliding_window;
  const bool in_place = values_in_place(p);

  const size_t need = size_t(3 * R * hdp + R * kChunk + 5 * R + (pk.data ? 0 : hd * kChunk + kChunk * hdp));
  float* qb = this_thread_scratch().get_as<float>(kAttnTileSlot, need);  // [R, hdp] scaled queries
  float* ob = qb + R * hdp;           // [R, hdp] accumulators
  float* sb = ob + R * hdp;           // [R, kChunk] scores, then probabilities
  float* mrow = sb + R * kChunk;      // [R] running max
  float* lrow = mrow + R;             // [R] running sum
  float* alpha = lrow + R;            // [R] this chunk's rescale
  float* ot = alpha + R;              // [R, hdp] running totals over whole segments
  float* mt = ot + R * hdp;           // [R] their max
  float* lt = mt + R;                 // [R] their sum
  float* kt_own = lt + R;             // [hd, kChunk] this tile's chunk, without pk
  float* vb_own = kt_own + hd * kChunk;  // [kChunk, hdp]
  const float* vrows[kChunk];         // each value: a cache row, or a padded row

  const F vcap = set1(p.logit_softcap), vinv = set1(p.logit_softcap > 0 ? 1.0f / p.logit_softcap : 0.0f);
  const bool cap = p.logit_softcap > 0;
  for (int64_t g = g0; g < g1; ++g) {
    // local row ri = ti·group + hh ↔ query i0 + ti, head g·group + hh
    for (int64_t ti = 0; ti < nq; ++ti) {
      const float* q = p.q.ptr<float>() + ((qsl[r] + i0 + ti) * num_heads + g * group) * hd;
      for (int64_t hh = 0; hh < group; ++hh)
        for (int64_t d = 0; d < hd; ++d) qb[(ti * group + hh) * hdp + d] = q[hh * hd + d] * p.scale;
    }
    auto start_segment = [&] {
      std::fill(ob, ob + R * hdp, 0.0f);
      std::fill(mrow, mrow + R, -INFINITY);
      std::fill(lrow, lrow + R, 0.0f);
    };
    // Each row's segment state joins its total at every segment boundary (kAttentionSegment), the
    // same merges in the same order as split-K's (attention.cc), so splitting changes nothing.
    auto fold_segment = [&] {
      for (int64_t ri = 0; ri < R; ++ri)
        merge_state(mt[ri], lt[ri], ot + ri * hdp, mrow[ri], lrow[ri], ob + ri * hdp, hd);
    };
    std::fill(ot, ot + R * hdp, 0.0f);
    std::fill(mt, mt + R, -INFINITY);
    std::fill(lt, lt + R, 0.0f);
    start_segment();
    const int64_t k_lo = std::max(k_begin, W > 0 ? std::max<int64_t>(0, ctx + i0 - W + 1) : 0);
    const int64_t k_hi = std::min(k_end, p.causal ? ctx + i1 : ctx + query_len);  // exclusive
    for (int64_t c0 = k_lo / kChunk * kChunk; c0 < k_hi; c0 += kChunk) {
      if (c0 % kAttentionSegment == 0 && c0 > k_lo / kChunk * kChunk) {
        fold_segment();
        start_segment();
      }
      const int64_t lo_c = std::max(k_lo, c0) - c0, hi_c = std::min(k_hi, c0 + kChunk) - c0;
      const float* kt = kt_own;
      const float* vb = vb_own;
      if (pk.data) {
        kt = pk.data + (g * pk.chunks + c0 / kChunk - pk.first_chunk) * pk.unit_floats;
        vb = kt + hd * kChunk;
      } else {
        fill_chunk(p, r, g, c0, lo_c, hi_c, kt_own, vb_own);
      }
      for (int64_t j = lo_c; j < hi_c; ++j)
        vrows[j] = in_place ? p.v_cache.ptr<float>() + (slot_of(p, r, c0 + j) * num_kv_heads + g) * hd : vb + j * hdp;
      for (int64_t r0 = 0; r0 < R; r0 += kTileRows) {
        const int nr = int(std::min<int64_t>(kTileRows, R - r0));
        // keys [lo_i, hi_i) of the chunk that row i sees; the tile spans their union
        int64_t t_lo = hi_c, t_hi = lo_c;
        int64_t lo[kTileRows], hi[kTileRows];
        for (int i = 0; i < nr; ++i) {
          const int64_t pos = ctx + i0 + (r0 + i) / group;
          lo[i] = std::clamp<int64_t>((W > 0 ? pos - W + 1 : 0) - c0, lo_c, hi_c);
          hi[i] = p.causal ? std::clamp<int64_t>(pos + 1 - c0, lo_c, hi_c) : hi_c;
          if (lo[i] < hi[i]) t_lo = std::min(t_lo, lo[i]), t_hi = std::max(t_hi, hi[i]);
        }
        if (t_lo >= t_hi) continue;
        float* s = sb + r0 * kChunk;
        const int64_t tile_end = (t_hi + 2 * kW - 1) / (2 * kW) * (2 * kW);
        with_rows(nr, [&](auto NR) {
          for (int64_t t = t_lo / (2 * kW) * (2 * kW); t < tile_end; t += 2 * kW)
            score_tile<NR()>(qb + r0 * hdp, hdp, hd, kt + t, s + t);
        });
        for (int i = 0; i < nr; ++i) {
          float* si = s + i * kChunk;
          float* a = alpha + r0 + i;
          if (lo[i] >= hi[i]) {  // nothing visible: the row keeps its state
            *a = 1.0f;
            std::fill(si + t_lo, si + t_hi, 0.0f);
            continue;
          }
          if (cap)
            for (int64_t j = lo[i]; j < hi[i]; j += kW) {
              const int t = int(std::min<int64_t>(kW, hi[i] - j));
              store_n(si + j, vcap * tanh(load_n(si + j, t) * vinv), t);
            }
          float& m = mrow[r0 + i];
          float mx = m;
          int64_t j = lo[i];
          if (hi[i] - j >= kW) {
            F vm = load(si + j);
            for (j += kW; j + kW <= hi[i]; j += kW) vm = max(vm, load(si + j));
            mx = std::max(mx, hmax(vm));
          }
          for (; j < hi[i]; ++j) mx = std::max(mx, si[j]);
          *a = std::exp(m - mx);  // 0 on the first visit (m = −inf)
          const F vmx = set1(mx);
          F vsum = zero();
          for (int64_t j = lo[i]; j < hi[i]; j += kW) {
            const int t = int(std::min<int64_t>(kW, hi[i] - j));
            const F e = keep_n(exp(load_n(si + j, t) - vmx), t);
            store_n(si + j, e, t);
            vsum = vsum + e;
          }
          std::fill(si + t_lo, si + lo[i], 0.0f);
          std::fill(si + hi[i], si + t_hi, 0.0f);
          lrow[r0 + i] = lrow[r0 + i] * *a + hsum(vsum);
          m = mx;
        }
        with_rows(nr, [&](auto NR) {
          for (int64_t d = 0; d < hdp; d += 2 * kW)
            pv_tile<NR()>(ob + r0 * hdp + d, hdp, vrows, d, s, t_lo, t_hi, alpha + r0);
        });
      }
    }
    fold_segment();
    // row ri of head g is tile row m = (ti·G + (g − g0))·group + hh
    for (int64_t ri = 0; ri < R; ++ri) {
      const int64_t ti = ri / group, hh = ri % group, m = (ti * G + (g - g0)) * group + hh, h = g * group + hh;
      float* out = p.out.ptr<float>() + ((qsl[r] + i0 + ti) * num_heads + h) * hd;
      finish_row(p, h, mt[ri], lt[ri], ot + ri * hdp, out, partial ? partial + m * (hd + 2) : nullptr);
    }
  }
}

// Split-K's merge (attention.cc): n partial states of one row (max, sum, acc[hd] each, stride floats
// apart, in key order) folded left to right as attention_prefill_tile folds its segments, then
// finished into out [hd] for query head h.
void attention_merge_partials(const AttentionParams& p, const float* states, int64_t n, int64_t stride, int64_t h,
                              float* out) {
  const int64_t hd = p.head_dim();
  float* acc = this_thread_scratch().get_as<float>(kAttnTileSlot, size_t(hd));
  std::fill_n(acc, hd, 0.0f);
  float m = -INFINITY, l = 0.0f;
  for (int64_t s = 0; s < n; ++s, states += stride) merge_state(m, l, acc, states[0], states[1], states + 2, hd);
  finish_row(p, h, m, l, acc, out, nullptr);
}

}  // namespace oxyd::backend::cpu::OXYD_SIMD_NS
