// RoPE kernel for one token (all heads), compiled once per ISA (see simd.h).
// NEOX: cs, sn hold cos/sin per pair [half]. INTERLEAVED: cs, sn are per element [rot_dim]:
// cs = (c0, c0, c1, c1, ...), sn = (−s0, s0, −s1, s1, ...), so y = x·cs + swap_pairs(x)·sn.
#include <cstdint>

#include "backend/cpu/simd.h"

namespace oxyd::backend::cpu::OXYD_SIMD_NS {

void rope_token(const float* x, float* y, int64_t num_heads, int64_t head_dim, int64_t half,
                const float* cs, const float* sn, bool neox) {
  const int64_t rot_dim = 2 * half;
  for (int64_t h = 0; h < num_heads; ++h, x += head_dim, y += head_dim) {
    if (neox) {
      for (int64_t i = 0; i < half; i += kW) {
        const int t = int(half - i < kW ? half - i : kW);
        const F x0 = load_n(x + i, t), x1 = load_n(x + half + i, t);
        const F c = load_n(cs + i, t), s = load_n(sn + i, t);
        store_n(y + i, x0 * c - x1 * s, t);
        store_n(y + half + i, fma(x0, s, x1 * c), t);
      }
    } else {
#if defined(OXYD_ISA_SCALAR)
      for (int64_t i = 0; i < rot_dim; i += 2) {
        const float x0 = x[i], x1 = x[i + 1];
        y[i] = x0 * cs[i] + x1 * sn[i];
        y[i + 1] = x1 * cs[i + 1] + x0 * sn[i + 1];
      }
#else
      int64_t i = 0;
      for (; i + kW <= rot_dim; i += kW) {
        const F v = load(x + i);
        store(y + i, fma(swap_pairs(v), load(sn + i), v * load(cs + i)));
      }
      if (i < rot_dim) {  // rot_dim is even, so pairs never straddle the tail
        const int t = int(rot_dim - i);
        const F v = load_n(x + i, t);
        store_n(y + i, fma(swap_pairs(v), load_n(sn + i, t), v * load_n(cs + i, t)), t);
      }
#endif
    }
    if (y != x)
      for (int64_t i = rot_dim; i < head_dim; ++i) y[i] = x[i];
  }
}

}  // namespace oxyd::backend::cpu::OXYD_SIMD_NS
