// Scalar (portable) matmul kernels: every format goes through the generic decode-to-f32 tile
// with a plain C++ dot. The fallback on CPUs without AVX2, and a second opinion in tests.
#include "backend/cpu/matmul/generic.h"
#include "backend/cpu/matmul/kernel.h"

namespace oxyd::backend::cpu {
namespace {

struct ScalarDot {
  static void rows(const float* w, const float* x, int64_t x_stride, int nr, int64_t len, float* acc) {
    for (int r = 0; r < nr; ++r) {
      const float* xr = x + r * x_stride;
      float s[8] = {0, 0, 0, 0, 0, 0, 0, 0};
      int64_t e = 0;
      for (; e + 8 <= len; e += 8)
        for (int u = 0; u < 8; ++u) s[u] += w[e + u] * xr[e + u];
      for (; e < len; ++e) s[0] += w[e] * xr[e];
      acc[r] += ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
    }
  }
};

}  // namespace

MatmulKernel generic_scalar_kernel(DType) {
  MatmulKernel k;
  k.tile = generic_tile<ScalarDot>;
  return k;
}

}  // namespace oxyd::backend::cpu
