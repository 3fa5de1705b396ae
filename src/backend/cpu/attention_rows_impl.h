// Cache rows to float32 and finished output rows, compiled once per ISA (see simd.h): shared by the
// attention tile kernel (attention_prefill_impl.h) and split-K merge.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "backend/cpu/simd.h"
#include "backend/op_params.h"
#include "core/kv_quant.h"

namespace oxyd::backend::cpu::OXYD_SIMD_NS {
namespace {

// Converts one head row of an F16 / BF16 cache to float32.
void to_f32_row(const uint16_t* src, bool bf16, int64_t head_dim, float* dst) {
  int64_t d = 0;
  for (; d + kW <= head_dim; d += kW) store(dst + d, bf16 ? load_bf16(src + d) : load_f16(src + d));
  if (d < head_dim) {
    const int t = int(head_dim - d);
    store_n(dst + d, bf16 ? load_bf16_n(src + d, t) : load_f16_n(src + d, t), t);
  }
}

// One quantized head vector (core/kv_quant.h) decoded to ‖x‖·ŷ, equal to
// KvQuantizer::dequantize_rotated: each value is the level table times the norm (the same f32
// products), picked by its code. With AVX2, 8 codes at a time: they are `bits` whole bytes, shifted
// into 8 lanes and looked up with vpermps (two tables and a blend for 16 levels).
void dequant_row(const KvQuantizer& kq, const uint8_t* src, float* dst) {
#if defined(OXYD_ISA_AVX2) || defined(OXYD_ISA_AVX512)
  const int64_t d = kq.head_dim();
  const int bits = kq.bits();
  if (d % 8 != 0) return kq.dequantize_rotated(src, dst);
  float norm;
  std::memcpy(&norm, src, 4);
  const float* lv = kq.scaled_levels().data();
  const int nl = 1 << bits;
  if (bits > 4) {  // 5..8 bits: gather the levels, then times the norm (the same f32 products)
    const __m256 vn = _mm256_set1_ps(norm);
    const uint8_t* codes = src + 4;
    for (int64_t i = 0; i < d; i += 8, codes += bits) {
      __m256i idx;
      if (bits == 8) {
        idx = _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(codes)));
      } else {
        uint64_t w = 0;
        std::memcpy(&w, codes, size_t(bits));
        alignas(32) int32_t c[8];
        for (int k = 0; k < 8; ++k) c[k] = int32_t((w >> (k * bits)) & uint64_t(nl - 1));
        idx = _mm256_load_si256(reinterpret_cast<const __m256i*>(c));
      }
      _mm256_storeu_ps(dst + i, _mm256_mul_ps(_mm256_i32gather_ps(lv, idx, 4), vn));
    }
    return;
  }
  alignas(32) float t[16] = {};
  for (int k = 0; k < nl; ++k) t[k] = norm * lv[k];
  const __m256 lo = _mm256_load_ps(t), hi = _mm256_load_ps(t + 8);
  const __m256i shifts = _mm256_mullo_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), _mm256_set1_epi32(bits));
  const __m256i mask = _mm256_set1_epi32(nl - 1);
  const uint8_t* codes = src + 4;
  for (int64_t i = 0; i < d; i += 8, codes += bits) {
    // A 4-byte load (the lanes shift out only the group's 8·bits bits), except for the last group
    // of a row, which may have fewer than 4 bytes left.
    uint32_t w = 0;
    if (i + 8 < d) std::memcpy(&w, codes, 4);
    else std::memcpy(&w, codes, size_t(bits));
    const __m256i idx = _mm256_and_si256(_mm256_srlv_epi32(_mm256_set1_epi32(int(w)), shifts), mask);
    __m256 v = _mm256_permutevar8x32_ps(lo, idx);
    if (bits == 4)  // codes 8..15 from the second table: bit 3 of the code, moved to the sign bit
      v = _mm256_blendv_ps(v, _mm256_permutevar8x32_ps(hi, idx), _mm256_castsi256_ps(_mm256_slli_epi32(idx, 28)));
    _mm256_storeu_ps(dst + i, v);
  }
#else
  kq.dequantize_rotated(src, dst);
#endif
}

// Folds a segment's online softmax state (max m, sum l, accumulator acc[hd]) into a running total
// (mt, lt, acct): the one merge every path takes (the tile's segments in order, split-K's partials in
// order), written with explicit FMAs so that no compiler contraction can differ between them. A
// segment without a visible key (l = 0) leaves the total as it is; the first one is copied exactly.
inline void merge_state(float& mt, float& lt, float* acct, float m, float l, const float* acc, int64_t hd) {
  if (l == 0.0f) return;
  const float mx = std::max(mt, m);
  const float a = std::exp(mt - mx), b = std::exp(m - mx);  // a = 0 while the total is empty
  lt = std::fma(l, b, lt * a);
  const F va = set1(a), vb = set1(b);
  for (int64_t d = 0; d < hd; d += kW) {
    const int t = int(hd - d < kW ? hd - d : kW);
    store_n(acct + d, fma(vb, load_n(acc + d, t), load_n(acct + d, t) * va), t);
  }
  mt = mx;
}

// A row's online softmax state (max m, sum l, accumulator acc[hd]) for query head h, finished:
// out = acc / l, a sink (if any) joining the sum; or, with partial, the state itself for the
// split-K merge in attention.cc: partial = m, l, acc[hd].
inline void finish_row(const AttentionParams& p, int64_t h, float m, float l, const float* acc, float* out,
                       float* partial) {
  const int64_t hd = p.head_dim();
  if (partial) {
    partial[0] = m, partial[1] = l;
    std::copy(acc, acc + hd, partial + 2);
    return;
  }
  float scale_acc = 1.0f;
  if (p.has_sinks()) {
    const float sink = p.sinks.ptr<float>()[h];
    const float mx = std::max(m, sink);
    scale_acc = std::exp(m - mx);
    l = std::fma(l, scale_acc, std::exp(sink - mx));
  }
  const F f = set1(scale_acc / l);
  for (int64_t d = 0; d < hd; d += kW) {
    const int t = int(hd - d < kW ? hd - d : kW);
    store_n(out + d, load_n(acc + d, t) * f, t);
  }
}

}  // namespace
}  // namespace oxyd::backend::cpu::OXYD_SIMD_NS
