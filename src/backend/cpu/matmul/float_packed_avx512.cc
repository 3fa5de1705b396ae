// F32 weights packed at load (pack.h: group g holds element e of row 16g + L at float 16e + L) as
// an outer product: a register tile of up to 6 activation rows × 4 groups (64 outputs) keeps 24
// accumulators, and per element e its NG weight vectors and NR broadcast activations feed NR·NG
// FMAs. The row-dot kernel on the file rows (float_avx512.cc) spent 10 loads on 8 FMAs and ended
// each output with a horizontal sum; on all-MiniLM-L6-v2's encoder (F32, k 384 / 1536) it ran at
// about half the FMA peak. Each output is one FMA chain over e = 0..k-1 from zero, whatever the
// tile's shape: a row's result does not depend on the rest of its batch.
#include <immintrin.h>

#include <algorithm>
#include <cstdint>

#include "backend/cpu/matmul/kernels_avx512.h"

namespace oxyd::backend::cpu {
namespace {

constexpr int kRows = 6, kGroups = 4;
// Activation rows kept in L2 while the tile's weight groups are swept (as tile.h's kActBytes).
constexpr int64_t kActBytes = 256 * 1024;

// y[r][16g + c] = Σ_e a[r][e] · w_g[e][c] for r < NR, g < NG (c < last in the last group).
template <int NR, int NG>
void micro(int64_t k, const float* w, int64_t group_floats, const float* a, int64_t a_stride, float* y,
           int64_t y_stride, __mmask16 last) {
  __m512 acc[NR][NG];
  for (int r = 0; r < NR; ++r)
    for (int g = 0; g < NG; ++g) acc[r][g] = _mm512_setzero_ps();
#pragma GCC unroll 4
  for (int64_t e = 0; e < k; ++e) {
    __m512 wv[NG];
    for (int g = 0; g < NG; ++g) wv[g] = _mm512_load_ps(w + g * group_floats + 16 * e);
    for (int r = 0; r < NR; ++r) {
      const __m512 x = _mm512_set1_ps(a[r * a_stride + e]);
      for (int g = 0; g < NG; ++g) acc[r][g] = _mm512_fmadd_ps(wv[g], x, acc[r][g]);
    }
  }
  for (int r = 0; r < NR; ++r)
    for (int g = 0; g < NG; ++g)
      _mm512_mask_storeu_ps(y + r * y_stride + 16 * g, g == NG - 1 ? last : __mmask16(0xffff), acc[r][g]);
}

template <int NR>
void micro_groups(int ng, int64_t k, const float* w, int64_t gf, const float* a, int64_t as, float* y, int64_t ys,
                  __mmask16 last) {
  switch (ng) {
    case 4: return micro<NR, 4>(k, w, gf, a, as, y, ys, last);
    case 3: return micro<NR, 3>(k, w, gf, a, as, y, ys, last);
    case 2: return micro<NR, 2>(k, w, gf, a, as, y, ys, last);
    default: return micro<NR, 1>(k, w, gf, a, as, y, ys, last);
  }
}

void packed_f32_tile(const TileArgs& t) {
  static_assert(kRows == 6 && kGroups == 4);
  const int64_t k = t.k, groups = (t.n + 15) / 16, gf = 16 * k;
  const float* w = reinterpret_cast<const float*>(t.w);  // the tile starts at a group (driver.cc)
  const float* a = reinterpret_cast<const float*>(t.a);
  const int64_t as = t.a_stride / int64_t(sizeof(float));
  const int64_t mc = std::max<int64_t>(kRows, kActBytes / std::max<int64_t>(1, t.a_stride) / kRows * kRows);
  for (int64_t i0 = 0; i0 < t.m; i0 += mc) {
    const int64_t i1 = std::min(t.m, i0 + mc);
    for (int64_t g0 = 0; g0 < groups; g0 += kGroups) {
      const int ng = int(std::min<int64_t>(kGroups, groups - g0));
      const int64_t cols = std::min<int64_t>(16, t.n - 16 * (g0 + ng - 1));
      const __mmask16 last = __mmask16((1u << cols) - 1);
      for (int64_t i = i0; i < i1; i += kRows) {
        const float* ai = a + i * as;
        const float* wg = w + g0 * gf;
        float* y = t.y + i * t.y_stride + 16 * g0;
        switch (std::min<int64_t>(kRows, i1 - i)) {
          case 6: micro_groups<6>(ng, k, wg, gf, ai, as, y, t.y_stride, last); break;
          case 5: micro_groups<5>(ng, k, wg, gf, ai, as, y, t.y_stride, last); break;
          case 4: micro_groups<4>(ng, k, wg, gf, ai, as, y, t.y_stride, last); break;
          case 3: micro_groups<3>(ng, k, wg, gf, ai, as, y, t.y_stride, last); break;
          case 2: micro_groups<2>(ng, k, wg, gf, ai, as, y, t.y_stride, last); break;
          default: micro_groups<1>(ng, k, wg, gf, ai, as, y, t.y_stride, last); break;
        }
      }
    }
  }
}

}  // namespace

MatmulKernel avx512_f32_packed_kernel(DType t) {
  MatmulKernel m;
  if (t == DType::F32) m.tile = packed_f32_tile;
  return m;
}

}  // namespace oxyd::backend::cpu
