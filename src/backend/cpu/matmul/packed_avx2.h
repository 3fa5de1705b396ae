// Shared by the AVX2 packed matmul kernels (packed_avx2.cc for the 32-block formats and
// Q4_K, packed_q6k_avx2.cc for Q6_K): the weights are 16-row groups of two 8-row halves
// (pack.h), int32 lane L' of half h holding weight row π(8h + L'). Include only from
// *_avx2.cc files.
#pragma once

#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "backend/cpu/matmul/kernel.h"

namespace oxyd::backend::cpu {
namespace {

// An empty asm on a running sum: GCC would otherwise re-associate a block's chain of integer adds
// into a tree, keep all 32 products of a 4-row block live at once and spill them (measured 2× slower).
inline __m256i keep(__m256i v) {
  asm("" : "+x"(v));
  return v;
}

inline __m256i bcast(const uint8_t* p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  return _mm256_set1_epi32(v);
}

// Lane L' of half h holds weight row π(8h + L'), π(L) = 4·(L % 4) + L / 4 (pack.h).
inline int lane_row(int h, int l) { return 4 * (l % 4) + 2 * h + l / 4; }

// K::rows<R, H>(g, nb, h0, a, a_stride, out, pf, dec): R activation rows against halves h0..h0+H-1
// of the group at g (nb 32-element blocks); out[H·r + hh][L'] gets lane L' of row r, half h0 + hh;
// pf: the next group, to prefetch (null: none); dec: the group's codes as K::decode(g, nb, dec)
// wrote them, read instead of unpacking g's (null: unpack; only where K::kDecodes). The first
// tile over a group prefetches the next one block by block as it computes, also when the group
// was decoded first: decode's pass is short, and its prefetching the whole next group at once
// (9 KiB at k = 1024) overran the misses a core can track (one core, 16 rows of a 151936×1024
// head, interleaved rounds: Q6_K 81 → 108, Q4_0 132 → 146 GOP/s, Q4_K within the noise). Every pass
// takes both halves of a group, so its weights are read once per pass (at m = 1 that keeps decode
// at the memory bandwidth; at 4 rows it was 5-25% faster than a pass per half on weights streamed
// from memory, most for Q8_0), except Q6_K at 4 rows (K::kFourRowsBothHalves false: one half per
// pass, its registers allow no more).
template <class K>
void packed_tile(const TileArgs& t) {
  const int64_t nb = t.k / 32, ws = t.w_stride;
  // Formats whose codes need unpacking (K::kDecodes) unpack a group once per pass over it when it
  // serves at least kDecodeRows activation rows, into 512 bytes per block that every 4-row tile
  // then loads (K::decode), instead of unpacking it again for every tile. Measured on Zen 3, one
  // core: Q5_0 640×2048 at 832 rows 130-146 → 149-161 GOP/s, equal at 16 rows; Gemma 3 270M's
  // 256- and 832-token prefills 5-7% faster (best of six).
  constexpr int64_t kDecodeRows = 8;
  uint8_t* dec = nullptr;  // in the pool thread's scratch (64-byte aligned)
  if (K::kDecodes && t.m >= kDecodeRows) dec = t.scratch->get(kTileSlot0, size_t(nb * 512 + 32));
  // Activation rows per pass over the groups: ~256 KiB of them stay in L2 while n is swept.
  const int64_t mc = std::max<int64_t>(4, (256 << 10) / t.a_stride / 4 * 4);
  alignas(32) float out[8][8];
  auto store = [&](int64_t i, int r, int h0, int H, int rows, int64_t j0) {
    for (int q = 0; q < r * H; ++q) {
      float* y = t.y + (i + q / H) * t.y_stride + j0;
      for (int l = 0; l < 8; ++l)
        if (const int row = lane_row(h0 + q % H, l); row < rows) y[row] = out[q][l];
    }
  };
  for (int64_t i0 = 0; i0 < t.m; i0 += mc) {
    const int64_t i1 = std::min(t.m, i0 + mc);
    for (int64_t j0 = 0; j0 < t.n; j0 += 16) {
      const uint8_t* g = t.w + j0 * ws;  // j0 is a multiple of 16: the group's first block
      const int rows = int(std::min<int64_t>(16, t.n - j0));
      const uint8_t* pf = j0 + 16 < t.n ? g + 16 * ws : nullptr;
      const int halves = rows > 2 ? 2 : 1;  // half 0 holds rows 0, 1, 4, 5, ...
      const uint8_t* d = dec && i1 - i0 >= kDecodeRows ? dec : nullptr;
      if (d) K::decode(g, nb, dec);
      int64_t i = i0;
      if (K::kFourRowsBothHalves && halves == 2)
        for (; i1 - i >= 4; i += 4) {
          K::template rows<4, 2>(g, nb, 0, t.a + i * t.a_stride, t.a_stride, out, i == i0 ? pf : nullptr, d);
          store(i, 4, 0, 2, rows, j0);
        }
      for (; i1 - i >= 4; i += 4)
        for (int h = 0; h < halves; ++h) {
          K::template rows<4, 1>(g, nb, h, t.a + i * t.a_stride, t.a_stride, out, h == 0 && i == i0 ? pf : nullptr,
                                 d);
          store(i, 4, h, 1, rows, j0);
        }
      for (; i < i1;) {
        const int r = i1 - i >= 2 ? 2 : 1;
        const uint8_t* a = t.a + i * t.a_stride;
        const uint8_t* pfr = i == i0 ? pf : nullptr;
        if (halves == 2)
          r == 2 ? K::template rows<2, 2>(g, nb, 0, a, t.a_stride, out, pfr, d)
                 : K::template rows<1, 2>(g, nb, 0, a, t.a_stride, out, pfr, d);
        else
          r == 2 ? K::template rows<2, 1>(g, nb, 0, a, t.a_stride, out, pfr, d)
                 : K::template rows<1, 1>(g, nb, 0, a, t.a_stride, out, pfr, d);
        store(i, r, 0, halves, rows, j0);
        i += r;
      }
    }
  }
}

}  // namespace
}  // namespace oxyd::backend::cpu
