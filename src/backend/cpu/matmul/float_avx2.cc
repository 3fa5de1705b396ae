// AVX2/FMA kernels for the float weight formats (BF16, F16 widened to f32; F32 as is) against the
// exact f32 rows of x. The tile is 4 activation rows × 2 weight rows: per 8 elements 2 weight and
// 4 activation loads feed 8 FMAs into 8 independent sums, so the FMA units, not the loads, set the
// pace. (One weight row at a time, 10 loads fed 8 FMAs and 16 rows ran at ~25 GFLOP/s per core.)
// Each output is its own chain of 8-wide FMAs over k, then one horizontal sum, whatever rows or
// weight rows share its tile: a row's result does not depend on the rest of the batch.
#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "backend/cpu/matmul/kernel.h"
#include "backend/cpu/matmul/rowdot_avx2.h"
#include "backend/cpu/matmul/tile.h"
#include "core/half.h"

namespace oxyd::backend::cpu {

namespace {

template <DType T>
struct Float {
  static constexpr int64_t kBytes = T == DType::F32 ? 4 : 2;
  static __m256 load8(const uint8_t* w, int64_t e) {
    if constexpr (T == DType::BF16)
      return _mm256_castsi256_ps(_mm256_slli_epi32(
          _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w + 2 * e))), 16));
    else if constexpr (T == DType::F16)
      return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w + 2 * e)));
    else
      return _mm256_loadu_ps(reinterpret_cast<const float*>(w) + e);
  }
  static float scalar(const uint8_t* w, int64_t e) {
    if constexpr (T == DType::BF16) {
      const uint32_t u = uint32_t(w[2 * e] | (w[2 * e + 1] << 8)) << 16;
      float f;
      std::memcpy(&f, &u, 4);
      return f;
    } else if constexpr (T == DType::F16) {
      uint16_t h;
      std::memcpy(&h, w + 2 * e, 2);
      return f16_to_f32(h);
    } else {
      float f;
      std::memcpy(&f, w + 4 * e, 4);
      return f;
    }
  }

  // out[c][r] = row r of the activations (a, a_stride bytes apart, f32) · weight row c (w[c]).
  template <int NR, int NW>
  static void dot(int64_t k, const uint8_t* const* w, const uint8_t* a, int64_t a_stride, float (*out)[4]) {
    __m256 acc[NW][NR];
    for (auto& row : acc)
      for (auto& v : row) v = _mm256_setzero_ps();
    int64_t e = 0;
    for (; e + 8 <= k; e += 8) {
      if (e % (64 / kBytes) == 0)
        for (int c = 0; c < NW; ++c) prefetch_ahead<64>(w[c] + e * kBytes);
      __m256 wv[NW];
      for (int c = 0; c < NW; ++c) wv[c] = load8(w[c], e);
      for (int r = 0; r < NR; ++r) {
        const __m256 x = _mm256_loadu_ps(reinterpret_cast<const float*>(a + r * a_stride) + e);
        for (int c = 0; c < NW; ++c) acc[c][r] = _mm256_fmadd_ps(wv[c], x, acc[c][r]);
      }
    }
    for (int c = 0; c < NW; ++c)
      for (int r = 0; r < NR; ++r) {
        const float* x = reinterpret_cast<const float*>(a + r * a_stride);
        float tail = 0.0f;
        for (int64_t t = e; t < k; ++t) tail += scalar(w[c], t) * x[t];
        out[c][r] = hsum8(acc[c][r]) + tail;
      }
  }
};

// tile_rows' loop (tile.h) with the weight rows of a block taken two at a time.
template <DType T>
void float_tile(const TileArgs& t) {
  using K = Float<T>;
  constexpr int64_t kRowBlock = 16;         // weight rows kept hot while m tiles pass
  constexpr int64_t kActBytes = 128 * 1024;  // activation rows kept in L2 while n is swept (a quarter of
                                             // Zen 3's: 512 KiB gave 2-6% less at 256 rows)
  const int64_t mc = std::max<int64_t>(4, kActBytes / std::max<int64_t>(1, t.a_stride) / 4 * 4);
  for (int64_t i0 = 0; i0 < t.m; i0 += mc) {
    const int64_t i1 = std::min(t.m, i0 + mc);
    for (int64_t j0 = 0; j0 < t.n; j0 += kRowBlock) {
      const int64_t j1 = std::min(t.n, j0 + kRowBlock);
      for (int64_t i = i0; i < i1; i += 4) {
        const int nr = int(std::min<int64_t>(4, i1 - i));
        const uint8_t* a = t.a + i * t.a_stride;
        for (int64_t j = j0; j < j1; j += 2) {
          const int nw = int(std::min<int64_t>(2, j1 - j));
          const uint8_t* w[2] = {t.w + j * t.w_stride, t.w + (j + nw - 1) * t.w_stride};
          float out[2][4];
          auto run = [&]<int NR>() {
            if (nw == 2) K::template dot<NR, 2>(t.k, w, a, t.a_stride, out);
            else K::template dot<NR, 1>(t.k, w, a, t.a_stride, out);
          };
          switch (nr) {
            case 4: run.template operator()<4>(); break;
            case 3: run.template operator()<3>(); break;
            case 2: run.template operator()<2>(); break;
            default: run.template operator()<1>(); break;
          }
          for (int c = 0; c < nw; ++c)
            for (int r = 0; r < nr; ++r) t.y[(i + r) * t.y_stride + j + c] = out[c][r];
        }
      }
    }
  }
}

}  // namespace

MatmulKernel avx2_float_kernel(DType t) {
  MatmulKernel m;
  switch (t) {
    case DType::BF16: m.tile = float_tile<DType::BF16>; break;
    case DType::F16: m.tile = float_tile<DType::F16>; break;
    case DType::F32: m.tile = float_tile<DType::F32>; break;
    default: break;
  }
  return m;
}

}  // namespace oxyd::backend::cpu
