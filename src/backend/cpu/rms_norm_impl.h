// RMSNorm row kernel, compiled once per ISA (included by rms_norm.cc, rms_norm_avx2.cc,
// rms_norm_avx512.cc after the ISA macro). Rows are contiguous, n elements each.
#include <cstdint>

#include "backend/cpu/simd.h"

namespace oxyd::backend::cpu::OXYD_SIMD_NS {

void rms_norm_rows(const float* x, const float* w, float* y, int64_t n, int64_t rows, float eps) {
  for (int64_t r = 0; r < rows; ++r, x += n, y += n) {
    F a0 = zero(), a1 = zero(), a2 = zero(), a3 = zero();
    int64_t i = 0;
    for (; i + 4 * kW <= n; i += 4 * kW) {
      const F v0 = load(x + i), v1 = load(x + i + kW), v2 = load(x + i + 2 * kW), v3 = load(x + i + 3 * kW);
      a0 = fma(v0, v0, a0), a1 = fma(v1, v1, a1), a2 = fma(v2, v2, a2), a3 = fma(v3, v3, a3);
    }
    for (; i < n; i += kW) {
      const F v = load_n(x + i, int(n - i < kW ? n - i : kW));
      a0 = fma(v, v, a0);
    }
    const float sum_sq = hsum((a0 + a1) + (a2 + a3));
    const F inv = set1(1.0f / std::sqrt(sum_sq / float(n) + eps));
    for (i = 0; i + kW <= n; i += kW) {
      const F v = load(x + i) * inv;
      store(y + i, w ? v * load(w + i) : v);
    }
    if (i < n) {
      const int t = int(n - i);
      const F v = load_n(x + i, t) * inv;
      store_n(y + i, w ? v * load_n(w + i, t) : v, t);
    }
  }
}

}  // namespace oxyd::backend::cpu::OXYD_SIMD_NS
