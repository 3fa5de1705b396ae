// The generic AVX-512 matmul tile: decode to f32, then a 16-wide FMA dot. For the formats that have
// no dedicated AVX-512 kernel (select.cc).
#include <immintrin.h>

#include "backend/cpu/matmul/generic.h"
#include "backend/cpu/matmul/kernels_avx512.h"

namespace oxyd::backend::cpu {
namespace {

struct Avx512Dot {
  static void rows(const float* w, const float* x, int64_t x_stride, int nr, int64_t len, float* acc) {
    for (int r = 0; r < nr; ++r) {
      const float* xr = x + r * x_stride;
      __m512 s0 = _mm512_setzero_ps(), s1 = _mm512_setzero_ps();
      int64_t e = 0;
      for (; e + 32 <= len; e += 32) {
        s0 = _mm512_fmadd_ps(_mm512_loadu_ps(w + e), _mm512_loadu_ps(xr + e), s0);
        s1 = _mm512_fmadd_ps(_mm512_loadu_ps(w + e + 16), _mm512_loadu_ps(xr + e + 16), s1);
      }
      if (e < len) {
        const int64_t left = len - e;
        const __mmask16 m0 = left >= 16 ? __mmask16(0xffff) : __mmask16((1u << left) - 1);
        s0 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m0, w + e), _mm512_maskz_loadu_ps(m0, xr + e), s0);
        if (left > 16) {
          const __mmask16 m1 = __mmask16((1u << (left - 16)) - 1);
          s1 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m1, w + e + 16),
                               _mm512_maskz_loadu_ps(m1, xr + e + 16), s1);
        }
      }
      acc[r] += _mm512_reduce_add_ps(_mm512_add_ps(s0, s1));
    }
  }
};

}  // namespace

MatmulKernel generic_avx512_kernel(DType) {
  MatmulKernel k;
  k.tile = generic_tile<Avx512Dot>;
  return k;
}

}  // namespace oxyd::backend::cpu
