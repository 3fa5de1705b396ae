// The VNNI 16-row panel kernel (panel_avx512.h) for the K-quants Q4_K, Q5_K and Q6_K: their
// panel decoders, one PBlock per 32-element sub-block. The activations are quantized per 256-element
// super-block exactly as on the row-dot path (kquant_avx512.cc's prep_a256).
#include "backend/cpu/matmul/panel_avx512.h"
#include "backend/cpu/matmul/kernels_avx512.h"

namespace oxyd::backend::cpu {
namespace {

inline __m512i byte_of(__m512i v, int i) {
  return _mm512_and_si512(_mm512_srli_epi32(v, 8 * i), _mm512_set1_epi32(0xFF));
}

// 32 bytes at p + off of the panel's rows: T[q] lane L = dword q of row π(L), q = 0..7.
inline void load_transposed32(const uint8_t* p, const PanelRows& pr, int64_t off, __m512i* T) {
  load_transposed(p, pr, off, T);
  load_transposed(p, pr, off + 16, T + 4);
}

// Q4_K (144 bytes: d, dmin, 12 bytes of 6-bit scales/mins, qs[128]) and Q5_K (176: the same plus
// qh[32] before qs): sub-block 2c is the low nibbles of qs[32c..32c+31], 2c+1 their high nibbles;
// value d·sc·(q + 16·h) − dmin·m.
template <bool kQ5>
struct Q45K {
  static constexpr int kBytes = kQ5 ? 176 : 144, kQs = kQ5 ? 48 : 16;
  static void decode(const uint8_t* w, int64_t ws, int rows, int64_t nb, PBlock* out) {
    const PanelRows pr(ws, rows);
    const __m512i m0f = _mm512_set1_epi8(0x0F), m3f = _mm512_set1_epi32(63), mf = _mm512_set1_epi32(0xF);
    for (int64_t sb = 0; sb < nb / 8; ++sb) {
      const uint8_t* p = w + sb * kBytes;
      PBlock* o = out + 8 * sb;
      const __m512i head = _mm512_i32gather_epi32(pr.gidx, p, 1);
      const __m512 d = _mm512_cvtph_ps(_mm512_cvtepi32_epi16(head));
      const __m512 dmin = _mm512_cvtph_ps(_mm512_cvtepi32_epi16(_mm512_srli_epi32(head, 16)));
      const __m512 ndmin = _mm512_sub_ps(_mm512_setzero_ps(), dmin);
      const __m512i S0 = _mm512_i32gather_epi32(pr.gidx, p + 4, 1), S1 = _mm512_i32gather_epi32(pr.gidx, p + 8, 1);
      const __m512i S2 = _mm512_i32gather_epi32(pr.gidx, p + 12, 1);
      for (int j = 0; j < 8; ++j) {
        __m512i sc, m;
        if (j < 4) {
          sc = _mm512_and_si512(byte_of(S0, j), m3f);
          m = _mm512_and_si512(byte_of(S1, j), m3f);
        } else {
          const __m512i q8 = byte_of(S2, j - 4);
          sc = _mm512_or_si512(_mm512_and_si512(q8, mf), _mm512_slli_epi32(_mm512_srli_epi32(byte_of(S0, j - 4), 6), 4));
          m = _mm512_or_si512(_mm512_srli_epi32(q8, 4), _mm512_slli_epi32(_mm512_srli_epi32(byte_of(S1, j - 4), 6), 4));
        }
        o[j].dw = _mm512_mul_ps(d, _mm512_cvtepi32_ps(sc));
        o[j].dm = _mm512_mul_ps(ndmin, _mm512_cvtepi32_ps(m));
      }
      __m512i H[8];
      if constexpr (kQ5) load_transposed32(p, pr, 16, H);
      for (int c = 0; c < 4; ++c) {
        __m512i T[8];
        load_transposed32(p, pr, kQs + 32 * c, T);
        for (int q = 0; q < 8; ++q) {
          __m512i lo = _mm512_and_si512(T[q], m0f), hi = _mm512_and_si512(_mm512_srli_epi16(T[q], 4), m0f);
          if constexpr (kQ5) {
            const __m512i b10 = _mm512_set1_epi8(0x10);
            lo = _mm512_mask_add_epi8(lo, _mm512_test_epi8_mask(H[q], _mm512_set1_epi8(char(1 << (2 * c)))), lo, b10);
            hi = _mm512_mask_add_epi8(hi, _mm512_test_epi8_mask(H[q], _mm512_set1_epi8(char(2 << (2 * c)))), hi, b10);
          }
          o[2 * c].w[q] = lo;
          o[2 * c + 1].w[q] = hi;
        }
      }
    }
  }
};

// Q6_K (210 bytes: ql[128], qh[64], int8 scales[16], d): per half h of 128 elements, sub-block s
// is ql[64h + 32·(s%2) + l] (low nibble for s < 2, high for s ≥ 2) with qh[32h + l] bits 2s, 2s+1 on
// top, minus 32; elements l < 16 have scale sc[8h + 2s], l ≥ 16 sc[8h + 2s + 1].
struct Q6K {
  static void decode(const uint8_t* w, int64_t ws, int rows, int64_t nb, PBlock* out) {
    const PanelRows pr(ws, rows);
    const __m512i m0f = _mm512_set1_epi8(0x0F), m30 = _mm512_set1_epi8(0x30);
    for (int64_t sb = 0; sb < nb / 8; ++sb) {
      const uint8_t* p = w + sb * 210;
      const __m512i dword = _mm512_i32gather_epi32(pr.gidx, p + 206, 1);  // scales[14..15], d
      const __m512 d = _mm512_cvtph_ps(_mm512_cvtepi32_epi16(_mm512_srli_epi32(dword, 16)));
      __m512 sc[16];
      for (int g = 0; g < 4; ++g) {
        const __m512i v = _mm512_i32gather_epi32(pr.gidx, p + 192 + 4 * g, 1);
        for (int i = 0; i < 4; ++i)
          sc[4 * g + i] = _mm512_mul_ps(d, _mm512_cvtepi32_ps(_mm512_srai_epi32(_mm512_slli_epi32(v, 24 - 8 * i), 24)));
      }
      for (int h = 0; h < 2; ++h) {
        __m512i L0[8], L1[8], H[8];
        load_transposed32(p, pr, 64 * h, L0);
        load_transposed32(p, pr, 64 * h + 32, L1);
        load_transposed32(p, pr, 128 + 32 * h, H);
        PBlock* o = out + 8 * sb + 4 * h;
        for (int q = 0; q < 8; ++q) {
          const __m512i hq = H[q];
          o[0].w[q] = _mm512_or_si512(_mm512_and_si512(L0[q], m0f), _mm512_and_si512(_mm512_slli_epi16(hq, 4), m30));
          o[1].w[q] = _mm512_or_si512(_mm512_and_si512(L1[q], m0f), _mm512_and_si512(_mm512_slli_epi16(hq, 2), m30));
          o[2].w[q] = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi16(L0[q], 4), m0f), _mm512_and_si512(hq, m30));
          o[3].w[q] = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi16(L1[q], 4), m0f),
                                      _mm512_and_si512(_mm512_srli_epi16(hq, 2), m30));
        }
        for (int s = 0; s < 4; ++s) {
          o[s].dw = sc[8 * h + 2 * s];
          o[s].dm = sc[8 * h + 2 * s + 1];
        }
      }
    }
  }
};

}  // namespace

MatmulKernel avx512_qk_panel_kernel(DType t) {
  switch (t) {
    case DType::Q4_K: return make_panel_kernel<Q45K<false>, 0, Epi::MIN, true>();
    case DType::Q5_K: return make_panel_kernel<Q45K<true>, 0, Epi::MIN, true>();
    case DType::Q6_K: return make_panel_kernel<Q6K, 32, Epi::SPLIT, true>();
    default: return {};
  }
}

}  // namespace oxyd::backend::cpu
