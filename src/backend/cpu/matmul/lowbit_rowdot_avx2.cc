// AVX2 row-dot kernels for the weight formats below 4 bits and MXFP4: Q2_K, Q3_K (per 256
// super-block, against A256 activations) and MXFP4 (per 32-block, against A32), on the file's rows.
// None of them has a packed layout (pack.h), so without these they took the generic
// decode-to-f32 path: 0.6-1.0 GB/s at one row (2-3% of the bandwidth) and 20-26 GFLOP/s at 16.
//
// Q2_K: element 128h + 32s + l is bits 2s..2s+1 of qs[32h + l], value d·(sc & 15)·q − dmin·(sc >> 4)
// with sc the byte of its 16-element sub-block. Q3_K: the same 2 bits plus bit 4h + s of hmask[l]
// as bit 2 (u in [0, 8)), value d·sc·(u − 4) with a signed 6-bit sc per 16. Per (h, s) the 32 codes
// of 2 sub-blocks are one register; vpmaddubsw against the activation codes and vpmaddwd against
// the two sub-blocks' scales give exact int32 sums; the mins (Q2_K) and the −4 offset (Q3_K) come
// from the activations' per-16 code sums. MXFP4: the E2M1 codes through a 16-entry table of their
// doubled values (core/quant.h), the block scale halved to match, then Q8_0's signed dot.
#include <immintrin.h>

#include <cstring>

#include "backend/cpu/matmul/rowdot_avx2.h"
#include "backend/cpu/matmul/tile.h"
#include "core/quant.h"

namespace oxyd::backend::cpu {

namespace {

// The scales of sub-blocks j (low 128 bits) and j + 1 (high), j even, as int16 lanes, from a
// register holding 8 int16 scales in each 128-bit lane (those of sub-blocks 8·(j / 8) ..).
inline __m256i scale_pair(__m256i scales8, int j) {
  const int lo = 2 * (j % 8), hi = 2 * (j % 8 + 1);
  const __m128i l = _mm_set1_epi16(int16_t(lo | (lo + 1) << 8)), h = _mm_set1_epi16(int16_t(hi | (hi + 1) << 8));
  return _mm256_shuffle_epi8(scales8, _mm256_set_m128i(h, l));
}
// Q3_K's 16 signed 6-bit scales from its 12 bytes (core/quant.h unpack_q3_k_scales): scale i < 8
// has its low 4 bits in the low nibble of byte i, scale 8 + i in the high nibble; bits 4-5 of
// scale 4g + i are bits 2g, 2g + 1 of byte 8 + i.
inline __m128i q3k_scales(const uint8_t* p) {
  uint64_t lo8;
  uint32_t hi4;
  std::memcpy(&lo8, p, 8);
  std::memcpy(&hi4, p + 8, 4);
  const __m128i b = _mm_cvtsi64_si128(int64_t(lo8)), m0f = _mm_set1_epi8(0x0F);
  const __m128i low = _mm_unpacklo_epi64(_mm_and_si128(b, m0f), _mm_and_si128(_mm_srli_epi16(b, 4), m0f));
  // Each 32-bit group g of h holds bytes 8..11; shifted so bits 2g, 2g + 1 land on bits 4, 5.
  const __m128i h = _mm_set1_epi32(int32_t(hi4));
  __m128i hi = _mm_blend_epi16(_mm_slli_epi16(h, 4), _mm_slli_epi16(h, 2), 0x0C);
  hi = _mm_blend_epi16(hi, h, 0x30);
  hi = _mm_blend_epi16(hi, _mm_srli_epi16(h, 2), 0xC0);
  return _mm_sub_epi8(_mm_or_si128(low, _mm_and_si128(hi, _mm_set1_epi8(0x30))), _mm_set1_epi8(32));
}

inline const A256& a256(const uint8_t* a, int64_t a_stride, int r, int64_t sb) {
  return reinterpret_cast<const A256*>(a + r * a_stride)[sb];
}

struct Q2KKernel {
  template <int NR>
  static void dot(int64_t k, const uint8_t* w, const uint8_t* a, int64_t a_stride, float* out) {
    const __m256i m3 = _mm256_set1_epi8(3);
    __m256 acc[NR], macc[NR];
    for (int r = 0; r < NR; ++r) acc[r] = macc[r] = _mm256_setzero_ps();
    for (int64_t sb = 0; sb < k / 256; ++sb) {
      const uint8_t* p = w + sb * 84;  // scales[16], qs[64], d, dmin
      prefetch_ahead<84>(p);
      const float d = f16(p + 80), dmin = f16(p + 82);
      const __m256i sc = _mm256_cvtepu8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
      const __m256i mins = _mm256_srli_epi16(sc, 4), scales = _mm256_and_si256(sc, _mm256_set1_epi16(15));
      __m256i s[NR];
      for (int r = 0; r < NR; ++r) s[r] = _mm256_setzero_si256();
#pragma GCC unroll 2
      for (int h = 0; h < 2; ++h) {
        const __m256i q = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 16 + 32 * h));
        const __m256i scales8 =  // the immediate must be a constant (clang)
            h ? _mm256_permute2x128_si256(scales, scales, 0x11) : _mm256_permute2x128_si256(scales, scales, 0x00);
#pragma GCC unroll 4
        for (int sh = 0; sh < 4; ++sh) {
          const __m256i c = _mm256_and_si256(_mm256_srli_epi16(q, 2 * sh), m3);
          const int j = 8 * h + 2 * sh;
          const __m256i sv = scale_pair(scales8, j);
          for (int r = 0; r < NR; ++r) {
            const int8_t* xq = a256(a, a_stride, r, sb).qs + 32 * (j / 2);
            const __m256i x = _mm256_load_si256(reinterpret_cast<const __m256i*>(xq));
            s[r] = _mm256_add_epi32(s[r], _mm256_madd_epi16(_mm256_maddubs_epi16(c, x), sv));
          }
        }
      }
      for (int r = 0; r < NR; ++r) {
        const A256& x = a256(a, a_stride, r, sb);
        const __m256i msum = _mm256_madd_epi16(mins, _mm256_load_si256(reinterpret_cast<const __m256i*>(x.bsum16)));
        acc[r] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(s[r]), _mm256_set1_ps(d * x.d), acc[r]);
        macc[r] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(msum), _mm256_set1_ps(dmin * x.d), macc[r]);
      }
    }
    for (int r = 0; r < NR; ++r) out[r] = hsum8(acc[r]) - hsum8(macc[r]);
  }
};

struct Q3KKernel {
  template <int NR>
  static void dot(int64_t k, const uint8_t* w, const uint8_t* a, int64_t a_stride, float* out) {
    const __m256i m3 = _mm256_set1_epi8(3), m4 = _mm256_set1_epi8(4);
    __m256 acc[NR];
    for (int r = 0; r < NR; ++r) acc[r] = _mm256_setzero_ps();
    for (int64_t sb = 0; sb < k / 256; ++sb) {
      const uint8_t* p = w + sb * 110;  // hmask[32], qs[64], scales[12], d
      prefetch_ahead<110>(p);
      const float d = f16(p + 108);
      const __m128i sc = q3k_scales(p + 96);
      const __m256i sc16 = _mm256_cvtepi8_epi16(sc);
      const __m256i hm = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
      __m256i s[NR];
      for (int r = 0; r < NR; ++r) {  // start from −4 · Σ sc · (codes per 16): the offset of u − 4
        const __m256i bs = _mm256_load_si256(reinterpret_cast<const __m256i*>(a256(a, a_stride, r, sb).bsum16));
        s[r] = _mm256_sub_epi32(_mm256_setzero_si256(), _mm256_slli_epi32(_mm256_madd_epi16(sc16, bs), 2));
      }
#pragma GCC unroll 2
      for (int h = 0; h < 2; ++h) {
        const __m256i q = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 32 + 32 * h));
        const __m256i scales8 =  // the immediate must be a constant (clang)
            h ? _mm256_permute2x128_si256(sc16, sc16, 0x11) : _mm256_permute2x128_si256(sc16, sc16, 0x00);
#pragma GCC unroll 4
        for (int sh = 0; sh < 4; ++sh) {
          // Shifts of 16-bit lanes: the bits a byte takes from its neighbour fall outside the mask.
          const __m256i lo = _mm256_and_si256(_mm256_srli_epi16(q, 2 * sh), m3);
          const int hs = 4 * h + sh - 2;  // hmask bit 4h + sh to bit 2
          const __m256i hb = _mm256_and_si256(hs < 0 ? _mm256_slli_epi16(hm, -hs) : _mm256_srli_epi16(hm, hs), m4);
          const __m256i u = _mm256_or_si256(lo, hb);
          const int j = 8 * h + 2 * sh;
          const __m256i sv = scale_pair(scales8, j);
          for (int r = 0; r < NR; ++r) {
            const int8_t* xq = a256(a, a_stride, r, sb).qs + 32 * (j / 2);
            const __m256i x = _mm256_load_si256(reinterpret_cast<const __m256i*>(xq));
            s[r] = _mm256_add_epi32(s[r], _mm256_madd_epi16(_mm256_maddubs_epi16(u, x), sv));
          }
        }
      }
      for (int r = 0; r < NR; ++r)
        acc[r] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(s[r]), _mm256_set1_ps(d * a256(a, a_stride, r, sb).d), acc[r]);
    }
    for (int r = 0; r < NR; ++r) out[r] = hsum8(acc[r]);
  }
};

struct MXFP4Kernel {
  template <int NR>
  static void dot(int64_t k, const uint8_t* w, const uint8_t* a, int64_t a_stride, float* out) {
    const __m256i m0f = _mm256_set1_epi8(0x0F);
    __m128i t;
    std::memcpy(&t, kMXFP4Values, 16);
    const __m256i lut = _mm256_set_m128i(t, t);
    __m256 acc[NR];
    for (int r = 0; r < NR; ++r) acc[r] = _mm256_setzero_ps();
    for (int64_t b = 0; b < k / 32; ++b) {
      const uint8_t* p = w + b * 17;  // e, qs[16]: element j the low nibble of qs[j], 16 + j the high
      if (b % 4 == 0) prefetch_ahead<68>(p);
      const __m128i q = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 1));
      const __m256i v = _mm256_shuffle_epi8(lut, _mm256_and_si256(_mm256_set_m128i(_mm_srli_epi16(q, 4), q), m0f));
      const __m256 dw = _mm256_set1_ps(e8m0_to_f32_half(p[0]));
      for (int r = 0; r < NR; ++r) {
        const A32& x = reinterpret_cast<const A32*>(a + r * a_stride)[b];
        const __m256i s = dot_s8(v, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x.qs)));
        acc[r] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(s), _mm256_mul_ps(dw, _mm256_set1_ps(x.d)), acc[r]);
      }
    }
    for (int r = 0; r < NR; ++r) out[r] = hsum8(acc[r]);
  }
};

}  // namespace

MatmulKernel avx2_lowbit_kernel(DType t) {
  MatmulKernel m;
  switch (t) {
    case DType::Q2_K: m.act_row_bytes = a256_row_bytes; m.prepare = prep_a256; m.tile = tile_rows<Q2KKernel>; break;
    case DType::Q3_K: m.act_row_bytes = a256_row_bytes; m.prepare = prep_a256; m.tile = tile_rows<Q3KKernel>; break;
    case DType::MXFP4: m.act_row_bytes = a32_row_bytes; m.prepare = prep_a32; m.tile = tile_rows<MXFP4Kernel>; break;
    default: break;
  }
  return m;
}

}  // namespace oxyd::backend::cpu
