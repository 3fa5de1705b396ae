// The 8-bit activation quantization shared by the AVX-512 kernels of the 32-block formats (VNNI in
// block32_avx512.cc, AMX-INT8 in amx_int8_avx512.cc), so both paths multiply the weights
// against identical activation codes and scales. Include only from *_avx512.cc files.
#pragma once

#include <immintrin.h>

#include <cstdint>

#include "core/half.h"

namespace oxyd::backend::cpu {
namespace {

// Symmetric 8-bit quantization of 32 values: q = round(x / d), d = max|x| / 127 (round to
// nearest even, the MXCSR default). Returns d rounded to f16, as ggml's Q8_0 block stores it, so
// Q8_0-family products equal llama.cpp's up to summation order. q gets 32 bytes.
inline float quant32(const float* x, int8_t* q) {
  const __m512 a = _mm512_loadu_ps(x), b = _mm512_loadu_ps(x + 16);
  const float amax = _mm512_reduce_max_ps(_mm512_max_ps(_mm512_abs_ps(a), _mm512_abs_ps(b)));
  const __m512 id = _mm512_set1_ps(amax > 0.0f ? 127.0f / amax : 0.0f);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(q), _mm512_cvtsepi32_epi8(_mm512_cvtps_epi32(_mm512_mul_ps(a, id))));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(q + 16),
                   _mm512_cvtsepi32_epi8(_mm512_cvtps_epi32(_mm512_mul_ps(b, id))));
  return f16_to_f32(f32_to_f16(amax / 127.0f));
}

}  // namespace
}  // namespace oxyd::backend::cpu
