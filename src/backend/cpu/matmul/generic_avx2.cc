// The generic AVX2/FMA matmul tile: decode to f32, then an 8-wide FMA dot. For the formats that
// have no dedicated AVX2 kernel (select.cc).
#include <immintrin.h>

#include "backend/cpu/matmul/generic.h"
#include "backend/cpu/matmul/kernel.h"
#include "backend/cpu/matmul/rowdot_avx2.h"

namespace oxyd::backend::cpu {
namespace {

struct Avx2Dot {
  static void rows(const float* w, const float* x, int64_t x_stride, int nr, int64_t len, float* acc) {
    for (int r = 0; r < nr; ++r) {
      const float* xr = x + r * x_stride;
      __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps();
      int64_t e = 0;
      for (; e + 16 <= len; e += 16) {
        s0 = _mm256_fmadd_ps(_mm256_loadu_ps(w + e), _mm256_loadu_ps(xr + e), s0);
        s1 = _mm256_fmadd_ps(_mm256_loadu_ps(w + e + 8), _mm256_loadu_ps(xr + e + 8), s1);
      }
      float tail = 0.0f;
      for (; e < len; ++e) tail += w[e] * xr[e];
      acc[r] += hsum8(_mm256_add_ps(s0, s1)) + tail;
    }
  }
};

}  // namespace

MatmulKernel generic_avx2_kernel(DType) {
  MatmulKernel k;
  k.tile = generic_tile<Avx2Dot>;
  return k;
}

}  // namespace oxyd::backend::cpu
