// The shared tile loop of the hand-written matmul kernels: for a chunk of activation rows that
// fits in L2 and a block of weight rows, walk the activation rows four at a time and let the
// kernel's dot<NR> compute NR outputs per weight row, so each decoded weight block serves up to
// four activation rows. Include only from matmul/*.cc,
// with a kernel type of that file's anonymous namespace (ISA flags differ per file).
#pragma once

#include <algorithm>
#include <cstdint>

#include "backend/cpu/matmul/kernel.h"

namespace oxyd::backend::cpu {

/// Batch-1 decode is DRAM-bound and the hardware prefetchers alone left ~30% of the bandwidth
/// unused (measured: Q4_0 4096×14336, 1 thread, 8.2 → 11.5 GB/s at 4 KiB ahead; 1, 2, 8 KiB
/// were worse), so the kernels prefetch their weight stream this far ahead.
inline constexpr int64_t kPrefetchDistance = 4096;

/// Prefetches the cache lines of [p, p + bytes) + kPrefetchDistance into L1.
template <int kBytes>
inline void prefetch_ahead(const uint8_t* p) {
  for (int o = 0; o < kBytes; o += 64)
    __builtin_prefetch(p + kPrefetchDistance + o, 0, 3);
}

/// K::dot<NR>(k, w_row, a_rows, a_stride, out): out[r] = row r of the activations · w_row.
template <class K>
void tile_rows(const TileArgs& t) {
  constexpr int64_t kRowBlock = 16;            // weight rows kept hot in L1/L2 while m tiles pass
  constexpr int64_t kActBytes = 512 * 1024;    // activation rows kept in L2 while n is swept
  const int64_t mc = std::max<int64_t>(4, kActBytes / std::max<int64_t>(1, t.a_stride) / 4 * 4);
  for (int64_t i0 = 0; i0 < t.m; i0 += mc) {
    const int64_t i1 = std::min(t.m, i0 + mc);
    for (int64_t j0 = 0; j0 < t.n; j0 += kRowBlock) {
      const int64_t j1 = std::min(t.n, j0 + kRowBlock);
      for (int64_t i = i0; i < i1; i += 4) {
        const int nr = int(std::min<int64_t>(4, i1 - i));
        const uint8_t* a = t.a + i * t.a_stride;
        for (int64_t j = j0; j < j1; ++j) {
          float out[4];
          const uint8_t* w = t.w + j * t.w_stride;
          switch (nr) {
            case 4: K::template dot<4>(t.k, w, a, t.a_stride, out); break;
            case 3: K::template dot<3>(t.k, w, a, t.a_stride, out); break;
            case 2: K::template dot<2>(t.k, w, a, t.a_stride, out); break;
            default: K::template dot<1>(t.k, w, a, t.a_stride, out); break;
          }
          for (int r = 0; r < nr; ++r) t.y[(i + r) * t.y_stride + j] = out[r];
        }
      }
    }
  }
}

}  // namespace oxyd::backend::cpu
