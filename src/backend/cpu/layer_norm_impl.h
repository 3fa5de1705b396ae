// LayerNorm row kernel, compiled once per ISA (see simd.h). Rows contiguous, n elements each.
#include <cstdint>

#include "backend/cpu/simd.h"

namespace oxyd::backend::cpu::OXYD_SIMD_NS {

void layer_norm_rows(const float* x, const float* w, const float* b, float* y, int64_t n,
                     int64_t rows, float eps) {
  for (int64_t r = 0; r < rows; ++r, x += n, y += n) {
    F s0 = zero(), s1 = zero();
    int64_t i = 0;
    for (; i + 2 * kW <= n; i += 2 * kW) s0 = s0 + load(x + i), s1 = s1 + load(x + i + kW);
    for (; i < n; i += kW) s0 = s0 + load_n(x + i, int(n - i < kW ? n - i : kW));
    const float mean = hsum(s0 + s1) / float(n);
    const F vm = set1(mean);
    F v0 = zero(), v1 = zero();
    for (i = 0; i + 2 * kW <= n; i += 2 * kW) {
      const F d0 = load(x + i) - vm, d1 = load(x + i + kW) - vm;
      v0 = fma(d0, d0, v0), v1 = fma(d1, d1, v1);
    }
    for (; i < n; i += kW) {
      const int t = int(n - i < kW ? n - i : kW);
      const F d = keep_n(load_n(x + i, t) - vm, t);  // tail lanes would be 0 − mean
      v0 = fma(d, d, v0);
    }
    const float var = hsum(v0 + v1) / float(n);
    const F inv = set1(1.0f / std::sqrt(var + eps));
    for (i = 0; i < n; i += kW) {
      const int t = int(n - i < kW ? n - i : kW);
      F v = (load_n(x + i, t) - vm) * inv;
      if (w) v = v * load_n(w + i, t);
      if (b) v = v + load_n(b + i, t);
      store_n(y + i, v, t);
    }
  }
}

}  // namespace oxyd::backend::cpu::OXYD_SIMD_NS
