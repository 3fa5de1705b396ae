// Elementwise kernels over a contiguous span, compiled once per ISA (see simd.h).
// op: 0 add (y = a + b), 1 mul (y = a · b), 2 scale (y = s · a), 3 softcap (y = s · tanh(a / s)).
#include <cstdint>

#include "backend/cpu/simd.h"

namespace oxyd::backend::cpu::OXYD_SIMD_NS {
namespace {

template <int Op>
inline F apply(F a, F b, F s, F inv_s) {
  if constexpr (Op == 0) return a + b;
  if constexpr (Op == 1) return a * b;
  if constexpr (Op == 2) return a * s;
  return s * tanh(a * inv_s);
}

template <int Op>
void span(const float* a, const float* b, float* y, int64_t n, float s) {
  const F vs = set1(s), vinv = set1(Op == 3 ? 1.0f / s : 0.0f);
  int64_t i = 0;
  for (; i + kW <= n; i += kW) store(y + i, apply<Op>(load(a + i), b ? load(b + i) : zero(), vs, vinv));
  if (i < n) {
    const int t = int(n - i);
    store_n(y + i, apply<Op>(load_n(a + i, t), b ? load_n(b + i, t) : zero(), vs, vinv), t);
  }
}

}  // namespace

void elementwise_span(int op, const float* a, const float* b, float* y, int64_t n, float s) {
  switch (op) {
    case 0: span<0>(a, b, y, n, s); break;
    case 1: span<1>(a, b, y, n, s); break;
    case 2: span<2>(a, nullptr, y, n, s); break;
    default: span<3>(a, nullptr, y, n, s); break;
  }
}

}  // namespace oxyd::backend::cpu::OXYD_SIMD_NS
