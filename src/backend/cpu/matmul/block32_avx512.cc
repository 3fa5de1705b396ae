// AVX-512 VNNI kernels for the 32-element block formats Q4_0, Q4_1, Q5_0, Q5_1, IQ4_NL, MXFP4,
// Q8_0, and IQ4_XS (whose sub-blocks have the same layout).
// Activations are quantized once per matmul to 8 bits per 32-block and laid out so that one
// vpermt2b gathers the weight bytes of 4 blocks into a register whose int32 lanes line up with
// the activation bytes; vpdpbusd then multiplies unsigned weight codes by signed activations.
// A format's zero offset (Q4_0's 8, a table's shift to unsigned) is removed via per-lane sums of
// the activations, precomputed in the same layout. Decode is ~12 vector ops per 72 bytes.
// vpermt2b/vpermb need AVX512_VBMI, which the build's AVX-512 flags leave out; isa_supported(AVX512)
// requires it at run time.
// Extra ISA flags (-mavx512vbmi): set for this file in src/CMakeLists.txt (clang ignores #pragma GCC target).
#include <immintrin.h>

#include <array>
#include <cmath>
#include <cstring>

#include "backend/cpu/matmul/act_quant32_avx512.h"
#include "backend/cpu/matmul/tile.h"
#include "core/half.h"
#include "backend/cpu/matmul/kernels_avx512.h"

namespace oxyd::backend::cpu {
namespace {

// One group of 4 quantized activation blocks (128 elements).
// kNib layout (4-bit formats): qs[0..63] = elements 0..15 of blocks 0..3, qs[64..127] = 16..31;
//   int32 lane l of a dot belongs to block l/4.
// natural layout (Q8_0): qs in element order; dot vector v (0, 1) covers blocks 2v, 2v+1 and its
//   lane l belongs to block 2v + l/8.
struct alignas(64) A32Group {
  int8_t qs[128];
  float dl[32];     // activation scale per lane (kNib: lanes 0..15; natural: 2 vectors)
  int32_t nsl[32];  // −Σ of the activation codes each lane multiplies
  float sxl[16];    // kNib: scale·Σ codes per lane (Q4_1's min term)
};
static_assert(sizeof(A32Group) == 448);

int64_t a32_row_bytes(int64_t k) { return (k / 32 + 3) / 4 * int64_t(sizeof(A32Group)); }

// Σ of each int32 lane's 4 signed bytes.
inline __m512i lane_sums(__m512i v) { return _mm512_dpbusd_epi32(_mm512_setzero_si512(), _mm512_set1_epi8(1), v); }

template <bool kNib>
void prep_a32(const float* x, int64_t k, uint8_t* out) {
  const int64_t nb = k / 32, ng = (nb + 3) / 4;
  A32Group* groups = reinterpret_cast<A32Group*>(out);
  for (int64_t gi = 0; gi < ng; ++gi) {
    A32Group& g = groups[gi];
    alignas(64) int8_t q[4][32] = {};
    float d[4] = {0, 0, 0, 0};
    for (int b = 0; b < 4 && gi * 4 + b < nb; ++b) d[b] = quant32(x + (gi * 4 + b) * 32, q[b]);
    if (kNib) {
      for (int b = 0; b < 4; ++b) {
        std::memcpy(g.qs + 16 * b, q[b], 16);
        std::memcpy(g.qs + 64 + 16 * b, q[b] + 16, 16);
      }
      const __m512i s = _mm512_add_epi32(lane_sums(_mm512_load_si512(g.qs)), lane_sums(_mm512_load_si512(g.qs + 64)));
      const __m512 dl = _mm512_setr_ps(d[0], d[0], d[0], d[0], d[1], d[1], d[1], d[1], d[2], d[2], d[2], d[2],
                                       d[3], d[3], d[3], d[3]);
      _mm512_store_ps(g.dl, dl);
      _mm512_store_si512(g.nsl, _mm512_sub_epi32(_mm512_setzero_si512(), s));
      _mm512_store_ps(g.sxl, _mm512_mul_ps(dl, _mm512_cvtepi32_ps(s)));
    } else {
      std::memcpy(g.qs, q, 128);
      for (int v = 0; v < 2; ++v) {
        const __m512i s = lane_sums(_mm512_load_si512(g.qs + 64 * v));
        const float d0 = d[2 * v], d1 = d[2 * v + 1];
        _mm512_store_ps(g.dl + 16 * v, _mm512_setr_ps(d0, d0, d0, d0, d0, d0, d0, d0, d1, d1, d1, d1, d1, d1, d1, d1));
        _mm512_store_si512(g.nsl + 16 * v, _mm512_sub_epi32(_mm512_setzero_si512(), s));
      }
    }
  }
}

inline __mmask64 bytes_mask(int64_t n) {
  return n >= 64 ? ~__mmask64(0) : n <= 0 ? __mmask64(0) : (__mmask64(1) << n) - 1;
}

enum class Scale { F16, F16_MIN, E8M0 };
enum class Lut { NONE, IQ4NL, MXFP4 };

// Permutation indices of a nibble format (built at compile time): qidx gathers the 16 qs bytes
// of 4 blocks, didx/midx the f16 d/m words (4 lanes per block), eidx the E8M0 byte per block.
struct NibTables {
  alignas(64) std::array<uint8_t, 64> qidx{}, eidx{}, hlo{}, hhi{}, bit{};
  alignas(64) std::array<uint16_t, 32> didx{}, midx{};
  alignas(16) std::array<int8_t, 16> lut{};
};
template <int BB, int QOFF, int QH, Lut LUT>
constexpr NibTables make_nib_tables() {
  NibTables t;
  for (int i = 0; i < 64; ++i) {
    t.qidx[i] = uint8_t(BB * (i / 16) + QOFF + i % 16);
    t.eidx[i] = uint8_t(BB * (i / 16));
    // Q5: the qh byte holding bit j (low half) / bit j+16 (high half) of element j = i % 16.
    t.hlo[i] = uint8_t(BB * (i / 16) + (QH < 0 ? 0 : QH) + (i % 16) / 8);
    t.hhi[i] = uint8_t(BB * (i / 16) + (QH < 0 ? 0 : QH) + 2 + (i % 16) / 8);
    t.bit[i] = uint8_t(1u << (i % 8));
  }
  for (int i = 0; i < 32; ++i) {
    t.didx[i] = uint16_t(BB * (i / 4 % 4) / 2);
    t.midx[i] = uint16_t((BB * (i / 4 % 4) + 2) / 2);
  }
  constexpr int8_t iq4nl[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};
  constexpr int8_t mxfp4[16] = {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12};
  for (int i = 0; i < 16; ++i)
    t.lut[i] = LUT == Lut::IQ4NL ? int8_t(iq4nl[i] + 128) : LUT == Lut::MXFP4 ? int8_t(mxfp4[i] + 16) : 0;
  return t;
}
template <int BB, int QOFF, int QH, Lut LUT>
alignas(64) constexpr NibTables kNibTables = make_nib_tables<BB, QOFF, QH, LUT>();

// 4/5-bit formats with the j / j+16 nibble layout. BB: block bytes, QOFF: offset of qs in a block,
// QH: offset of Q5's 32 high bits (-1: none), SHIFT: the weight codes are the signed value
// + 2^SHIFT (0: no offset).
template <int BB, int QOFF, int QH, int SHIFT, Scale SC, Lut LUT>
struct NibKernel {
  template <int NR>
  static void dot(int64_t k, const uint8_t* w, const uint8_t* a, int64_t a_stride, float* out) {
    const int64_t nb = k / 32, ng = (nb + 3) / 4;
    constexpr const NibTables& kT = kNibTables<BB, QOFF, QH, LUT>;
    const __m512i vq = _mm512_load_si512(kT.qidx.data()), vd = _mm512_load_si512(kT.didx.data());
    const __m512i vm = _mm512_load_si512(kT.midx.data()), ve = _mm512_load_si512(kT.eidx.data());
    const __m512i m0f = _mm512_set1_epi8(0x0F);
    const __m512i lut = _mm512_broadcast_i32x4(_mm_load_si128(reinterpret_cast<const __m128i*>(kT.lut.data())));
    __m512 acc[NR];
    for (int r = 0; r < NR; ++r) acc[r] = _mm512_setzero_ps();
    for (int64_t gi = 0; gi < ng; ++gi) {
      const uint8_t* p = w + gi * 4 * BB;
      const int64_t left = (nb - gi * 4) * BB;
      prefetch_ahead<4 * BB>(p);
      __m512i A, B;
      if (left >= 128) {
        A = _mm512_loadu_si512(p);
        B = _mm512_loadu_si512(p + 64);
      } else {
        A = _mm512_maskz_loadu_epi8(bytes_mask(left), p);
        B = _mm512_maskz_loadu_epi8(bytes_mask(left - 64), p + 64);
      }
      const __m512i q = _mm512_permutex2var_epi8(A, vq, B);
      __m512i lo = _mm512_and_si512(q, m0f);
      __m512i hi = _mm512_and_si512(_mm512_srli_epi16(q, 4), m0f);
      if constexpr (QH >= 0) {
        const __m512i bit = _mm512_load_si512(kT.bit.data()), b10 = _mm512_set1_epi8(0x10);
        const __m512i hl = _mm512_permutex2var_epi8(A, _mm512_load_si512(kT.hlo.data()), B);
        const __m512i hh = _mm512_permutex2var_epi8(A, _mm512_load_si512(kT.hhi.data()), B);
        lo = _mm512_mask_add_epi8(lo, _mm512_test_epi8_mask(hl, bit), lo, b10);
        hi = _mm512_mask_add_epi8(hi, _mm512_test_epi8_mask(hh, bit), hi, b10);
      }
      if constexpr (LUT != Lut::NONE) {
        lo = _mm512_shuffle_epi8(lut, lo);
        hi = _mm512_shuffle_epi8(lut, hi);
      }
      __m512 dw, dm = _mm512_setzero_ps();
      if constexpr (SC == Scale::E8M0) {
        const __m512i e = _mm512_maskz_permutexvar_epi8(0x1111111111111111ull, ve, A);
        dw = _mm512_scalef_ps(_mm512_set1_ps(1.0f),
                              _mm512_sub_ps(_mm512_cvtepi32_ps(e), _mm512_set1_ps(128.0f)));
      } else {
        dw = _mm512_cvtph_ps(_mm512_castsi512_si256(_mm512_permutex2var_epi16(A, vd, B)));
        if constexpr (SC == Scale::F16_MIN)
          dm = _mm512_cvtph_ps(_mm512_castsi512_si256(_mm512_permutex2var_epi16(A, vm, B)));
      }
      for (int r = 0; r < NR; ++r) {
        const A32Group& g = reinterpret_cast<const A32Group*>(a + r * a_stride)[gi];
        __m512i s = SHIFT ? _mm512_slli_epi32(_mm512_load_si512(g.nsl), SHIFT) : _mm512_setzero_si512();
        s = _mm512_dpbusd_epi32(s, lo, _mm512_load_si512(g.qs));
        s = _mm512_dpbusd_epi32(s, hi, _mm512_load_si512(g.qs + 64));
        acc[r] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(s), _mm512_mul_ps(dw, _mm512_load_ps(g.dl)), acc[r]);
        if constexpr (SC == Scale::F16_MIN) acc[r] = _mm512_fmadd_ps(dm, _mm512_load_ps(g.sxl), acc[r]);
      }
    }
    for (int r = 0; r < NR; ++r) out[r] = _mm512_reduce_add_ps(acc[r]);
  }
};

// Q8_0 indices: i0/i1 gather the qs of blocks 0,1 (from A:B) and 2,3 (from B:C); id the d
// words, 8 lanes per block.
struct Q8Tables {
  alignas(64) std::array<uint8_t, 64> i0{}, i1{};
  alignas(64) std::array<uint16_t, 32> id{};
};
constexpr Q8Tables make_q8_tables() {
  Q8Tables t;
  for (int i = 0; i < 64; ++i) {
    t.i0[i] = uint8_t(i < 32 ? 2 + i : 36 + i - 32);
    t.i1[i] = uint8_t(i < 32 ? 6 + i : 40 + i - 32);
  }
  for (int i = 0; i < 32; ++i) t.id[i] = uint16_t(17 * (i / 8));
  return t;
}
alignas(64) constexpr Q8Tables kQ8Tables = make_q8_tables();

// Q8_0: 4 blocks = 136 bytes = 3 loads; two registers of 2 blocks each. Weights are made
// unsigned by flipping the sign bit (w + 128), removed again via −128·Σ activation codes.
struct Q8_0Kernel {
  template <int NR>
  static void dot(int64_t k, const uint8_t* w, const uint8_t* a, int64_t a_stride, float* out) {
    const int64_t nb = k / 32, ng = (nb + 3) / 4;
    constexpr const Q8Tables& kT = kQ8Tables;
    const __m512i v0 = _mm512_load_si512(kT.i0.data()), v1 = _mm512_load_si512(kT.i1.data());
    const __m512i vd = _mm512_load_si512(kT.id.data());
    const __m512i flip = _mm512_set1_epi8(char(0x80));
    __m512 acc[NR];
    for (int r = 0; r < NR; ++r) acc[r] = _mm512_setzero_ps();
    for (int64_t gi = 0; gi < ng; ++gi) {
      const uint8_t* p = w + gi * 136;
      const int64_t left = (nb - gi * 4) * 34;
      prefetch_ahead<136>(p);
      __m512i A, B, C;
      if (left >= 192) {
        A = _mm512_loadu_si512(p);
        B = _mm512_loadu_si512(p + 64);
        C = _mm512_loadu_si512(p + 128);
      } else {
        A = _mm512_maskz_loadu_epi8(bytes_mask(left), p);
        B = _mm512_maskz_loadu_epi8(bytes_mask(left - 64), p + 64);
        C = _mm512_maskz_loadu_epi8(bytes_mask(left - 128), p + 128);
      }
      const __m512i z0 = _mm512_xor_si512(_mm512_permutex2var_epi8(A, v0, B), flip);
      const __m512i z1 = _mm512_xor_si512(_mm512_permutex2var_epi8(B, v1, C), flip);
      const __m512i dd = _mm512_permutex2var_epi16(A, vd, B);
      const __m512 d0 = _mm512_cvtph_ps(_mm512_castsi512_si256(dd));
      const __m512 d1 = _mm512_cvtph_ps(_mm512_extracti64x4_epi64(dd, 1));
      for (int r = 0; r < NR; ++r) {
        const A32Group& g = reinterpret_cast<const A32Group*>(a + r * a_stride)[gi];
        __m512i s0 = _mm512_slli_epi32(_mm512_load_si512(g.nsl), 7);
        __m512i s1 = _mm512_slli_epi32(_mm512_load_si512(g.nsl + 16), 7);
        s0 = _mm512_dpbusd_epi32(s0, z0, _mm512_load_si512(g.qs));
        s1 = _mm512_dpbusd_epi32(s1, z1, _mm512_load_si512(g.qs + 64));
        acc[r] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(s0), _mm512_mul_ps(d0, _mm512_load_ps(g.dl)), acc[r]);
        acc[r] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(s1), _mm512_mul_ps(d1, _mm512_load_ps(g.dl + 16)), acc[r]);
      }
    }
    for (int r = 0; r < NR; ++r) out[r] = _mm512_reduce_add_ps(acc[r]);
  }
};

// IQ4_XS: 256-element super-blocks of 8 IQ4_NL-like sub-blocks sharing one f16 d, each with a
// 6-bit scale. qs of 4 sub-blocks are one contiguous 64-byte load in the same j / j+16 layout as
// 4 IQ4_NL blocks, so the activation layout is the same as for the 32-block nibble formats.
struct IQ4XSKernel {
  template <int NR>
  static void dot(int64_t k, const uint8_t* w, const uint8_t* a, int64_t a_stride, float* out) {
    constexpr const NibTables& kT = kNibTables<18, 2, -1, Lut::IQ4NL>;
    const __m512i m0f = _mm512_set1_epi8(0x0F);
    const __m512i lut = _mm512_broadcast_i32x4(_mm_load_si128(reinterpret_cast<const __m128i*>(kT.lut.data())));
    const __m256i lshift = _mm256_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28);
    const __m256i hshift = _mm256_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14);
    const __m512i g0 = _mm512_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3);
    const __m512i g1 = _mm512_add_epi32(g0, _mm512_set1_epi32(4));
    __m512 acc[NR];
    for (int r = 0; r < NR; ++r) acc[r] = _mm512_setzero_ps();
    for (int64_t sb = 0; sb < k / 256; ++sb) {
      const uint8_t* p = w + sb * 136;  // d, scales_h, scales_l[4], qs[128]
      prefetch_ahead<136>(p);
      uint16_t dh, sh;
      uint32_t sl;
      std::memcpy(&dh, p, 2);
      std::memcpy(&sh, p + 2, 2);
      std::memcpy(&sl, p + 4, 4);
      // ls[ib] = (low nibble ib of scales_l) | (2 bits ib of scales_h) << 4; scale d·(ls − 32).
      const __m256i ls = _mm256_or_si256(
          _mm256_and_si256(_mm256_srlv_epi32(_mm256_set1_epi32(int(sl)), lshift), _mm256_set1_epi32(0xF)),
          _mm256_slli_epi32(_mm256_and_si256(_mm256_srlv_epi32(_mm256_set1_epi32(sh), hshift), _mm256_set1_epi32(3)), 4));
      const __m256 ds = _mm256_mul_ps(_mm256_set1_ps(_cvtsh_ss(dh)),
                                      _mm256_cvtepi32_ps(_mm256_sub_epi32(ls, _mm256_set1_epi32(32))));
      const __m512 dsz = _mm512_castps256_ps512(ds);
      for (int g = 0; g < 2; ++g) {
        const __m512i v = _mm512_loadu_si512(p + 8 + 64 * g);
        const __m512i lo = _mm512_shuffle_epi8(lut, _mm512_and_si512(v, m0f));
        const __m512i hi = _mm512_shuffle_epi8(lut, _mm512_and_si512(_mm512_srli_epi16(v, 4), m0f));
        const __m512 dw = _mm512_permutexvar_ps(g ? g1 : g0, dsz);
        for (int r = 0; r < NR; ++r) {
          const A32Group& x = reinterpret_cast<const A32Group*>(a + r * a_stride)[2 * sb + g];
          __m512i s = _mm512_slli_epi32(_mm512_load_si512(x.nsl), 7);
          s = _mm512_dpbusd_epi32(s, lo, _mm512_load_si512(x.qs));
          s = _mm512_dpbusd_epi32(s, hi, _mm512_load_si512(x.qs + 64));
          acc[r] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(s), _mm512_mul_ps(dw, _mm512_load_ps(x.dl)), acc[r]);
        }
      }
    }
    for (int r = 0; r < NR; ++r) out[r] = _mm512_reduce_add_ps(acc[r]);
  }
};

template <class K, bool kNib>
MatmulKernel make() {
  MatmulKernel m;
  m.act_row_bytes = a32_row_bytes;
  m.prepare = prep_a32<kNib>;
  m.tile = tile_rows<K>;
  return m;
}

}  // namespace

MatmulKernel avx512_q32_kernel(DType t) {
  switch (t) {
    case DType::Q4_0: return make<NibKernel<18, 2, -1, 3, Scale::F16, Lut::NONE>, true>();
    case DType::Q4_1: return make<NibKernel<20, 4, -1, 0, Scale::F16_MIN, Lut::NONE>, true>();
    case DType::Q5_0: return make<NibKernel<22, 6, 2, 4, Scale::F16, Lut::NONE>, true>();
    case DType::Q5_1: return make<NibKernel<24, 8, 4, 0, Scale::F16_MIN, Lut::NONE>, true>();
    case DType::IQ4_NL: return make<NibKernel<18, 2, -1, 7, Scale::F16, Lut::IQ4NL>, true>();
    case DType::MXFP4: return make<NibKernel<17, 1, -1, 4, Scale::E8M0, Lut::MXFP4>, true>();
    case DType::IQ4_XS: return make<IQ4XSKernel, true>();
    case DType::Q8_0: return make<Q8_0Kernel, false>();
    default: return {};
  }
}

}  // namespace oxyd::backend::cpu
