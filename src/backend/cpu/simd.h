// A thin vector-of-floats wrapper so each CPU kernel is written once and compiled three times:
// the includer defines exactly one of OXYD_ISA_SCALAR / OXYD_ISA_AVX2 / OXYD_ISA_AVX512, and
// everything lands in namespace oxyd::backend::cpu::OXYD_SIMD_NS (simd_scalar / simd_avx2 /
// simd_avx512), so the copies never collide at link time. Also: exp, tanh, erfc, silu, gelu in
// float32 (absolute error ≲ 2e-7 on O(1) values; see the per-function notes).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include "core/half.h"

#if defined(OXYD_ISA_AVX512) || defined(OXYD_ISA_AVX2)
#include <immintrin.h>
#endif
#if defined(OXYD_ISA_AVX512) && defined(__GNUC__) && !defined(__clang__)
// GCC 12 warns inside avx512fintrin.h (_mm512_undefined_* operands) once inlined; false positive.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#if defined(OXYD_ISA_AVX512)
#define OXYD_SIMD_NS simd_avx512
#elif defined(OXYD_ISA_AVX2)
#define OXYD_SIMD_NS simd_avx2
#elif defined(OXYD_ISA_SCALAR)
#define OXYD_SIMD_NS simd_scalar
#else
#error "define OXYD_ISA_SCALAR, OXYD_ISA_AVX2 or OXYD_ISA_AVX512 before including simd.h"
#endif

namespace oxyd::backend::cpu::OXYD_SIMD_NS {

#if defined(OXYD_ISA_AVX512)
constexpr int kW = 16;
struct F { __m512 v; };
struct M { __mmask16 m; };
inline __mmask16 tail_mask(int n) { return __mmask16((1u << n) - 1u); }
inline F zero() { return {_mm512_setzero_ps()}; }
inline F set1(float x) { return {_mm512_set1_ps(x)}; }
inline F load(const float* p) { return {_mm512_loadu_ps(p)}; }
inline F load_n(const float* p, int n) { return {_mm512_maskz_loadu_ps(tail_mask(n), p)}; }
inline void store(float* p, F a) { _mm512_storeu_ps(p, a.v); }
inline void store_n(float* p, F a, int n) { _mm512_mask_storeu_ps(p, tail_mask(n), a.v); }
inline F keep_n(F a, int n) { return {_mm512_maskz_mov_ps(tail_mask(n), a.v)}; }  // lanes ≥ n → 0
inline F load_f16(const uint16_t* p) { return {_mm512_cvtph_ps(_mm256_loadu_si256((const __m256i*)p))}; }
inline F load_f16_n(const uint16_t* p, int n) {
  return {_mm512_cvtph_ps(_mm256_maskz_loadu_epi16(tail_mask(n), p))};
}
inline F load_bf16(const uint16_t* p) {
  return {_mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i*)p)), 16))};
}
inline F load_bf16_n(const uint16_t* p, int n) {
  return {_mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(tail_mask(n), p)), 16))};
}
inline F operator+(F a, F b) { return {_mm512_add_ps(a.v, b.v)}; }
inline F operator-(F a, F b) { return {_mm512_sub_ps(a.v, b.v)}; }
inline F operator*(F a, F b) { return {_mm512_mul_ps(a.v, b.v)}; }
inline F operator/(F a, F b) { return {_mm512_div_ps(a.v, b.v)}; }
inline F fma(F a, F b, F c) { return {_mm512_fmadd_ps(a.v, b.v, c.v)}; }
inline F max(F a, F b) { return {_mm512_max_ps(a.v, b.v)}; }
inline F min(F a, F b) { return {_mm512_min_ps(a.v, b.v)}; }
inline F abs(F a) { return {_mm512_abs_ps(a.v)}; }
inline F copysign(F mag, F sign) {  // |mag| with the sign of sign
  const __m512i s = _mm512_and_si512(_mm512_castps_si512(sign.v), _mm512_set1_epi32(int(0x80000000u)));
  return {_mm512_castsi512_ps(_mm512_or_si512(_mm512_castps_si512(abs(mag).v), s))};
}
inline M lt(F a, F b) { return {_mm512_cmp_ps_mask(a.v, b.v, _CMP_LT_OQ)}; }
inline F select(M m, F a, F b) { return {_mm512_mask_blend_ps(m.m, b.v, a.v)}; }
// Not _mm512_reduce_*: GCC 12 flags its internals with -Wmaybe-uninitialized.
inline float hsum(F a) {
  const __m256 h = _mm256_add_ps(_mm512_castps512_ps256(a.v), _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(a.v), 1)));
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  return _mm_cvtss_f32(_mm_add_ss(s, _mm_movehdup_ps(s)));
}
inline float hmax(F a) {
  const __m256 h = _mm256_max_ps(_mm512_castps512_ps256(a.v), _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(a.v), 1)));
  __m128 s = _mm_max_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
  s = _mm_max_ps(s, _mm_movehl_ps(s, s));
  return _mm_cvtss_f32(_mm_max_ss(s, _mm_movehdup_ps(s)));
}
inline F round_nearest(F a) { return {_mm512_roundscale_ps(a.v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)}; }
inline F mul_pow2(F a, F n) { return {_mm512_scalef_ps(a.v, n.v)}; }  // a · 2^n, n integral
inline F swap_pairs(F a) { return {_mm512_permute_ps(a.v, 0xB1)}; }    // (x1, x0, x3, x2, ...)

#elif defined(OXYD_ISA_AVX2)
constexpr int kW = 8;
struct F { __m256 v; };
struct M { __m256 m; };
inline __m256i tail_mask(int n) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}
inline F zero() { return {_mm256_setzero_ps()}; }
inline F set1(float x) { return {_mm256_set1_ps(x)}; }
inline F load(const float* p) { return {_mm256_loadu_ps(p)}; }
// Whole vectors skip the mask: a masked store costs many times a plain one on AMD cores.
inline F load_n(const float* p, int n) { return {n >= kW ? _mm256_loadu_ps(p) : _mm256_maskload_ps(p, tail_mask(n))}; }
inline void store(float* p, F a) { _mm256_storeu_ps(p, a.v); }
inline void store_n(float* p, F a, int n) {
  if (n >= kW) _mm256_storeu_ps(p, a.v);
  else _mm256_maskstore_ps(p, tail_mask(n), a.v);
}
inline F keep_n(F a, int n) { return {_mm256_and_ps(a.v, _mm256_castsi256_ps(tail_mask(n)))}; }
inline F load_f16(const uint16_t* p) { return {_mm256_cvtph_ps(_mm_loadu_si128((const __m128i*)p))}; }
inline F load_f16_n(const uint16_t* p, int n) {
  uint16_t tmp[8] = {};
  std::memcpy(tmp, p, size_t(n) * 2);
  return load_f16(tmp);
}
inline F load_bf16(const uint16_t* p) {
  return {_mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i*)p)), 16))};
}
inline F load_bf16_n(const uint16_t* p, int n) {
  uint16_t tmp[8] = {};
  std::memcpy(tmp, p, size_t(n) * 2);
  return load_bf16(tmp);
}
inline F operator+(F a, F b) { return {_mm256_add_ps(a.v, b.v)}; }
inline F operator-(F a, F b) { return {_mm256_sub_ps(a.v, b.v)}; }
inline F operator*(F a, F b) { return {_mm256_mul_ps(a.v, b.v)}; }
inline F operator/(F a, F b) { return {_mm256_div_ps(a.v, b.v)}; }
inline F fma(F a, F b, F c) { return {_mm256_fmadd_ps(a.v, b.v, c.v)}; }
inline F max(F a, F b) { return {_mm256_max_ps(a.v, b.v)}; }
inline F min(F a, F b) { return {_mm256_min_ps(a.v, b.v)}; }
inline F abs(F a) { return {_mm256_andnot_ps(_mm256_set1_ps(-0.0f), a.v)}; }
inline F copysign(F mag, F sign) {
  return {_mm256_or_ps(abs(mag).v, _mm256_and_ps(_mm256_set1_ps(-0.0f), sign.v))};
}
inline M lt(F a, F b) { return {_mm256_cmp_ps(a.v, b.v, _CMP_LT_OQ)}; }
inline F select(M m, F a, F b) { return {_mm256_blendv_ps(b.v, a.v, m.m)}; }
inline float hsum(F a) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(a.v), _mm256_extractf128_ps(a.v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}
inline float hmax(F a) {
  __m128 s = _mm_max_ps(_mm256_castps256_ps128(a.v), _mm256_extractf128_ps(a.v, 1));
  s = _mm_max_ps(s, _mm_movehl_ps(s, s));
  s = _mm_max_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}
inline F round_nearest(F a) { return {_mm256_round_ps(a.v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)}; }
inline F mul_pow2(F a, F n) {  // a · 2^n for integral n in [-126, 127]
  const __m256i e = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n.v), _mm256_set1_epi32(127)), 23);
  return {_mm256_mul_ps(a.v, _mm256_castsi256_ps(e))};
}
inline F swap_pairs(F a) { return {_mm256_permute_ps(a.v, 0xB1)}; }

#else  // scalar
constexpr int kW = 1;
struct F { float v; };
struct M { bool m; };
inline F zero() { return {0.0f}; }
inline F set1(float x) { return {x}; }
inline F load(const float* p) { return {*p}; }
inline F load_n(const float* p, int n) { return {n > 0 ? *p : 0.0f}; }
inline void store(float* p, F a) { *p = a.v; }
inline void store_n(float* p, F a, int n) { if (n > 0) *p = a.v; }
inline F keep_n(F a, int n) { return n > 0 ? a : zero(); }
inline F load_f16(const uint16_t* p) { return {f16_to_f32(*p)}; }
inline F load_f16_n(const uint16_t* p, int n) { return {n > 0 ? f16_to_f32(*p) : 0.0f}; }
inline F load_bf16(const uint16_t* p) { return {bf16_to_f32(*p)}; }
inline F load_bf16_n(const uint16_t* p, int n) { return {n > 0 ? bf16_to_f32(*p) : 0.0f}; }
inline F operator+(F a, F b) { return {a.v + b.v}; }
inline F operator-(F a, F b) { return {a.v - b.v}; }
inline F operator*(F a, F b) { return {a.v * b.v}; }
inline F operator/(F a, F b) { return {a.v / b.v}; }
inline F fma(F a, F b, F c) { return {a.v * b.v + c.v}; }  // std::fma is a libm call without -mfma
inline F max(F a, F b) { return {a.v > b.v ? a.v : b.v}; }
inline F min(F a, F b) { return {a.v < b.v ? a.v : b.v}; }
inline F abs(F a) { return {std::fabs(a.v)}; }
inline F copysign(F mag, F sign) { return {std::copysign(mag.v, sign.v)}; }
inline M lt(F a, F b) { return {a.v < b.v}; }
inline F select(M m, F a, F b) { return m.m ? a : b; }
inline float hsum(F a) { return a.v; }
inline float hmax(F a) { return a.v; }
inline F round_nearest(F a) { return {std::nearbyint(a.v)}; }
inline F mul_pow2(F a, F n) { return {std::ldexp(a.v, int(n.v))}; }
#endif

inline F operator-(F a) { return zero() - a; }

/// e^x, float32, ~1 ulp on [-87.3, 88.3]; 0 below, clamped (finite) above. Cody–Waite range
/// reduction x = n·ln2 + r, |r| ≤ ln2/2, then a degree-7 Taylor-like polynomial in r.
inline F exp(F x) {
  const F lo = set1(-87.3f);
  const F xc = min(max(x, lo), set1(88.3f));
  const F n = round_nearest(xc * set1(1.44269504088896341f));
  F r = fma(n, set1(-0.693145751953125f), xc);   // ln2 split: hi has few mantissa bits
  r = fma(n, set1(-1.42860682030941723212e-6f), r);
  F p = set1(1.9875691500e-4f);
  p = fma(p, r, set1(1.3981999507e-3f));
  p = fma(p, r, set1(8.3334519073e-3f));
  p = fma(p, r, set1(4.1665795894e-2f));
  p = fma(p, r, set1(1.6666665459e-1f));
  p = fma(p, r, set1(5.0000001201e-1f));
  p = fma(p, r * r, r + set1(1.0f));
  return select(lt(x, lo), zero(), mul_pow2(p, n));
}

/// tanh: odd Taylor series to x^15 for |x| < 0.5 (truncation < 1e-8), else 1 − 2/(e^{2|x|}+1)
/// (absolute error ~1e-7), sign restored; saturates to ±1 beyond |x| = 9.
inline F tanh(F x) {
  const F ax = min(abs(x), set1(9.0f));
  const F x2 = ax * ax;
  F s = set1(-929569.0f / 638512875.0f);
  s = fma(s, x2, set1(21844.0f / 6081075.0f));
  s = fma(s, x2, set1(-1382.0f / 155925.0f));
  s = fma(s, x2, set1(62.0f / 2835.0f));
  s = fma(s, x2, set1(-17.0f / 315.0f));
  s = fma(s, x2, set1(2.0f / 15.0f));
  s = fma(s, x2, set1(-1.0f / 3.0f));
  s = fma(s * x2, ax, ax);
  const F big = set1(1.0f) - set1(2.0f) / (exp(ax + ax) + set1(1.0f));
  return copysign(select(lt(ax, set1(0.5f)), s, big), x);
}

/// erfc(|x|) for x ≥ 0: Abramowitz & Stegun 7.1.26, absolute error ≤ 1.5e-7.
inline F erfc_pos(F ax) {
  const F t = set1(1.0f) / fma(set1(0.3275911f), ax, set1(1.0f));
  F p = set1(1.061405429f);
  p = fma(p, t, set1(-1.453152027f));
  p = fma(p, t, set1(1.421413741f));
  p = fma(p, t, set1(-0.284496736f));
  p = fma(p, t, set1(0.254829592f));
  return p * t * exp(-(ax * ax));
}

inline F silu(F x) { return x / (set1(1.0f) + exp(-x)); }
inline F sigmoid(F x) { return set1(1.0f) / (set1(1.0f) + exp(-x)); }
// ½x(1 + erf(x/√2)); for x < 0, 1 + erf(x/√2) = erfc(|x|/√2) directly (no cancellation).
inline F gelu_erf(F x) {
  const F c = erfc_pos(abs(x) * set1(0.70710678118654752f));
  return set1(0.5f) * x * select(lt(x, zero()), c, set1(2.0f) - c);
}
inline F gelu_tanh(F x) {
  const F inner = set1(0.79788456080286536f) * fma(set1(0.044715f) * x, x * x, x);
  return set1(0.5f) * x * (set1(1.0f) + tanh(inner));
}

}  // namespace oxyd::backend::cpu::OXYD_SIMD_NS
