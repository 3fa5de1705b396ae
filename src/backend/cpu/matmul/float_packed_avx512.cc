// F32 weights packed at load (pack.h: group g holds element e of row 16g + L at float 16e + L) as
// an outer product: a register tile of up to 6 activation rows × 4 groups (64 outputs) keeps 24
// accumulators, and per element e its NG weight vectors and NR broadcast activations feed NR·NG
// FMAs. The row-dot kernel on the file rows (float_avx512.cc) spent 10 loads on 8 FMAs and ended
// each output with a horizontal sum; on all-MiniLM-L6-v2's encoder (F32, k 384 / 1536) it ran at
// about half the FMA peak. Each output is one FMA chain over e = 0..k-1 from zero, whatever the
// tile's shape: a row's result does not depend on the rest of its batch. BF16 weights are packed
// as pairs of elements (pack.h) and meet activations rounded once to bf16 (prep_bf16) in
// vdpbf16ps, two products per lane: twice the multiply-adds of an FMA per instruction.
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
// F32: one step per element e; BF16: one per pair of elements, w_g's dword 16p + c holding row c's
// elements 2p, 2p + 1 and the activation pair broadcast as one dword (vdpbf16ps: 2 products per
// lane, f32 accumulation).
struct F32 {
  using W = float;
  static constexpr int kPerStep = 1;
  template <int NR, int NG>
  static void body(int64_t steps, const W* w, int64_t gstep, const W* a, int64_t as, __m512 (&acc)[NR][NG]) {
#pragma GCC unroll 4
    for (int64_t e = 0; e < steps; ++e) {
      __m512 wv[NG];
      for (int g = 0; g < NG; ++g) wv[g] = _mm512_load_ps(w + g * gstep + 16 * e);
      for (int r = 0; r < NR; ++r) {
        const __m512 x = _mm512_set1_ps(a[r * as + e]);
        for (int g = 0; g < NG; ++g) acc[r][g] = _mm512_fmadd_ps(wv[g], x, acc[r][g]);
      }
    }
  }
};
struct Bf16 {
  using W = uint32_t;
  static constexpr int kPerStep = 2;
  template <int NR, int NG>
  static void body(int64_t steps, const W* w, int64_t gstep, const W* a, int64_t as, __m512 (&acc)[NR][NG]) {
#pragma GCC unroll 4
    for (int64_t p = 0; p < steps; ++p) {
      __m512i wv[NG];
      for (int g = 0; g < NG; ++g) wv[g] = _mm512_load_si512(w + g * gstep + 16 * p);
      for (int r = 0; r < NR; ++r) {
        const __m512bh x = (__m512bh)_mm512_set1_epi32(int(a[r * as + p]));
        for (int g = 0; g < NG; ++g) acc[r][g] = _mm512_dpbf16_ps(acc[r][g], (__m512bh)wv[g], x);
      }
    }
  }
};

template <class E, int NR, int NG>
void micro(int64_t steps, const typename E::W* w, int64_t gstep, const typename E::W* a, int64_t as, float* y,
           int64_t y_stride, __mmask16 last) {
  __m512 acc[NR][NG];
  for (int r = 0; r < NR; ++r)
    for (int g = 0; g < NG; ++g) acc[r][g] = _mm512_setzero_ps();
  E::template body<NR, NG>(steps, w, gstep, a, as, acc);
  for (int r = 0; r < NR; ++r)
    for (int g = 0; g < NG; ++g)
      _mm512_mask_storeu_ps(y + r * y_stride + 16 * g, g == NG - 1 ? last : __mmask16(0xffff), acc[r][g]);
}

template <class E, int NR>
void micro_groups(int ng, int64_t steps, const typename E::W* w, int64_t gs, const typename E::W* a, int64_t as,
                  float* y, int64_t ys, __mmask16 last) {
  switch (ng) {
    case 4: return micro<E, NR, 4>(steps, w, gs, a, as, y, ys, last);
    case 3: return micro<E, NR, 3>(steps, w, gs, a, as, y, ys, last);
    case 2: return micro<E, NR, 2>(steps, w, gs, a, as, y, ys, last);
    default: return micro<E, NR, 1>(steps, w, gs, a, as, y, ys, last);
  }
}

// F32: t.a holds the f32 rows; BF16: the rows prepared by prep_bf16 (pairs as dwords, zero-padded).
template <class E>
void packed_tile(const TileArgs& t) {
  static_assert(kRows == 6 && kGroups == 4);
  using W = typename E::W;
  const int64_t steps = (t.k + E::kPerStep - 1) / E::kPerStep, groups = (t.n + 15) / 16, gs = 16 * steps;
  const W* w = reinterpret_cast<const W*>(t.w);  // the tile starts at a group (driver.cc)
  const W* a = reinterpret_cast<const W*>(t.a);
  const int64_t as = t.a_stride / int64_t(sizeof(W));
  const int64_t mc = std::max<int64_t>(kRows, kActBytes / std::max<int64_t>(1, t.a_stride) / kRows * kRows);
  for (int64_t i0 = 0; i0 < t.m; i0 += mc) {
    const int64_t i1 = std::min(t.m, i0 + mc);
    for (int64_t g0 = 0; g0 < groups; g0 += kGroups) {
      const int ng = int(std::min<int64_t>(kGroups, groups - g0));
      const int64_t cols = std::min<int64_t>(16, t.n - 16 * (g0 + ng - 1));
      const __mmask16 last = __mmask16((1u << cols) - 1);
      for (int64_t i = i0; i < i1; i += kRows) {
        const W* ai = a + i * as;
        const W* wg = w + g0 * gs;
        float* y = t.y + i * t.y_stride + 16 * g0;
        switch (std::min<int64_t>(kRows, i1 - i)) {
          case 6: micro_groups<E, 6>(ng, steps, wg, gs, ai, as, y, t.y_stride, last); break;
          case 5: micro_groups<E, 5>(ng, steps, wg, gs, ai, as, y, t.y_stride, last); break;
          case 4: micro_groups<E, 4>(ng, steps, wg, gs, ai, as, y, t.y_stride, last); break;
          case 3: micro_groups<E, 3>(ng, steps, wg, gs, ai, as, y, t.y_stride, last); break;
          case 2: micro_groups<E, 2>(ng, steps, wg, gs, ai, as, y, t.y_stride, last); break;
          default: micro_groups<E, 1>(ng, steps, wg, gs, ai, as, y, t.y_stride, last); break;
        }
      }
    }
  }
}

}  // namespace

MatmulKernel avx512_float_packed_kernel(DType t) {
  MatmulKernel m;
  if (t == DType::F32) m.tile = packed_tile<F32>;
  if (t == DType::BF16) {
    m.act_row_bytes = bf16_row_bytes;
    m.prepare = prep_bf16;
    m.tile = packed_tile<Bf16>;
  }
  return m;
}

}  // namespace oxyd::backend::cpu
