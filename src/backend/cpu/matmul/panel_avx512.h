// The VNNI 16-row panel matmul shared by the block formats' panel kernels (block32_panel_avx512.cc
// for the 32-element block formats, kquant_panel_avx512.cc for the K-quants), for batched decode
// and prefill on CPUs without AMX (AMD Zen 4, Intel before Sapphire Rapids).
//
// The row-dot kernels (block32_avx512.cc, kquant_avx512.cc) spend ~6 vector ops per
// activation row per 2 vpdpbusd and sum lanes at the end. Here each panel of 16 weight rows is
// decoded once into PBlocks of unsigned codes, laid out so that int32 lane L of register q holds
// elements 4q..4q+3 of one weight row's 32-element (sub-)block; an activation row then costs, per
// 32-block, 8 vpdpbusd (its codes broadcast 4 at a time from memory) + convert, scale, fma. Lanes
// are weight rows, so the f32 sums need no horizontal reduction.
//
// The activation codes and scales are those of the format's row-dot kernel (quant32 per 32, or
// per 256-element super-block for the K-quants), so the integer block sums are the same and the
// two paths differ only in f32 summation order. Include only from *_avx512.cc files.
#pragma once

#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "backend/cpu/matmul/kernel.h"
#include "backend/cpu/matmul/act_quant32_avx512.h"

namespace oxyd::backend::cpu {
namespace {

// How a block's integer sum becomes f32: PLAIN dw·dx·s; MIN adds dm·(dx·Σcodes) (Q4_1, Q5_1,
// Q4_K, Q5_K); SPLIT has two 16-element halves with their own scales, dw for codes 0..15 and dm
// for 16..31 (Q6_K).
enum class Epi { PLAIN, MIN, SPLIT };

// One prepared activation row: codes[nb][32] in element order, then per block the scale dx and two
// words i0, i1: init = −OFF·Σcodes (the weights' unsigned code offset, removed from the integer sum)
// and sx = dx·Σcodes (f32 bits); SPLIT: the inits of the two halves. Padded to 64 bytes.
int64_t panel_row_bytes(int64_t k) {
  const int64_t nb = k / 32;
  return (nb * 32 + nb * 12 + 63) / 64 * 64;
}

// kPer256: one scale per 256 elements, unrounded (the K-quant row-dot kernels' Q8_K-like codes);
// else quant32 per 32 (f16-rounded scale).
template <int OFF, Epi EPI, bool kPer256>
void panel_prepare(const float* x, int64_t k, uint8_t* out) {
  const int64_t nb = k / 32;
  float* dx = reinterpret_cast<float*>(out + nb * 32);
  int32_t* i0 = reinterpret_cast<int32_t*>(out + nb * 36);
  int32_t* i1 = reinterpret_cast<int32_t*>(out + nb * 40);
  for (int64_t b = 0; b < nb; ++b) {
    int8_t* q = reinterpret_cast<int8_t*>(out + b * 32);
    if constexpr (kPer256) {
      if (b % 8 == 0) {
        __m512 mx = _mm512_setzero_ps();
        for (int i = 0; i < 256; i += 16) mx = _mm512_max_ps(mx, _mm512_abs_ps(_mm512_loadu_ps(x + b * 32 + i)));
        const float amax = _mm512_reduce_max_ps(mx);
        const __m512 id = _mm512_set1_ps(amax > 0.0f ? 127.0f / amax : 0.0f);
        for (int i = 0; i < 256; i += 16)
          _mm_storeu_si128(reinterpret_cast<__m128i*>(q + i),
                           _mm512_cvtsepi32_epi8(_mm512_cvtps_epi32(_mm512_mul_ps(_mm512_loadu_ps(x + b * 32 + i), id))));
        for (int s = 0; s < 8; ++s) dx[b + s] = amax / 127.0f;
      }
    } else {
      dx[b] = quant32(x + b * 32, q);
    }
    const int32_t lo = _mm512_reduce_add_epi32(_mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(q))));
    const int32_t hi =
        _mm512_reduce_add_epi32(_mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(q + 16))));
    if constexpr (EPI == Epi::SPLIT) {
      i0[b] = -OFF * lo;
      i1[b] = -OFF * hi;
    } else {
      i0[b] = -OFF * (lo + hi);
      const float sx = dx[b] * float(lo + hi);
      std::memcpy(i1 + b, &sx, 4);
    }
  }
}

// One decoded 32-block of a 16-row panel: w[q] lane L = elements 4q..4q+3 of weight row π(L) as
// unsigned codes; dw/dm the rows' scale and min (SPLIT: the two halves' scales) in lane order. The
// loads give lane order π(L) = 4·(L % 4) + L / 4 (a 4×4 transpose of 128-bit lanes), undone when
// the sums are stored.
struct alignas(64) PBlock {
  __m512i w[8];
  __m512 dw, dm;
};
static_assert(sizeof(PBlock) == 640);

inline __m512i pi_index() { return _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15); }

// Byte offsets of the 16 rows of a panel whose first `rows` are real (the rest repeat the last one;
// their sums are never stored): ro[r] natural order, gidx the same in lane order for gathers.
struct PanelRows {
  alignas(64) int64_t ro[16];
  __m512i gidx;
  PanelRows(int64_t ws, int rows) {
    alignas(64) int32_t r32[16];
    for (int r = 0; r < 16; ++r) ro[r] = int64_t(std::min(r, rows - 1)) * ws;
    for (int r = 0; r < 16; ++r) r32[r] = int32_t(ro[r]);
    gidx = _mm512_permutexvar_epi32(pi_index(), _mm512_load_si512(r32));
  }
};

// 16 bytes at p + off of the 16 rows as 4 registers: T[d] lane L = dword d of row π(L).
inline void load_transposed(const uint8_t* p, const PanelRows& pr, int64_t off, __m512i* T) {
  __m512i Z[4];
  for (int g = 0; g < 4; ++g) {
    auto row = [&](int r) { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + pr.ro[4 * g + r] + off)); };
    Z[g] = _mm512_castsi128_si512(row(0));
    Z[g] = _mm512_inserti32x4(Z[g], row(1), 1);
    Z[g] = _mm512_inserti32x4(Z[g], row(2), 2);
    Z[g] = _mm512_inserti32x4(Z[g], row(3), 3);
  }
  const __m512i A = _mm512_unpacklo_epi32(Z[0], Z[1]), B = _mm512_unpackhi_epi32(Z[0], Z[1]);
  const __m512i C = _mm512_unpacklo_epi32(Z[2], Z[3]), D = _mm512_unpackhi_epi32(Z[2], Z[3]);
  T[0] = _mm512_unpacklo_epi64(A, C);
  T[1] = _mm512_unpackhi_epi64(A, C);
  T[2] = _mm512_unpacklo_epi64(B, D);
  T[3] = _mm512_unpackhi_epi64(B, D);
}

// R activation rows (a, a_stride apart) against the nb blocks of a panel, block b = blocks(b) (a
// PBlock by value: read from a decoded panel, or decoded right there from packed weights); y row r
// gets the `rows` sums. Prefetches pf_bytes at pf spread over the blocks (the next panel's weights).
template <int R, Epi EPI, class Blocks>
void panel_rows(const Blocks& blocks, int64_t nb, const uint8_t* a, int64_t a_stride, float* y, int64_t ys, int rows,
                const uint8_t* pf, int64_t pf_bytes) {
  __m512 acc[R];
  for (auto& v : acc) v = _mm512_setzero_ps();
  const int64_t pf_step = (pf_bytes / nb + 64) / 64 * 64;
  for (int64_t b = 0; b < nb; ++b) {
    for (int64_t o = b * pf_step; o < std::min(pf_bytes, (b + 1) * pf_step); o += 64) __builtin_prefetch(pf + o, 0, 3);
    const PBlock pb = blocks(b);
    // Unrolled so that the R sums stay in registers across the blocks.
#pragma GCC unroll 16
    for (int r = 0; r < R; ++r) {
      const uint8_t* ar = a + r * a_stride;
      const int32_t* codes = reinterpret_cast<const int32_t*>(ar + b * 32);
      const __m512 dx = _mm512_set1_ps(reinterpret_cast<const float*>(ar + nb * 32)[b]);
      const int32_t i0 = reinterpret_cast<const int32_t*>(ar + nb * 36)[b];
      const int32_t i1 = reinterpret_cast<const int32_t*>(ar + nb * 40)[b];
      if constexpr (EPI == Epi::SPLIT) {
        __m512i s0 = _mm512_set1_epi32(i0), s1 = _mm512_set1_epi32(i1);
#pragma GCC unroll 4
        for (int q = 0; q < 4; ++q) {
          s0 = _mm512_dpbusd_epi32(s0, pb.w[q], _mm512_set1_epi32(codes[q]));
          s1 = _mm512_dpbusd_epi32(s1, pb.w[q + 4], _mm512_set1_epi32(codes[q + 4]));
        }
        acc[r] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(s0), _mm512_mul_ps(pb.dw, dx), acc[r]);
        acc[r] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(s1), _mm512_mul_ps(pb.dm, dx), acc[r]);
      } else {
        __m512i s = _mm512_set1_epi32(i0);
#pragma GCC unroll 8
        for (int q = 0; q < 8; ++q) s = _mm512_dpbusd_epi32(s, pb.w[q], _mm512_set1_epi32(codes[q]));
        acc[r] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(s), _mm512_mul_ps(pb.dw, dx), acc[r]);
        if constexpr (EPI == Epi::MIN) {
          float sx;
          std::memcpy(&sx, &i1, 4);
          acc[r] = _mm512_fmadd_ps(pb.dm, _mm512_set1_ps(sx), acc[r]);
        }
      }
    }
  }
  const __mmask16 live = rows >= 16 ? __mmask16(0xffff) : __mmask16((1u << rows) - 1);
  for (int r = 0; r < R; ++r) _mm512_mask_storeu_ps(y + r * ys, live, _mm512_permutexvar_ps(pi_index(), acc[r]));
}


// A panel of nb PBlocks in the pool thread's scratch.
inline PBlock* panel_scratch(const TileArgs& t, int64_t nb) {
  return reinterpret_cast<PBlock*>(t.scratch->get(kTileSlot0, size_t(nb) * sizeof(PBlock)));
}

// Activation rows [i0, i1) against the 16-row panel at column j0 (blocks(b): its blocks), in
// groups of 16, 8, 4, 2, 1 rows; the first group's pass prefetches the next panel's weights.
template <Epi EPI, class Blocks>
void panel_groups(const TileArgs& t, int64_t i0, int64_t i1, int64_t j0, const Blocks& blocks) {
  const int64_t nb = t.k / 32, ws = t.w_stride;
  const int rows = int(std::min<int64_t>(16, t.n - j0));
  const uint8_t* pf = t.w + (j0 + 16) * ws;
  int64_t pf_bytes = std::clamp<int64_t>(t.n - j0 - 16, 0, 16) * ws;
  for (int64_t i = i0; i < i1;) {
    const int64_t left = i1 - i;
    const uint8_t* a = t.a + i * t.a_stride;
    float* y = t.y + i * t.y_stride + j0;
    const int r = left >= 16 ? 16 : left >= 8 ? 8 : left >= 4 ? 4 : left >= 2 ? 2 : 1;
    switch (r) {
      case 16: panel_rows<16, EPI>(blocks, nb, a, t.a_stride, y, t.y_stride, rows, pf, pf_bytes); break;
      case 8: panel_rows<8, EPI>(blocks, nb, a, t.a_stride, y, t.y_stride, rows, pf, pf_bytes); break;
      case 4: panel_rows<4, EPI>(blocks, nb, a, t.a_stride, y, t.y_stride, rows, pf, pf_bytes); break;
      case 2: panel_rows<2, EPI>(blocks, nb, a, t.a_stride, y, t.y_stride, rows, pf, pf_bytes); break;
      default: panel_rows<1, EPI>(blocks, nb, a, t.a_stride, y, t.y_stride, rows, pf, pf_bytes); break;
    }
    pf_bytes = 0;
    i += r;
  }
}

// The tile: D::decode(w, ws, rows, nb, out) fills a panel's nb PBlocks.
template <class D, Epi EPI>
void panel_tile(const TileArgs& t) {
  const int64_t nb = t.k / 32, ws = t.w_stride;
  PBlock* panel = panel_scratch(t, nb);
  // Activation rows per pass over the panels: ~512 KiB of them stay in L2 while n is swept.
  const int64_t mc = std::max<int64_t>(16, (512 << 10) / t.a_stride / 16 * 16);
  for (int64_t i0 = 0; i0 < t.m; i0 += mc) {
    const int64_t i1 = std::min(t.m, i0 + mc);
    for (int64_t j0 = 0; j0 < t.n; j0 += 16) {
      const int rows = int(std::min<int64_t>(16, t.n - j0));
      D::decode(t.w + j0 * ws, ws, rows, nb, panel);
      panel_groups<EPI>(t, i0, i1, j0, [panel](int64_t b) { return panel[b]; });
    }
  }
}

// Weights packed at load (pack.h): D::block(p) decodes the block at p of a 16-row group
// (D::GB bytes per block). Up to 16 activation rows take the blocks straight into registers; more
// rows share one decoded panel, as the nibble split would otherwise repeat per group of 16 (10%
// slower at 64 rows).
template <class D, Epi EPI>
void packed_tile(const TileArgs& t) {
  const int64_t nb = t.k / 32, ws = t.w_stride;
  const int64_t mc = std::max<int64_t>(16, (512 << 10) / t.a_stride / 16 * 16);
  PBlock* panel = t.m > 16 ? panel_scratch(t, nb) : nullptr;
  for (int64_t i0 = 0; i0 < t.m; i0 += mc) {
    const int64_t i1 = std::min(t.m, i0 + mc);
    for (int64_t j0 = 0; j0 < t.n; j0 += 16) {
      const uint8_t* g = t.w + j0 * ws;  // j0 is a multiple of 16: the group's first block
      if (!panel) {
        panel_groups<EPI>(t, i0, i1, j0, [g](int64_t b) { return D::block(g + b * D::GB); });
        continue;
      }
      for (int64_t b = 0; b < nb; ++b) panel[b] = D::block(g + b * D::GB);
      panel_groups<EPI>(t, i0, i1, j0, [panel](int64_t b) { return panel[b]; });
    }
  }
}

// A panel kernel: quant32 (or per-256) activation rows in panel_prepare's layout, and `tile`.
template <int OFF, Epi EPI, bool kPer256>
MatmulKernel panel_kernel(void (*tile)(const TileArgs&)) {
  MatmulKernel k;
  k.act_row_bytes = panel_row_bytes;
  k.prepare = panel_prepare<OFF, EPI, kPer256>;
  k.tile = tile;
  return k;
}

template <class D, int OFF, Epi EPI, bool kPer256>
MatmulKernel make_panel_kernel() {
  return panel_kernel<OFF, EPI, kPer256>(panel_tile<D, EPI>);
}

template <class D, int OFF, Epi EPI>
MatmulKernel make_packed_kernel() {
  return panel_kernel<OFF, EPI, false>(packed_tile<D, EPI>);
}

}  // namespace
}  // namespace oxyd::backend::cpu
