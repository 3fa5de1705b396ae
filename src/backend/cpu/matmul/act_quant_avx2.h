// The 8-bit activation quantization shared by the AVX2 kernels (row-dot in rowdot_avx2.cc,
// packed in packed_avx2.cc and packed_q6k_avx2.cc): q = round(x · id) to nearest
// even with saturation, as act_quant32_avx512.h does on AVX-512. Include only from *_avx2.cc.
#pragma once

#include <immintrin.h>

#include <cstdint>

namespace oxyd::backend::cpu {
namespace {

// max|x| over n (a multiple of 8) floats.
inline float amax8(const float* x, int n) {
  const __m256 sign = _mm256_set1_ps(-0.0f);
  __m256 m = _mm256_setzero_ps();
  for (int i = 0; i < n; i += 8) m = _mm256_max_ps(m, _mm256_andnot_ps(sign, _mm256_loadu_ps(x + i)));
  __m128 s = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps(m, 1));
  s = _mm_max_ps(s, _mm_movehl_ps(s, s));
  s = _mm_max_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

// q[0..n) = round(x · id) as int8 (n a multiple of 32).
inline void quant8(const float* x, int n, float id, int8_t* q) {
  const __m256 v = _mm256_set1_ps(id);
  for (int i = 0; i < n; i += 32) {
    const __m256i a = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(x + i), v));
    const __m256i b = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(x + i + 8), v));
    const __m256i c = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(x + i + 16), v));
    const __m256i d = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(x + i + 24), v));
    const __m256i ab = _mm256_packs_epi32(a, b), cd = _mm256_packs_epi32(c, d);
    __m256i r = _mm256_packs_epi16(ab, cd);  // lane-interleaved: fix the order
    r = _mm256_permutevar8x32_epi32(r, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(q + i), r);
  }
}

}  // namespace
}  // namespace oxyd::backend::cpu
