// Activation / GLU kernels over a contiguous span, compiled once per ISA (see simd.h).
// up == nullptr: y = act(x); otherwise y = act(x) · up. act is int(Activation): 0 SILU,
// 1 GELU_ERF, 2 GELU_TANH, 3 SIGMOID (kept an int so this file needs no enum).
#include <cstdint>

#include "backend/cpu/simd.h"

namespace oxyd::backend::cpu::OXYD_SIMD_NS {
namespace {

template <F (*Act)(F)>
void apply(const float* x, const float* up, float* y, int64_t n) {
  int64_t i = 0;
  for (; i + kW <= n; i += kW) {
    const F a = Act(load(x + i));
    store(y + i, up ? a * load(up + i) : a);
  }
  if (i < n) {
    const int t = int(n - i);
    const F a = Act(load_n(x + i, t));
    store_n(y + i, up ? a * load_n(up + i, t) : a, t);
  }
}

}  // namespace

void activation_span(int act, const float* x, const float* up, float* y, int64_t n) {
  switch (act) {
    case 0: apply<silu>(x, up, y, n); break;
    case 1: apply<gelu_erf>(x, up, y, n); break;
    case 3: apply<sigmoid>(x, up, y, n); break;
    default: apply<gelu_tanh>(x, up, y, n); break;
  }
}

void glu_oai_span(const float* gate, const float* up, float* y, int64_t n, float alpha, float limit) {
  const F va = set1(-alpha), hi = set1(limit), lo = set1(-limit), one = set1(1.0f);
  auto f = [&](F g, F u) {
    g = min(g, hi), u = max(min(u, hi), lo);
    return (u + one) * g / (one + exp(va * g));
  };
  int64_t i = 0;
  for (; i + kW <= n; i += kW) store(y + i, f(load(gate + i), load(up + i)));
  if (i < n) {
    const int t = int(n - i);
    store_n(y + i, f(load_n(gate + i, t), load_n(up + i, t)), t);
  }
}

}  // namespace oxyd::backend::cpu::OXYD_SIMD_NS
