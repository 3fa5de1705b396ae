// The VNNI 16-row panel kernel (panel_avx512.h) for the 32-element block formats Q8_0,
// Q4_0, Q4_1, Q5_0, Q5_1, IQ4_NL and MXFP4: their panel decoders. The activations are quant32's,
// as on the row-dot path (block32_avx512.cc).
#include <array>
#include <cstring>

#include "backend/cpu/matmul/panel_avx512.h"
#include "backend/cpu/matmul/kernels_avx512.h"

namespace oxyd::backend::cpu {
namespace {

enum class Scale { F16, F16_MIN, E8M0 };
enum class Lut { NONE, IQ4NL, MXFP4 };

struct Tables {
  alignas(64) std::array<uint8_t, 64> rep[4]{}, bits[2]{};
  alignas(16) std::array<uint8_t, 16> lut{};
};
template <Lut LUT>
constexpr Tables make_tables() {
  Tables t;
  for (int i = 0; i < 64; ++i) {
    for (int p = 0; p < 4; ++p) t.rep[p][i] = uint8_t(i % 16 / 4 * 4 + p);       // vpshufb: byte p of each dword
    for (int p = 0; p < 2; ++p) t.bits[p][i] = uint8_t(1u << (4 * p + i % 4));  // byte t tests bit 4p + t
  }
  constexpr int8_t iq4nl[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};
  constexpr int8_t mxfp4[16] = {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12};
  for (int i = 0; i < 16; ++i)
    t.lut[i] = LUT == Lut::IQ4NL ? uint8_t(iq4nl[i] + 128) : LUT == Lut::MXFP4 ? uint8_t(mxfp4[i] + 16) : 0;
  return t;
}
template <Lut LUT>
alignas(64) constexpr Tables kTables = make_tables<LUT>();

// BB block bytes, QOFF offset of the 16 (Q8_0: 32) code bytes, QH offset of Q5's 32 high bits (-1:
// none), OFF the unsigned code of value 0, LUT a table mapping nibbles to unsigned codes.
template <int BB, int QOFF, int QH, int OFF_, Scale SC, Lut LUT>
struct Fmt {
  static constexpr int OFF = OFF_;
  static constexpr Epi EPI = SC == Scale::F16_MIN ? Epi::MIN : Epi::PLAIN;

  static void decode(const uint8_t* w, int64_t ws, int rows, int64_t nb, PBlock* out) {
    const PanelRows pr(ws, rows);
    constexpr const Tables& kT = kTables<LUT>;
    const __m512i m0f = _mm512_set1_epi8(0x0F);
    for (int64_t b = 0; b < nb; ++b) {
      const uint8_t* p = w + b * BB;
      PBlock& o = out[b];
      __m512i T[4];
      load_transposed(p, pr, QOFF, T);
      if constexpr (BB == 34) {  // Q8_0: signed codes + 128
        const __m512i flip = _mm512_set1_epi8(char(0x80));
        for (int d = 0; d < 4; ++d) o.w[d] = _mm512_xor_si512(T[d], flip);
        load_transposed(p, pr, QOFF + 16, T);
        for (int d = 0; d < 4; ++d) o.w[4 + d] = _mm512_xor_si512(T[d], flip);
      } else {
        __m512i W[8];
        for (int d = 0; d < 4; ++d) {
          W[d] = _mm512_and_si512(T[d], m0f);
          W[4 + d] = _mm512_and_si512(_mm512_srli_epi16(T[d], 4), m0f);
        }
        if constexpr (QH >= 0) {
          // Element e's fifth bit is bit e of the row's qh word.
          const __m512i H = _mm512_i32gather_epi32(pr.gidx, p + QH, 1);
          for (int q = 0; q < 8; ++q) {
            const __m512i rep = _mm512_shuffle_epi8(H, _mm512_load_si512(kT.rep[q / 2].data()));
            const __mmask64 hi = _mm512_test_epi8_mask(rep, _mm512_load_si512(kT.bits[q % 2].data()));
            W[q] = _mm512_mask_add_epi8(W[q], hi, W[q], _mm512_set1_epi8(0x10));
          }
        }
        if constexpr (LUT != Lut::NONE) {
          const __m512i lut = _mm512_broadcast_i32x4(_mm_load_si128(reinterpret_cast<const __m128i*>(kT.lut.data())));
          for (auto& v : W) v = _mm512_shuffle_epi8(lut, v);
        }
        for (int q = 0; q < 8; ++q) o.w[q] = W[q];
      }
      const __m512i head = _mm512_i32gather_epi32(pr.gidx, p, 1);
      if constexpr (SC == Scale::E8M0) {
        const __m512 e = _mm512_cvtepi32_ps(_mm512_and_si512(head, _mm512_set1_epi32(0xFF)));
        o.dw = _mm512_scalef_ps(_mm512_set1_ps(1.0f), _mm512_sub_ps(e, _mm512_set1_ps(128.0f)));
        o.dm = _mm512_setzero_ps();
      } else {
        o.dw = _mm512_cvtph_ps(_mm512_cvtepi32_epi16(head));
        o.dm = SC == Scale::F16_MIN ? _mm512_cvtph_ps(_mm512_cvtepi32_epi16(_mm512_srli_epi32(head, 16)))
                                    : _mm512_setzero_ps();
      }
    }
  }
};

// Weights packed at load (pack.h): a group's block is already 16 rows in lane order, so
// decoding is loads (Q8_0), or a nibble split, Q5's fifth bits from ready masks and IQ4_NL's table
// lookup. ND code dwords per row; QH: the 64 bytes of fifth-bit masks follow the codes; MIN: a
// second 16 f16 (the rows' mins) follows the scales; E8M0 (MXFP4): the scales are 16 e8m0 bytes,
// 2^(e − 128) as the file-row decoder's (the table holds twice the e2m1 values).
template <int ND, bool QH, bool MIN, Lut LUT = Lut::NONE, bool E8M0 = false>
struct Packed {
  static constexpr int64_t GB = 64 * ND + (QH ? 64 : 0) + (E8M0 ? 16 : MIN ? 64 : 32);

  static PBlock block(const uint8_t* w) {
    PBlock o;
    if constexpr (ND == 8) {
      for (int q = 0; q < 8; ++q) o.w[q] = _mm512_loadu_si512(w + 64 * q);
    } else {
      const __m512i m0f = _mm512_set1_epi8(0x0F);
      for (int d = 0; d < 4; ++d) {
        const __m512i T = _mm512_loadu_si512(w + 64 * d);
        o.w[d] = _mm512_and_si512(T, m0f);
        o.w[4 + d] = _mm512_and_si512(_mm512_srli_epi16(T, 4), m0f);
      }
      if constexpr (QH) {
        for (int q = 0; q < 8; ++q) {
          __mmask64 hi;
          std::memcpy(&hi, w + 256 + 8 * q, 8);
          o.w[q] = _mm512_mask_add_epi8(o.w[q], hi, o.w[q], _mm512_set1_epi8(0x10));
        }
      }
      if constexpr (LUT != Lut::NONE) {
        const __m512i lut =
            _mm512_broadcast_i32x4(_mm_load_si128(reinterpret_cast<const __m128i*>(kTables<LUT>.lut.data())));
        for (auto& v : o.w) v = _mm512_shuffle_epi8(lut, v);
      }
    }
    const uint8_t* sc = w + 64 * ND + (QH ? 64 : 0);
    if constexpr (E8M0) {
      const __m512 e = _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(sc))));
      o.dw = _mm512_scalef_ps(_mm512_set1_ps(1.0f), _mm512_sub_ps(e, _mm512_set1_ps(128.0f)));
      o.dm = _mm512_setzero_ps();
      return o;
    }
    o.dw = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(sc)));
    o.dm = MIN ? _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(sc + 32))) : _mm512_setzero_ps();
    return o;
  }
};

template <class F>
MatmulKernel make() {
  return make_panel_kernel<F, F::OFF, F::EPI, false>();
}

}  // namespace

MatmulKernel avx512_q32_panel_kernel(DType t) {
  switch (t) {
    case DType::Q8_0: return make<Fmt<34, 2, -1, 128, Scale::F16, Lut::NONE>>();
    case DType::Q4_0: return make<Fmt<18, 2, -1, 8, Scale::F16, Lut::NONE>>();
    case DType::Q4_1: return make<Fmt<20, 4, -1, 0, Scale::F16_MIN, Lut::NONE>>();
    case DType::Q5_0: return make<Fmt<22, 6, 2, 16, Scale::F16, Lut::NONE>>();
    case DType::Q5_1: return make<Fmt<24, 8, 4, 0, Scale::F16_MIN, Lut::NONE>>();
    case DType::IQ4_NL: return make<Fmt<18, 2, -1, 128, Scale::F16, Lut::IQ4NL>>();
    case DType::MXFP4: return make<Fmt<17, 1, -1, 16, Scale::E8M0, Lut::MXFP4>>();
    default: return {};
  }
}

MatmulKernel avx512_q32_packed_kernel(DType t) {
  switch (t) {
    case DType::Q8_0: return make_packed_kernel<Packed<8, false, false>, 128, Epi::PLAIN>();
    case DType::Q4_0: return make_packed_kernel<Packed<4, false, false>, 8, Epi::PLAIN>();
    case DType::Q4_1: return make_packed_kernel<Packed<4, false, true>, 0, Epi::MIN>();
    case DType::Q5_0: return make_packed_kernel<Packed<4, true, false>, 16, Epi::PLAIN>();
    case DType::Q5_1: return make_packed_kernel<Packed<4, true, true>, 0, Epi::MIN>();
    case DType::IQ4_NL: return make_packed_kernel<Packed<4, false, false, Lut::IQ4NL>, 128, Epi::PLAIN>();
    case DType::MXFP4: return make_packed_kernel<Packed<4, false, false, Lut::MXFP4, true>, 16, Epi::PLAIN>();
    default: return {};
  }
}

}  // namespace oxyd::backend::cpu
