// The row-dot AVX2 kernels' shared parts (rowdot_avx2.cc, lowbit_rowdot_avx2.cc): activation
// rows quantized once per matmul to a plain Q8 layout, A32 (Q8_0-like, the scale rounded to f16
// as ggml's Q8_0) for 32-element blocks and A256 (Q8_K-like, with the code sums per 16) for the
// K-quants, the signed int8 dot, and the horizontal sum (also for float_avx2.cc and the
// generic tile of generic_avx2.cc). Include only from *_avx2.cc.
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "backend/cpu/matmul/act_quant_avx2.h"
#include "core/half.h"

namespace oxyd::backend::cpu {
namespace {

inline float hsum8(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

inline float f16(const uint8_t* p) {
  uint16_t h;
  std::memcpy(&h, p, 2);
  return _cvtsh_ss(h);
}

// Q8_0-like activation block.
struct alignas(8) A32 {
  int8_t qs[32];
  float d;
  float pad;  // 0, or d·Σqs (prep_a32_sum)
};
static_assert(sizeof(A32) == 40);

inline int64_t a32_row_bytes(int64_t k) { return (k / 32 * int64_t(sizeof(A32)) + 63) / 64 * 64; }

inline void prep_a32(const float* x, int64_t k, uint8_t* out) {
  A32* b = reinterpret_cast<A32*>(out);
  for (int64_t i = 0; i < k / 32; ++i) {
    const float amax = amax8(x + 32 * i, 32);
    quant8(x + 32 * i, 32, amax > 0.0f ? 127.0f / amax : 0.0f, b[i].qs);
    b[i].d = f16_to_f32(f32_to_f16(amax / 127.0f));  // f16 like ggml's Q8_0 (block32_avx512.cc)
    b[i].pad = 0.0f;
  }
}

// prep_a32 with pad = d·Σcodes of the block (the min term of Q4_1-like weights).
inline void prep_a32_sum(const float* x, int64_t k, uint8_t* out) {
  prep_a32(x, k, out);
  A32* b = reinterpret_cast<A32*>(out);
  for (int64_t i = 0; i < k / 32; ++i) {
    int sum = 0;
    for (int j = 0; j < 32; ++j) sum += b[i].qs[j];
    b[i].pad = b[i].d * float(sum);
  }
}

// Q8_K-like activation super-block, natural order.
struct alignas(32) A256 {
  int8_t qs[256];
  int16_t bsum16[16];  // Σ codes per 16
  float d;
  float pad[7];
};
static_assert(sizeof(A256) == 320);

inline int64_t a256_row_bytes(int64_t k) { return k / 256 * int64_t(sizeof(A256)); }

inline void prep_a256(const float* x, int64_t k, uint8_t* out) {
  A256* b = reinterpret_cast<A256*>(out);
  for (int64_t i = 0; i < k / 256; ++i) {
    const float amax = amax8(x + 256 * i, 256);
    quant8(x + 256 * i, 256, amax > 0.0f ? 127.0f / amax : 0.0f, b[i].qs);
    b[i].d = amax / 127.0f;
    for (int s = 0; s < 16; ++s) {
      int sum = 0;
      for (int j = 0; j < 16; ++j) sum += b[i].qs[16 * s + j];
      b[i].bsum16[s] = int16_t(sum);
    }
    std::memset(b[i].pad, 0, sizeof(b[i].pad));
  }
}

// Σ over pairs of signed w · signed x as 8 int32 (via |w| · sign(x, w), no saturation for
// |w| ≤ 127 or w = −128 with |x| ≤ 127: 2·128·127 < 32768).
inline __m256i dot_s8(__m256i w, __m256i x) {
  const __m256i p = _mm256_maddubs_epi16(_mm256_sign_epi8(w, w), _mm256_sign_epi8(x, w));
  return _mm256_madd_epi16(p, _mm256_set1_epi16(1));
}

}  // namespace
}  // namespace oxyd::backend::cpu
