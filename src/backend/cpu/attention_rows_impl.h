// Cache rows to float32 and finished output rows, compiled once per ISA (see simd.h): shared by the
// attention tile kernel (attention_prefill_impl.h) and split-K merge.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "backend/cpu/attention_prefill.h"
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

#if defined(OXYD_ISA_AVX2) || defined(OXYD_ISA_AVX512)
// dequant_row with AVX2 for the uniform 5 and 6 bits (kv_quant.h), 8 codes at a time: the group's
// B bytes broadcast to both 128-bit halves, a byte shuffle and a variable shift put code n in lane
// n; converted, minus L, times the scale: the same f32 products as dequantize_rotated.
template <int B>
void dequant_row_avx2_wide(const KvQuantizer& kq, const uint8_t* src, float* dst) {
  static_assert(kv_quant_uniform(B) && (B == 5 || B == 6));
  struct Unpack { __m256i shuf, shift; };  // lane n's two bytes, and its shift
  static const Unpack u = [] {
    alignas(32) int8_t s[32];
    alignas(32) int32_t sh[8];
    for (int n = 0; n < 8; ++n) {  // lanes 4..7 index the upper 128-bit half, a copy of the lower
      const int bit = n * B;
      s[4 * n] = int8_t(bit / 8), s[4 * n + 1] = int8_t(bit / 8 + 1);
      s[4 * n + 2] = s[4 * n + 3] = int8_t(-128);
      sh[n] = bit % 8;
    }
    return Unpack{_mm256_load_si256(reinterpret_cast<const __m256i*>(s)),
                  _mm256_load_si256(reinterpret_cast<const __m256i*>(sh))};
  }();
  float scale;
  std::memcpy(&scale, src, 4);
  const __m256 vs = _mm256_set1_ps(scale), limit = _mm256_set1_ps(float((1 << (B - 1)) - 1));
  const __m256i mask = _mm256_set1_epi32((1 << B) - 1);
  const uint8_t* codes = src + 4;
  for (int64_t i = 0, d = kq.head_dim(); i < d; i += 8, codes += B) {
    // An 8-byte load, except for the last group of a row (which may end the cache): B bytes
    // copied there; copying every group so stalled each load on a failed store forwarding.
    __m128i w;
    if (i + 8 < d) {
      w = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(codes));
    } else {
      uint64_t x = 0;
      std::memcpy(&x, codes, size_t(B));
      w = _mm_cvtsi64_si128(int64_t(x));
    }
    const __m256i b = _mm256_broadcastsi128_si256(w);
    const __m256i c = _mm256_and_si256(_mm256_srlv_epi32(_mm256_shuffle_epi8(b, u.shuf), u.shift), mask);
    _mm256_storeu_ps(dst + i, _mm256_mul_ps(_mm256_sub_ps(_mm256_cvtepi32_ps(c), limit), vs));
  }
}

// 8-bit uniform codes (kv_quant.h), 8 at a time: sign-extended, converted, times the scale; the
// same f32 products as dequantize_rotated.
void dequant_row_uniform_avx2(const KvQuantizer& kq, const uint8_t* src, float* dst) {
  float scale;
  std::memcpy(&scale, src, 4);
  const __m256 vs = _mm256_set1_ps(scale);
  const uint8_t* codes = src + 4;
  for (int64_t i = 0, d = kq.head_dim(); i < d; i += 8) {
    const __m256i c = _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(codes + i)));
    _mm256_storeu_ps(dst + i, _mm256_mul_ps(_mm256_cvtepi32_ps(c), vs));
  }
}

// dequant_row with AVX2 for 2..4 bits, 8 codes at a time: they are `bits` whole bytes, shifted
// into 8 lanes and looked up with vpermps (two tables and a blend for 16 levels); wider codes:
// dequant_row_avx2_wide, 8 bits dequant_row_uniform_avx2.
void dequant_row_avx2(const KvQuantizer& kq, const uint8_t* src, float* dst) {
  const int64_t d = kq.head_dim();
  const int bits = kq.bits();
  switch (bits) {
    case 5: return dequant_row_avx2_wide<5>(kq, src, dst);
    case 6: return dequant_row_avx2_wide<6>(kq, src, dst);
    case 8: return dequant_row_uniform_avx2(kq, src, dst);
    default: break;
  }
  float norm;
  std::memcpy(&norm, src, 4);
  const float* lv = kq.scaled_levels().data();
  const int nl = 1 << bits;
  const uint8_t* codes = src + 4;
  alignas(32) float t[16] = {};
  for (int k = 0; k < nl; ++k) t[k] = norm * lv[k];
  const __m256 lo = _mm256_load_ps(t), hi = _mm256_load_ps(t + 8);
  const __m256i shifts = _mm256_mullo_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), _mm256_set1_epi32(bits));
  const __m256i mask = _mm256_set1_epi32(nl - 1);
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
}
#endif

#if defined(OXYD_ISA_AVX512)
// AVX-512, 16 codes at a time (head_dim % 16 == 0), 2..6 bits: the group's 2·bits bytes are copied
// into each 128-bit lane, a byte shuffle gives dword n the two bytes holding code n, a variable
// shift and a mask leave the code; Lloyd-Max levels (2..4 bits) are a register table (vpermps),
// uniform codes (5, 6 bits) are converted, minus L; times the norm (the scale).
template <int B>
void dequant_row_avx512(const KvQuantizer& kq, const uint8_t* src, float* dst) {
  static_assert(B >= 2 && B <= 6);
  constexpr bool kUniform = kv_quant_uniform(B);
  static_assert(kUniform || B <= 4, "Lloyd-Max levels: at most one table of 16");
  constexpr int NL = 1 << B;
  struct Unpack { __m512i shuf, shift; };
  static const Unpack u = [] {
    alignas(64) int8_t s[64];
    alignas(64) int32_t sh[16];
    for (int n = 0; n < 16; ++n) {
      const int bit = n * B;  // byte indices are lane-relative: every lane holds the group's bytes
      s[4 * n] = int8_t(bit / 8), s[4 * n + 1] = int8_t(bit / 8 + 1), s[4 * n + 2] = s[4 * n + 3] = int8_t(-128);
      sh[n] = bit % 8;
    }
    return Unpack{_mm512_load_si512(s), _mm512_load_si512(sh)};
  }();
  const __m512 t = kUniform ? _mm512_set1_ps(float(NL / 2 - 1))  // L, or the levels
                            : _mm512_maskz_loadu_ps(__mmask16((1u << NL) - 1), kq.scaled_levels().data());
  float norm;
  std::memcpy(&norm, src, 4);
  const __m512 vn = _mm512_set1_ps(norm);
  const __m512i mask = _mm512_set1_epi32(NL - 1);
  const uint8_t* codes = src + 4;
  for (int64_t i = 0, d = kq.head_dim(); i < d; i += 16, codes += 2 * B) {
    // a masked load: the last group of a row may end the cache
    const __m128i w = _mm_maskz_loadu_epi8(__mmask16((1u << (2 * B)) - 1), codes);
    const __m512i idx = _mm512_and_si512(
        _mm512_srlv_epi32(_mm512_shuffle_epi8(_mm512_broadcast_i32x4(w), u.shuf), u.shift), mask);
    const __m512 v = kUniform ? _mm512_sub_ps(_mm512_cvtepi32_ps(idx), t) : _mm512_permutexvar_ps(idx, t);
    _mm512_storeu_ps(dst + i, _mm512_mul_ps(v, vn));
  }
}

// 8-bit uniform codes (kv_quant.h), 16 at a time: sign-extended, converted, times the scale.
void dequant_row_uniform_avx512(const KvQuantizer& kq, const uint8_t* src, float* dst) {
  float scale;
  std::memcpy(&scale, src, 4);
  const __m512 vs = _mm512_set1_ps(scale);
  const uint8_t* codes = src + 4;
  for (int64_t i = 0, d = kq.head_dim(); i < d; i += 16) {
    const __m512i c = _mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(codes + i)));
    _mm512_storeu_ps(dst + i, _mm512_mul_ps(_mm512_cvtepi32_ps(c), vs));
  }
}
#endif

// One quantized head vector (core/kv_quant.h) decoded to ‖x‖·ŷ, equal to
// KvQuantizer::dequantize_rotated bit for bit: each value is its level times the norm (the same f32
// product), picked by its code. The fastest variant the row's head_dim and the CPU allow.
void dequant_row(const KvQuantizer& kq, const uint8_t* src, float* dst) {
  const int64_t d = kq.head_dim();
#if defined(OXYD_ISA_AVX512)
  if (d % 16 == 0) {
    switch (kq.bits()) {
      case 2: return dequant_row_avx512<2>(kq, src, dst);
      case 3: return dequant_row_avx512<3>(kq, src, dst);
      case 4: return dequant_row_avx512<4>(kq, src, dst);
      case 5: return dequant_row_avx512<5>(kq, src, dst);
      case 6: return dequant_row_avx512<6>(kq, src, dst);
      case 8: return dequant_row_uniform_avx512(kq, src, dst);
      default: break;
    }
  }
#endif
#if defined(OXYD_ISA_AVX2) || defined(OXYD_ISA_AVX512)
  if (d % 8 == 0) return dequant_row_avx2(kq, src, dst);
#endif
  (void)d;
  kq.dequantize_rotated(src, dst);
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
