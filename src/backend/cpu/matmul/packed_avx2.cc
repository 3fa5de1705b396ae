// AVX2 matmul on weights packed at load (pack.h, PackLayout::AVX2): Q4_0, Q4_1, Q5_0, Q5_1,
// Q8_0, IQ4_NL, MXFP4 and the 4-bit super-block formats Q4_K, Q5_K, IQ4_XS (their 32-element sub-blocks as
// Q4_1-, Q5_1- and IQ4_NL-like blocks; Q6_K is in packed_q6k_avx2.cc), at every number of
// activation rows (decode and prefill alike), for CPUs without AVX-512 VNNI (AMD Zen 2/3, Intel
// before Ice Lake, and E-cores), and for the super-block formats on AVX-512 CPUs too (they have no
// AVX-512 packed layout; one kernel at every number of rows keeps matmul batch-invariant).
//
// A packed 32-block of 16 weight rows is two halves of 8 rows. Half h of code register d is 32
// bytes in which int32 lane L' holds 4 code bytes of one weight row, so one vpmaddubsw against an
// activation row's 4 codes broadcast to every lane multiplies 8 weight rows at once and the sums
// need no horizontal reduction. Without VNNI the products go through int16: unsigned 4-bit codes
// (≤ 15) against int8 codes (|x| ≤ 127) stay below 2·15·127 per pair, so the 8 steps of a block
// add up in int16 (≤ 30480) and widen once; 5-bit codes widen every 4 steps (≤ 31496). Signed
// codes (Q8_0, IQ4_NL's table values) take the sign trick, |w| · (x · sign w), and widen per step.
//
// The activation rows are panel_prepare's layout (panel_avx512.h): quant32 codes, the f32
// scale, −OFF·Σcodes and dx·Σcodes per block, with the same rounding. Every integer block sum is
// exact, and f32 accumulation is the same fma chain per output as the AVX-512 packed kernel's, so
// the two give identical results on the formats both pack, and a row's result never depends on
// the other rows of the batch.
#include "backend/cpu/matmul/packed_avx2.h"
#include "backend/cpu/matmul/act_quant_avx2.h"

#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "backend/cpu/matmul/kernel.h"
#include "core/half.h"

namespace oxyd::backend::cpu {

MatmulKernel avx2_packed_q6k_kernel();  // packed_q6k_avx2.cc

namespace {

int64_t act_row_bytes(int64_t k) {
  const int64_t nb = k / 32;
  return (nb * 32 + nb * 12 + 63) / 64 * 64;
}

// quant32 of act_quant32_avx512.h: q = round(x · 127 / amax), scale amax / 127 rounded to f16.
// Returns the scale; q gets 32 codes, *sum their sum.
inline float quant32(const float* x, int8_t* q, int32_t* sum) {
  const float amax = amax8(x, 32);
  quant8(x, 32, amax > 0.0f ? 127.0f / amax : 0.0f, q);
  const __m256i codes = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q));
  const __m256i s32 = _mm256_madd_epi16(_mm256_maddubs_epi16(_mm256_set1_epi8(1), codes), _mm256_set1_epi16(1));
  __m128i s4 = _mm_add_epi32(_mm256_castsi256_si128(s32), _mm256_extracti128_si256(s32, 1));
  s4 = _mm_add_epi32(s4, _mm_shuffle_epi32(s4, 0x4E));
  *sum = _mm_cvtsi128_si32(_mm_add_epi32(s4, _mm_shuffle_epi32(s4, 0xB1)));
  return f16_to_f32(f32_to_f16(amax / 127.0f));
}

// One activation row: codes[nb][32], then per block dx (f32), −OFF·Σcodes (int32), dx·Σcodes (f32).
template <int OFF>
void prepare(const float* x, int64_t k, uint8_t* out) {
  const int64_t nb = k / 32;
  float* dx = reinterpret_cast<float*>(out + nb * 32);
  int32_t* init = reinterpret_cast<int32_t*>(out + nb * 36);
  float* sx = reinterpret_cast<float*>(out + nb * 40);
  for (int64_t b = 0; b < nb; ++b) {
    int32_t sum = 0;
    dx[b] = quant32(x + b * 32, reinterpret_cast<int8_t*>(out + b * 32), &sum);
    init[b] = -OFF * sum;
    sx[b] = dx[b] * float(sum);
  }
}

// The nibble tables: none, IQ4_NL's values, MXFP4's (twice the e2m1 values, as in the file-row
// kernels, so the scale is 2^(e − 128)).
enum Lut : int { kNoLut = 0, kIQ4NL = 1, kMXFP4 = 2 };

// A packed format: ND code registers per block (8: a byte per code, 4: nibbles, the high nibble
// holding element 16 + e), QH Q5's fifth bits after the codes, MIN a second row of f16 (the mins)
// after the scales, LUT a table of int8 values on the nibbles. Signed codes (Q8_0, the tables) take
// the sign trick; unsigned ones add up in int16 for WIDEN steps.
// block(g, b): block b's codes in the group at g; scale / min(g, b, h): half h's 8 f32 scales
// (mins) of it; BB: bytes per block, for prefetching the next group.
template <int ND_, bool QH_, bool MIN_, int LUT_>
struct Fmt {
  static constexpr int ND = ND_;
  static constexpr bool QH = QH_, MIN = MIN_;
  static constexpr int LUT = LUT_;
  static constexpr int64_t SCALES = 64 * ND + (QH ? 64 : 0);
  static constexpr int64_t BB = SCALES + (MIN ? 64 : 32);
  static constexpr bool SIGNED = ND == 8 || LUT;
  static const uint8_t* block(const uint8_t* g, int64_t b) { return g + b * BB; }
  static __m256 f16x8(const uint8_t* p) {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  }
  static __m256 scale(const uint8_t* g, int64_t b, int h) { return f16x8(block(g, b) + SCALES + 16 * h); }
  static __m256 min(const uint8_t* g, int64_t b, int h) { return f16x8(block(g, b) + SCALES + 32 + 16 * h); }
};

// MXFP4: IQ4_NL's layout with 16 e8m0 bytes for scales; half h's 8 scales 2^(e − 128), exact
// (e = 0 is 2^-128, below the normal range: set apart, as e << 23 would read 0).
struct MxFp4 : Fmt<4, false, false, kMXFP4> {
  static constexpr int64_t BB = SCALES + 16;
  static const uint8_t* block(const uint8_t* g, int64_t b) { return g + b * BB; }
  static __m256 scale(const uint8_t* g, int64_t b, int h) {
    const uint8_t* sc = block(g, b) + SCALES + 8 * h;
    const __m256i e = _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(sc)));
    const __m256 p = _mm256_mul_ps(_mm256_castsi256_ps(_mm256_slli_epi32(e, 23)), _mm256_set1_ps(0.5f));
    const __m256 zero_e = _mm256_castsi256_ps(_mm256_cmpeq_epi32(e, _mm256_setzero_si256()));
    return _mm256_blendv_ps(p, _mm256_set1_ps(0x1p-128f), zero_e);
  }
};

// The 4-bit super-block formats (pack.h): a super-block of a group is 8 sub-blocks of
// Q4_0-ordered codes (Q5_K: each followed by its fifth bits), then per sub-block and row a scale
// byte, and the rows' f16 d. Q4_K, Q5_K: 6-bit scales then mins, and f16 dmin after d; a
// sub-block's scale is d·sc and its min −dmin·m. IQ4_XS: int8 scales (ls − 32), its scale d·ls.
// All exact in f32.
template <bool QH_, bool XS>
struct KQuant : Fmt<4, QH_, !XS, XS> {
  static constexpr int64_t CB = QH_ ? 320 : 256, SC = 8 * CB, D = SC + (XS ? 128 : 256);
  static constexpr int64_t SB = D + (XS ? 32 : 64), BB = SB / 8;
  static const uint8_t* block(const uint8_t* g, int64_t b) { return g + b / 8 * SB + CB * (b % 8); }
  static __m128i bytes8(const uint8_t* p) { return _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)); }
  static __m256 scale(const uint8_t* g, int64_t b, int h) {
    const uint8_t* s = g + b / 8 * SB;
    const __m128i sc = bytes8(s + SC + 16 * (b % 8) + 8 * h);
    const __m256i sc32 = XS ? _mm256_cvtepi8_epi32(sc) : _mm256_cvtepu8_epi32(sc);
    return _mm256_mul_ps(Fmt<4, QH_, !XS, XS>::f16x8(s + D + 16 * h), _mm256_cvtepi32_ps(sc32));
  }
  static __m256 min(const uint8_t* g, int64_t b, int h) {
    const uint8_t* s = g + b / 8 * SB;
    const __m256 m = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(bytes8(s + SC + 128 + 16 * (b % 8) + 8 * h)));
    return _mm256_mul_ps(_mm256_sub_ps(_mm256_setzero_ps(), Fmt<4, QH_, !XS, XS>::f16x8(s + D + 32 + 16 * h)), m);
  }
};

// The codes of step d (elements 4d.. in lo, 16 + 4d.. in hi) of half h of a nibble-format block
// at p: 4-bit codes, with Q5's fifth bits, or IQ4_NL's int8 table values.
template <class F>
inline void unpack(const uint8_t* p, int h, int d, __m256i m0f, __m256i& lo, __m256i& hi) {
  const __m256i T = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 64 * d + 32 * h));
  lo = _mm256_and_si256(T, m0f);
  hi = _mm256_and_si256(_mm256_srli_epi16(T, 4), m0f);
  if constexpr (F::QH) {  // bit d of a mask byte: element 4d + j's fifth bit; bit 4 + d: 16 + 4d + j's
    const __m256i M = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 256 + 32 * h));
    const __m256i b4 = _mm256_set1_epi8(0x10);
    lo = _mm256_or_si256(lo, _mm256_and_si256(_mm256_slli_epi16(M, 4 - d), b4));
    hi = _mm256_or_si256(hi, _mm256_and_si256(_mm256_srli_epi16(M, d), b4));
  }
  if constexpr (F::LUT != kNoLut) {  // the table's int8 values
    const __m256i lut =
        F::LUT == kIQ4NL
            ? _mm256_setr_epi8(-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113, -127, -104,
                               -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113)
            : _mm256_setr_epi8(0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12, 0, 1, 2, 3, 4, 6, 8, 12, 0, -1,
                               -2, -3, -4, -6, -8, -12);
    lo = _mm256_shuffle_epi8(lut, lo);
    hi = _mm256_shuffle_epi8(lut, hi);
  }
}

// Signed codes w against broadcast activation codes x: 8 int32 sums of 4 products.
inline __m256i dot_signed(__m256i aw, __m256i w, __m256i x, __m256i ones) {
  return _mm256_madd_epi16(_mm256_maddubs_epi16(aw, _mm256_sign_epi8(x, w)), ones);
}

// R activation rows against H halves (h0, h0 + 1, ...) of the 16-row group at g (nb blocks): slot
// q = H·r + hh is row r against half h0 + hh, and out[q][L'] gets its lane L'. pf: the next group's
// first byte, prefetched block by block (null: none). One or two rows take both halves in one
// pass, so a group's weights stream from memory once, not once per half.
template <class F, int R, int H, bool DEC>
void half_rows(const uint8_t* g, int64_t nb, int h0, const uint8_t* a, int64_t as, float (*out)[8],
               const uint8_t* pf, const uint8_t* dec) {
  constexpr int Q = R * H;
  // Up to four slots keep their f32 sums in registers; eight (4 rows × 2 halves) need the registers
  // for the integer sums and accumulate in out (L1) once per block.
  constexpr bool kAccInOut = Q > 4;
  const __m256i m0f = _mm256_set1_epi8(0x0F), ones = _mm256_set1_epi16(1);
  __m256 acc[kAccInOut ? 1 : Q];
  if constexpr (kAccInOut)
    for (int q = 0; q < Q; ++q) _mm256_storeu_ps(out[q], _mm256_setzero_ps());
  else
#pragma GCC unroll 8
    for (auto& v : acc) v = _mm256_setzero_ps();
  auto fma_slot = [&](int q, __m256 a, __m256 b) {
    if constexpr (kAccInOut)
      _mm256_storeu_ps(out[q], _mm256_fmadd_ps(a, b, _mm256_loadu_ps(out[q])));
    else
      acc[q] = _mm256_fmadd_ps(a, b, acc[q]);
  };
  const float* dx[R];
  const int32_t* init[R];
  const float* sx[R];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
    dx[r] = reinterpret_cast<const float*>(a + r * as + nb * 32);
    init[r] = reinterpret_cast<const int32_t*>(a + r * as + nb * 36);
    sx[r] = reinterpret_cast<const float*>(a + r * as + nb * 40);
  }
  for (int64_t b = 0; b < nb; ++b) {
    const uint8_t* p = F::block(g, b);
    if (pf)
      for (int64_t o = 0; o < F::BB; o += 64) __builtin_prefetch(pf + b * F::BB + o, 0, 3);
    const uint8_t* x = a + b * 32;
    __m256i s[Q];
#pragma GCC unroll 8
    for (int q = 0; q < Q; ++q) s[q] = _mm256_set1_epi32(init[q / H][b]);
    if constexpr (F::ND == 8) {  // Q8_0: a code byte per element
#pragma GCC unroll 8
      for (int d = 0; d < 8; ++d) {
        __m256i w[H], aw[H];
#pragma GCC unroll 2
        for (int hh = 0; hh < H; ++hh) {
          w[hh] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 64 * d + 32 * (h0 + hh)));
          aw[hh] = _mm256_abs_epi8(w[hh]);
        }
#pragma GCC unroll 8
        for (int r = 0; r < R; ++r) {
          const __m256i xr = bcast(x + r * as + 4 * d);
#pragma GCC unroll 2
          for (int hh = 0; hh < H; ++hh)
            s[H * r + hh] = keep(_mm256_add_epi32(s[H * r + hh], dot_signed(aw[hh], w[hh], xr, ones)));
        }
      }
    } else {
      constexpr bool kQh = F::QH;
      __m256i s16[Q];
#pragma GCC unroll 8
      for (auto& v : s16) v = _mm256_setzero_si256();
#pragma GCC unroll 4
      for (int d = 0; d < 4; ++d) {
        __m256i lo[H], hi[H];
#pragma GCC unroll 2
        for (int hh = 0; hh < H; ++hh) {
          if constexpr (DEC) {
            const uint8_t* c = dec + (b * 2 + h0 + hh) * 256 + 32 * d;
            lo[hh] = _mm256_load_si256(reinterpret_cast<const __m256i*>(c));
            hi[hh] = _mm256_load_si256(reinterpret_cast<const __m256i*>(c + 128));
          } else {
            unpack<F>(p, h0 + hh, d, m0f, lo[hh], hi[hh]);
          }
        }
#pragma GCC unroll 8
        for (int r = 0; r < R; ++r) {
          const __m256i xl = bcast(x + r * as + 4 * d), xh = bcast(x + r * as + 16 + 4 * d);
#pragma GCC unroll 2
          for (int hh = 0; hh < H; ++hh) {
            const int q = H * r + hh;
            if constexpr (F::LUT) {
              s[q] = keep(_mm256_add_epi32(s[q], dot_signed(_mm256_abs_epi8(lo[hh]), lo[hh], xl, ones)));
              s[q] = keep(_mm256_add_epi32(s[q], dot_signed(_mm256_abs_epi8(hi[hh]), hi[hh], xh, ones)));
            } else {
              s16[q] = keep(_mm256_add_epi16(s16[q], _mm256_maddubs_epi16(lo[hh], xl)));
              s16[q] = keep(_mm256_add_epi16(s16[q], _mm256_maddubs_epi16(hi[hh], xh)));
            }
          }
        }
        if (kQh && d % 2 == 1) {  // 5-bit codes: widen every 4 steps
#pragma GCC unroll 8
          for (int q = 0; q < Q; ++q) {
            s[q] = _mm256_add_epi32(s[q], _mm256_madd_epi16(s16[q], ones));
            s16[q] = _mm256_setzero_si256();
          }
        }
      }
      if constexpr (!kQh && !F::LUT)
#pragma GCC unroll 8
        for (int q = 0; q < Q; ++q) s[q] = _mm256_add_epi32(s[q], _mm256_madd_epi16(s16[q], ones));
    }
#pragma GCC unroll 2
    for (int hh = 0; hh < H; ++hh) {
      const __m256 dw = F::scale(g, b, h0 + hh);
#pragma GCC unroll 8
      for (int r = 0; r < R; ++r)
        fma_slot(H * r + hh, _mm256_cvtepi32_ps(s[H * r + hh]), _mm256_mul_ps(dw, _mm256_set1_ps(dx[r][b])));
      if constexpr (F::MIN) {
        const __m256 dm = F::min(g, b, h0 + hh);
#pragma GCC unroll 8
        for (int r = 0; r < R; ++r) fma_slot(H * r + hh, dm, _mm256_set1_ps(sx[r][b]));
      }
    }
  }
  if constexpr (!kAccInOut)
#pragma GCC unroll 8
    for (int q = 0; q < Q; ++q) _mm256_storeu_ps(out[q], acc[q]);
}

template <class F>
struct Rows {
  static constexpr bool kFourRowsBothHalves = true;
  static constexpr bool kDecodes = F::ND == 4;
  template <int R, int H>
  static void rows(const uint8_t* g, int64_t nb, int h0, const uint8_t* a, int64_t as, float (*out)[8],
                   const uint8_t* pf, const uint8_t* dec) {
    if (dec)
      half_rows<F, R, H, true>(g, nb, h0, a, as, out, pf, dec);
    else
      half_rows<F, R, H, false>(g, nb, h0, a, as, out, pf, nullptr);
  }
  // The group's codes as half_rows<DEC> reads them: per block and half 256 bytes, the 4 lo then the
  // 4 hi registers of unpack.
  static void decode(const uint8_t* g, int64_t nb, uint8_t* dec) {
    const __m256i m0f = _mm256_set1_epi8(0x0F);
    for (int64_t b = 0; b < nb; ++b) {
      const uint8_t* p = F::block(g, b);
      for (int h = 0; h < 2; ++h)
#pragma GCC unroll 4
        for (int d = 0; d < 4; ++d) {
          __m256i lo, hi;
          unpack<F>(p, h, d, m0f, lo, hi);
          uint8_t* c = dec + (b * 2 + h) * 256 + 32 * d;
          _mm256_store_si256(reinterpret_cast<__m256i*>(c), lo);
          _mm256_store_si256(reinterpret_cast<__m256i*>(c + 128), hi);
        }
    }
  }
};

template <class F, int OFF>
MatmulKernel make() {
  MatmulKernel k;
  k.act_row_bytes = act_row_bytes;
  k.prepare = prepare<OFF>;
  k.tile = packed_tile<Rows<F>>;
  return k;
}

}  // namespace

MatmulKernel avx2_packed_kernel(DType t) {
  switch (t) {
    case DType::Q8_0:
      return make<Fmt<8, false, false, kNoLut>, 0>();
    case DType::Q4_0:
      return make<Fmt<4, false, false, kNoLut>, 8>();
    case DType::Q4_1:
      return make<Fmt<4, false, true, kNoLut>, 0>();
    case DType::Q5_0:
      return make<Fmt<4, true, false, kNoLut>, 16>();
    case DType::Q5_1:
      return make<Fmt<4, true, true, kNoLut>, 0>();
    case DType::IQ4_NL:
      return make<Fmt<4, false, false, kIQ4NL>, 0>();
    case DType::MXFP4:
      return make<MxFp4, 0>();
    case DType::Q4_K:
      return make<KQuant<false, false>, 0>();
    case DType::Q5_K:
      return make<KQuant<true, false>, 0>();
    case DType::IQ4_XS:
      return make<KQuant<false, true>, 0>();
    case DType::Q6_K:
      return avx2_packed_q6k_kernel();
    default:
      return {};
  }
}

}  // namespace oxyd::backend::cpu
