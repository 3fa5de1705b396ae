// AVX2 matmul on Q6_K weights packed at load (pack.h, PackLayout::AVX2), at every number of
// activation rows. The lanes are weight rows as in packed_avx2.cc; a super-block's sums stay
// integer to its end: every 4-element step is vpmaddubsw (6-bit codes against int8 activation
// codes) then vpmaddwd with the rows' int8 sub-block scales, so one f32 scale (d·dx) per
// super-block remains. The codes' offset of 32 comes off as 32·Σ sc·Σx per 16 elements, from the
// activation sums. Activations are quantized per 256 elements, as for the K-quant row-dot kernels.
#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "backend/cpu/matmul/kernel.h"
#include "backend/cpu/matmul/packed_avx2.h"
#include "backend/cpu/matmul/act_quant_avx2.h"

namespace oxyd::backend::cpu {

MatmulKernel avx2_packed_q6k_kernel();

namespace {

// A 16-row super-block (pack.h): 8 sub-blocks of 384 bytes (4 code registers of low
// nibbles, 2 of high bits), then the int8 scale pairs (32 per sub-block) and 16 f16 d.
constexpr int64_t kSB = 8 * 384 + 8 * 32 + 32, kScales = 8 * 384, kD = kScales + 256;

// One activation row: codes[k] (int8), then per super-block dx (f32), then per super-block 8
// int32 words, each two int16: the sums of the codes of elements 32j..32j+15 and 32j+16..32j+31.
int64_t act_row_bytes(int64_t k) { return (k + k / 256 * 36 + 63) / 64 * 64; }

void prepare(const float* x, int64_t k, uint8_t* out) {
  const int64_t nsb = k / 256;
  float* dx = reinterpret_cast<float*>(out + k);
  int16_t* sums = reinterpret_cast<int16_t*>(out + k + 4 * nsb);
  for (int64_t sb = 0; sb < nsb; ++sb) {
    const float amax = amax8(x + 256 * sb, 256);
    dx[sb] = amax / 127.0f;
    int8_t* q = reinterpret_cast<int8_t*>(out + 256 * sb);
    quant8(x + 256 * sb, 256, amax > 0.0f ? 127.0f / amax : 0.0f, q);
    for (int s = 0; s < 16; ++s) {
      int sum = 0;
      for (int j = 0; j < 16; ++j) sum += q[16 * s + j];
      sums[16 * sb + s] = int16_t(sum);
    }
  }
}

// R activation rows against H halves (h0, h0 + 1) of a group: slot q = H·r + hh (packed_tile's
// interface, packed_avx2.h). Both halves in one pass only for one row (more spill registers
// and gained nothing at 2 rows).
struct Q6K {
  static constexpr bool kFourRowsBothHalves = false;
  static constexpr bool kDecodes = true;

  // Register d (of 4) of sub-block j's half h as 6-bit codes: lo its low nibbles' elements
  // (4d + i), hi its high nibbles' (16 + 4d + i); c: the sub-block's 384 bytes.
  static void codes(const uint8_t* c, int d, int h, __m256i& lo, __m256i& hi) {
    const __m256i m0f = _mm256_set1_epi8(0x0F), m30 = _mm256_set1_epi8(0x30);
    const __m256i T = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(c + 64 * d + 32 * h));
    const __m256i P = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(c + 256 + 64 * (d / 2) + 32 * h));
    // High bits of register d: bits 4(d%2)..+1 (its low nibbles' elements), +2..+3 (high).
    const __m256i plo = d % 2 == 0 ? _mm256_slli_epi16(P, 4) : P;
    const __m256i phi = d % 2 == 0 ? _mm256_slli_epi16(P, 2) : _mm256_srli_epi16(P, 2);
    lo = _mm256_or_si256(_mm256_and_si256(T, m0f), _mm256_and_si256(plo, m30));
    hi = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(T, 4), m0f), _mm256_and_si256(phi, m30));
  }
  // Byte offset in a decoded group (packed_tile's dec) of register d of sub-block j of
  // super-block sb, half h: lo there, hi 32 bytes on (nb · 512 bytes in all).
  static int64_t dec_at(int64_t sb, int j, int d, int h) { return (((sb * 8 + j) * 4 + d) * 2 + h) * 64; }
  static void decode(const uint8_t* g, int64_t nb, uint8_t* dec) {
    for (int64_t sb = 0; sb < nb / 8; ++sb)
      for (int j = 0; j < 8; ++j) {
        const uint8_t* c = g + sb * kSB + 384 * j;
#pragma GCC unroll 4
        for (int d = 0; d < 4; ++d)
          for (int h = 0; h < 2; ++h) {
            __m256i lo, hi;
            codes(c, d, h, lo, hi);
            uint8_t* o = dec + dec_at(sb, j, d, h);
            _mm256_store_si256(reinterpret_cast<__m256i*>(o), lo);
            _mm256_store_si256(reinterpret_cast<__m256i*>(o + 32), hi);
          }
      }
  }

  template <int R, int H>
  static void rows(const uint8_t* g, int64_t nb, int h0, const uint8_t* a, int64_t as, float (*out)[8],
                   const uint8_t* pf, const uint8_t* dec) {
    if (dec)
      rows_impl<R, H, true>(g, nb, h0, a, as, out, pf, dec);
    else
      rows_impl<R, H, false>(g, nb, h0, a, as, out, pf, nullptr);
  }

  template <int R, int H, bool DEC>
  static void rows_impl(const uint8_t* g, int64_t nb, int h0, const uint8_t* a, int64_t as, float (*out)[8],
                        const uint8_t* pf, const uint8_t* dec) {
    if constexpr (R > 1 && H > 1) {
      for (int hh = 0; hh < H; ++hh) {
        float half_out[R][8];
        rows_impl<R, 1, DEC>(g, nb, h0 + hh, a, as, half_out, hh == 0 ? pf : nullptr, dec);
        for (int r = 0; r < R; ++r) std::memcpy(out[H * r + hh], half_out[r], sizeof half_out[r]);
      }
      return;
    }
    constexpr int Q = R * H;
    const int64_t nsb = nb / 8;
    // vpshufb patterns: each int32 lane (sc_lo, sc_hi) as int16 → (sc_lo, sc_lo) / (sc_hi, sc_hi).
    const __m256i dup_lo = _mm256_setr_epi8(0, 1, 0, 1, 4, 5, 4, 5, 8, 9, 8, 9, 12, 13, 12, 13, 0, 1, 0, 1, 4, 5, 4, 5,
                                            8, 9, 8, 9, 12, 13, 12, 13);
    const __m256i dup_hi = _mm256_setr_epi8(2, 3, 2, 3, 6, 7, 6, 7, 10, 11, 10, 11, 14, 15, 14, 15, 2, 3, 2, 3, 6, 7, 6,
                                            7, 10, 11, 10, 11, 14, 15, 14, 15);
    __m256 acc[Q];
#pragma GCC unroll 8
    for (auto& v : acc) v = _mm256_setzero_ps();
    for (int64_t sb = 0; sb < nsb; ++sb) {
      const uint8_t* s = g + sb * kSB;
      __m256i si[Q];
#pragma GCC unroll 8
      for (auto& v : si) v = _mm256_setzero_si256();
      for (int j = 0; j < 8; ++j) {
        const uint8_t* c = s + 384 * j;
        // The next group's super-block, 7 lines per sub-block: all 53 at once overran the misses the
        // core can track, and batch-1 decode fell below the file rows' speed.
        if (pf)
          for (int64_t o = 448 * j; o < std::min<int64_t>(kSB, 448 * (j + 1)); o += 64)
            __builtin_prefetch(pf + sb * kSB + o, 0, 3);
        __m256i sc_lo[H], sc_hi[H];
#pragma GCC unroll 2
        for (int hh = 0; hh < H; ++hh) {
          const __m256i sc = _mm256_cvtepi8_epi16(
              _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + kScales + 32 * j + 16 * (h0 + hh))));
          sc_lo[hh] = _mm256_shuffle_epi8(sc, dup_lo);
          sc_hi[hh] = _mm256_shuffle_epi8(sc, dup_hi);
        }
#pragma GCC unroll 4
        for (int d = 0; d < 4; ++d) {
#pragma GCC unroll 2
          for (int hh = 0; hh < H; ++hh) {
            const int h = h0 + hh;
            __m256i lo, hi;
            if constexpr (DEC) {
              const uint8_t* o = dec + dec_at(sb, j, d, h);
              lo = _mm256_load_si256(reinterpret_cast<const __m256i*>(o));
              hi = _mm256_load_si256(reinterpret_cast<const __m256i*>(o + 32));
            } else {
              codes(c, d, h, lo, hi);
            }
#pragma GCC unroll 8
            for (int r = 0; r < R; ++r) {
              const uint8_t* x = a + r * as + 256 * sb + 32 * j;
              const int q = H * r + hh;
              si[q] = keep(
                  _mm256_add_epi32(si[q], _mm256_madd_epi16(_mm256_maddubs_epi16(lo, bcast(x + 4 * d)), sc_lo[hh])));
              si[q] = keep(_mm256_add_epi32(
                  si[q], _mm256_madd_epi16(_mm256_maddubs_epi16(hi, bcast(x + 16 + 4 * d)), sc_hi[hh])));
            }
          }
        }
#pragma GCC unroll 2
        for (int hh = 0; hh < H; ++hh) {  // − 32 · (sc_lo · Σx_lo + sc_hi · Σx_hi)
          const __m256i sc = _mm256_cvtepi8_epi16(
              _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + kScales + 32 * j + 16 * (h0 + hh))));
#pragma GCC unroll 8
          for (int r = 0; r < R; ++r) {
            const uint8_t* sums = a + r * as + nb * 32 + 4 * nsb + 32 * sb + 4 * j;
            si[H * r + hh] = _mm256_sub_epi32(si[H * r + hh], _mm256_slli_epi32(_mm256_madd_epi16(sc, bcast(sums)), 5));
          }
        }
      }
#pragma GCC unroll 2
      for (int hh = 0; hh < H; ++hh) {
        const __m256 d = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(s + kD + 16 * (h0 + hh))));
#pragma GCC unroll 8
        for (int r = 0; r < R; ++r) {
          const float dx = reinterpret_cast<const float*>(a + r * as + nb * 32)[sb];
          acc[H * r + hh] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(si[H * r + hh]), _mm256_mul_ps(d, _mm256_set1_ps(dx)),
                                            acc[H * r + hh]);
        }
      }
    }
#pragma GCC unroll 8
    for (int q = 0; q < Q; ++q) _mm256_storeu_ps(out[q], acc[q]);
  }
};

}  // namespace

MatmulKernel avx2_packed_q6k_kernel() {
  MatmulKernel k;
  k.act_row_bytes = act_row_bytes;
  k.prepare = prepare;
  k.tile = packed_tile<Q6K>;
  return k;
}

}  // namespace oxyd::backend::cpu
