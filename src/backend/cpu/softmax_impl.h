// Softmax row kernel, compiled once per ISA (see simd.h). Rows contiguous, n elements each.
#include <cstdint>

#include "backend/cpu/simd.h"

namespace oxyd::backend::cpu::OXYD_SIMD_NS {

void softmax_rows(const float* x, float* y, int64_t n, int64_t rows, float scale) {
  const F vs = set1(scale);
  for (int64_t r = 0; r < rows; ++r, x += n, y += n) {
    F m = set1(-INFINITY);
    int64_t i = 0;
    for (; i + kW <= n; i += kW) m = max(m, load(x + i) * vs);
    float mx = hmax(m);
    for (; i < n; ++i) mx = std::max(mx, x[i] * scale);
    const F vm = set1(mx);
    F s = zero();
    for (i = 0; i + kW <= n; i += kW) {
      const F e = exp(fma(load(x + i), vs, -vm));
      store(y + i, e);
      s = s + e;
    }
    if (i < n) {
      const int t = int(n - i);
      const F e = exp(fma(load_n(x + i, t), vs, -vm));
      store_n(y + i, e, t);
      s = s + keep_n(e, t);
    }
    const F inv = set1(1.0f / hsum(s));
    for (i = 0; i + kW <= n; i += kW) store(y + i, load(y + i) * inv);
    if (i < n) store_n(y + i, load_n(y + i, int(n - i)) * inv, int(n - i));
  }
}

}  // namespace oxyd::backend::cpu::OXYD_SIMD_NS
