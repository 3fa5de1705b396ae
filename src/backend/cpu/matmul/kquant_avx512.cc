// AVX-512 VNNI kernels for the K-quants Q2_K, Q3_K, Q4_K, Q5_K and Q6_K. Activations are quantized once per matmul
// to 8 bits per 256-element super-block (Q8_K-like) with per-16/32 sums, in the element order the
// weight registers come out in. Per super-block: unpack the codes with a few and/shift ops,
// vpmaddubsw (u8 codes × s8 activations → s16 pairs), vpdpwssd with the sub-block scales
// broadcast per word (→ int32), one int→float and one FMA with d·d_x. Mins / the −32 offset
// are applied through the activation sums.
#include <immintrin.h>

#include <array>
#include <cstring>

#include "backend/cpu/matmul/kernels_avx512.h"
#include "backend/cpu/matmul/tile.h"

namespace oxyd::backend::cpu {
namespace {

struct alignas(64) A256Block {
  int8_t qs[256];       // codes, in the kernel's sub-block order (Q4_K: 0 2 1 3 4 6 5 7 of 32)
  int16_t bsum32[8];    // Σ codes per 32-sub-block, natural order
  int16_t nbsum16[16];  // −Σ codes per 16-sub-block, natural order
  float d;
  uint8_t pad[12];
};
static_assert(sizeof(A256Block) == 320);

int64_t a256_row_bytes(int64_t k) { return k / 256 * int64_t(sizeof(A256Block)); }

template <bool kQ4KOrder>
void prep_a256(const float* x, int64_t k, uint8_t* out) {
  A256Block* blocks = reinterpret_cast<A256Block*>(out);
  for (int64_t sb = 0; sb < k / 256; ++sb) {
    const float* xs = x + sb * 256;
    A256Block& b = blocks[sb];
    __m512 mx = _mm512_setzero_ps();
    for (int i = 0; i < 256; i += 16) mx = _mm512_max_ps(mx, _mm512_abs_ps(_mm512_loadu_ps(xs + i)));
    const float amax = _mm512_reduce_max_ps(mx);
    const __m512 id = _mm512_set1_ps(amax > 0.0f ? 127.0f / amax : 0.0f);
    alignas(64) int8_t q[256];
    for (int i = 0; i < 256; i += 16)
      _mm_store_si128(reinterpret_cast<__m128i*>(q + i),
                      _mm512_cvtsepi32_epi8(_mm512_cvtps_epi32(_mm512_mul_ps(_mm512_loadu_ps(xs + i), id))));
    b.d = amax / 127.0f;
    for (int s = 0; s < 16; ++s) {
      int sum = 0;
      for (int i = 0; i < 16; ++i) sum += q[16 * s + i];
      b.nbsum16[s] = int16_t(-sum);
    }
    for (int s = 0; s < 8; ++s) b.bsum32[s] = int16_t(-(b.nbsum16[2 * s] + b.nbsum16[2 * s + 1]));
    static constexpr int kQ4KSub[8] = {0, 2, 1, 3, 4, 6, 5, 7};
    for (int s = 0; s < 8; ++s) std::memcpy(b.qs + 32 * s, q + 32 * (kQ4KOrder ? kQ4KSub[s] : s), 32);
    std::memset(b.pad, 0, sizeof(b.pad));
  }
}

// Word-index vectors for vpermw: Q4_K scale per word of each of the 4 code registers, Q6_K per
// half (h) for the low-/high-nibble registers, and Q6_K's per-half qh shift counts.
struct KTables {
  alignas(64) std::array<uint16_t, 32> q4k[4]{}, q6l[2]{}, q6h[2]{}, shl{}, shr{};
  alignas(64) std::array<uint16_t, 32> q5l[2]{}, q5r[2]{};  // Q5_K qh shifts (left / right)
  // Q2_K/Q3_K: code shifts of register t (2j per half), hmask bit → bit 2 shifts per register,
  // scale index per word (element / 16).
  alignas(64) std::array<uint16_t, 32> q2s[2]{}, q3h[4]{}, q23s[4]{};
};
constexpr KTables make_k_tables() {
  KTables t;
  constexpr int sub[4][2] = {{0, 2}, {1, 3}, {4, 6}, {5, 7}};
  for (int v = 0; v < 4; ++v)
    for (int w = 0; w < 32; ++w) t.q4k[v][w] = uint16_t(sub[v][w / 16]);
  for (int h = 0; h < 2; ++h)
    for (int w = 0; w < 32; ++w) {
      t.q6l[h][w] = uint16_t(8 * h + w / 8);
      t.q6h[h][w] = uint16_t(8 * h + 4 + w / 8);
    }
  for (int w = 0; w < 32; ++w) {
    t.shl[w] = w < 16 ? 4 : 2;
    t.shr[w] = w < 16 ? 0 : 2;
    // Q5_K: register 0 needs qh bits 0|2 at bit 4, register 1 bits 1|3, 2 bits 4|6, 3 bits 5|7.
    t.q5l[0][w] = w < 16 ? 4 : 2;
    t.q5l[1][w] = w < 16 ? 3 : 1;
    t.q5r[0][w] = w < 16 ? 0 : 2;
    t.q5r[1][w] = w < 16 ? 1 : 3;
    for (int v = 0; v < 2; ++v) t.q2s[v][w] = uint16_t(4 * v + (w < 16 ? 0 : 2));
    // hmask bit 4n + 2t (+1 in the second half) to bit 2: register 0 shifts left, others right.
    for (int v = 0; v < 4; ++v) {
      const int pos = 2 * v + (w < 16 ? 0 : 1);
      t.q3h[v][w] = uint16_t(v == 0 ? 2 - pos : pos - 2);
      t.q23s[v][w] = uint16_t(4 * v + w / 8);
    }
  }
  return t;
}
alignas(64) constexpr KTables kK = make_k_tables();

inline float f16(const uint8_t* p) {
  uint16_t h;
  std::memcpy(&h, p, 2);
  return _cvtsh_ss(h);
}

inline float hsum4(__m128 v) {
  v = _mm_add_ps(v, _mm_movehl_ps(v, v));
  v = _mm_add_ss(v, _mm_movehdup_ps(v));
  return _mm_cvtss_f32(v);
}

// Q4_K, and Q5_K (kQ5: a fifth bit per code from qh[32]; 176-byte blocks, qs after qh).
template <bool kQ5>
struct Q4KKernel {
  template <int NR>
  static void dot(int64_t k, const uint8_t* w, const uint8_t* a, int64_t a_stride, float* out) {
    constexpr uint32_t kM1 = 0x3f3f3f3f, kM2 = 0x0f0f0f0f, kM3 = 0x03030303;
    const __m512i m0f = _mm512_set1_epi8(0x0F);
    __m512i si[4];
    for (int v = 0; v < 4; ++v) si[v] = _mm512_load_si512(kK.q4k[v].data());
    __m512 facc[NR];
    __m128 macc[NR];
    for (int r = 0; r < NR; ++r) {
      facc[r] = _mm512_setzero_ps();
      macc[r] = _mm_setzero_ps();
    }
    for (int64_t sb = 0; sb < k / 256; ++sb) {
      const uint8_t* p = w + sb * (kQ5 ? 176 : 144);  // d, dmin, scales[12], (qh[32]), qs[128]
      prefetch_ahead<kQ5 ? 176 : 144>(p);
      const float d = f16(p), dmin = f16(p + 2);
      uint32_t u[3];
      std::memcpy(u, p + 4, 12);
      const uint64_t sc = uint64_t(u[0] & kM1) | uint64_t((u[2] & kM2) | (((u[0] >> 6) & kM3) << 4)) << 32;
      const uint64_t mn = uint64_t(u[1] & kM1) | uint64_t(((u[2] >> 4) & kM2) | (((u[1] >> 6) & kM3) << 4)) << 32;
      const __m512i scz = _mm512_castsi128_si512(_mm_cvtepu8_epi16(_mm_cvtsi64_si128(int64_t(sc))));
      const __m128i mn16 = _mm_cvtepu8_epi16(_mm_cvtsi64_si128(int64_t(mn)));
      const uint8_t* qs = p + (kQ5 ? 48 : 16);
      const __m512i v0 = _mm512_loadu_si512(qs), v1 = _mm512_loadu_si512(qs + 64);
      __m512i c[4] = {_mm512_and_si512(v0, m0f), _mm512_and_si512(_mm512_srli_epi16(v0, 4), m0f),
                      _mm512_and_si512(v1, m0f), _mm512_and_si512(_mm512_srli_epi16(v1, 4), m0f)};
      if constexpr (kQ5) {
        // Register v holds sub-blocks (v/2)*4 + v%2 and +2: their bits of qh[l] are 2·(v/2)·2 + v%2
        // and +2, moved to bit 4 by a per-half word shift (bits leaking across bytes are masked).
        const __m512i qh = _mm512_broadcast_i64x4(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 16)));
        const __m512i m10 = _mm512_set1_epi8(0x10);
        c[0] = _mm512_or_si512(c[0], _mm512_and_si512(_mm512_sllv_epi16(qh, _mm512_load_si512(kK.q5l[0].data())), m10));
        c[1] = _mm512_or_si512(c[1], _mm512_and_si512(_mm512_sllv_epi16(qh, _mm512_load_si512(kK.q5l[1].data())), m10));
        c[2] = _mm512_or_si512(c[2], _mm512_and_si512(_mm512_srlv_epi16(qh, _mm512_load_si512(kK.q5r[0].data())), m10));
        c[3] = _mm512_or_si512(c[3], _mm512_and_si512(_mm512_srlv_epi16(qh, _mm512_load_si512(kK.q5r[1].data())), m10));
      }
      __m512i s[4];
      for (int v = 0; v < 4; ++v) s[v] = _mm512_permutexvar_epi16(si[v], scz);
      for (int r = 0; r < NR; ++r) {
        const A256Block& x = reinterpret_cast<const A256Block*>(a + r * a_stride)[sb];
        __m512i acc = _mm512_setzero_si512();
        for (int v = 0; v < 4; ++v)
          acc = _mm512_dpwssd_epi32(acc, _mm512_maddubs_epi16(c[v], _mm512_load_si512(x.qs + 64 * v)), s[v]);
        facc[r] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(acc), _mm512_set1_ps(d * x.d), facc[r]);
        const __m128i mm = _mm_madd_epi16(mn16, _mm_load_si128(reinterpret_cast<const __m128i*>(x.bsum32)));
        macc[r] = _mm_fmadd_ps(_mm_cvtepi32_ps(mm), _mm_set1_ps(dmin * x.d), macc[r]);
      }
    }
    for (int r = 0; r < NR; ++r) out[r] = _mm512_reduce_add_ps(facc[r]) - hsum4(macc[r]);
  }
};

struct Q6KKernel {
  template <int NR>
  static void dot(int64_t k, const uint8_t* w, const uint8_t* a, int64_t a_stride, float* out) {
    const __m512i m0f = _mm512_set1_epi8(0x0F), m30 = _mm512_set1_epi8(0x30);
    const __m512i shl = _mm512_load_si512(kK.shl.data()), shr = _mm512_load_si512(kK.shr.data());
    __m512 facc[NR];
    for (int r = 0; r < NR; ++r) facc[r] = _mm512_setzero_ps();
    for (int64_t sb = 0; sb < k / 256; ++sb) {
      const uint8_t* p = w + sb * 210;  // ql[128], qh[64], scales[16], d
      prefetch_ahead<210>(p);
      const float d = f16(p + 208);
      const __m256i sc16 = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 192)));
      const __m512i scz = _mm512_castsi256_si512(sc16);
      const __m512i corr = _mm512_zextsi256_si512(_mm256_slli_epi16(sc16, 5));  // 32·scale
      __m512i lo[2], hi[2], sl[2], sh[2];
      for (int h = 0; h < 2; ++h) {
        const __m512i v = _mm512_loadu_si512(p + 64 * h);
        const __m512i qh = _mm512_broadcast_i64x4(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 128 + 32 * h)));
        // (A & B) | C = 0xEA: low 4 bits from ql, bits 4–5 from the shifted qh.
        lo[h] = _mm512_ternarylogic_epi32(v, m0f, _mm512_and_si512(_mm512_sllv_epi16(qh, shl), m30), 0xEA);
        hi[h] = _mm512_ternarylogic_epi32(_mm512_srli_epi16(v, 4), m0f,
                                          _mm512_and_si512(_mm512_srlv_epi16(qh, shr), m30), 0xEA);
        sl[h] = _mm512_permutexvar_epi16(_mm512_load_si512(kK.q6l[h].data()), scz);
        sh[h] = _mm512_permutexvar_epi16(_mm512_load_si512(kK.q6h[h].data()), scz);
      }
      for (int r = 0; r < NR; ++r) {
        const A256Block& x = reinterpret_cast<const A256Block*>(a + r * a_stride)[sb];
        __m512i acc = _mm512_dpwssd_epi32(
            _mm512_setzero_si512(), corr,
            _mm512_zextsi256_si512(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(x.nbsum16))));
        for (int h = 0; h < 2; ++h) {
          acc = _mm512_dpwssd_epi32(acc, _mm512_maddubs_epi16(lo[h], _mm512_load_si512(x.qs + 128 * h)), sl[h]);
          acc = _mm512_dpwssd_epi32(acc, _mm512_maddubs_epi16(hi[h], _mm512_load_si512(x.qs + 128 * h + 64)), sh[h]);
        }
        facc[r] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(acc), _mm512_set1_ps(d * x.d), facc[r]);
      }
    }
    for (int r = 0; r < NR; ++r) out[r] = _mm512_reduce_add_ps(facc[r]);
  }
};

// Q2_K and Q3_K (kQ3): 2-bit codes, 4 per byte, in natural order once each 32-byte half of qs is
// broadcast to both register halves and shifted per half; Q3_K adds a third bit from hmask and
// subtracts 4 (via the activation sums), Q2_K subtracts dmin·min per 16 elements.
template <bool kQ3>
struct Q23KKernel {
  template <int NR>
  static void dot(int64_t k, const uint8_t* w, const uint8_t* a, int64_t a_stride, float* out) {
    const __m512i m03 = _mm512_set1_epi8(0x03), m04 = _mm512_set1_epi8(0x04);
    __m512 facc[NR];
    __m256 macc[NR];
    for (int r = 0; r < NR; ++r) {
      facc[r] = _mm512_setzero_ps();
      macc[r] = _mm256_setzero_ps();
    }
    for (int64_t sb = 0; sb < k / 256; ++sb) {
      const uint8_t* p = w + sb * (kQ3 ? 110 : 84);
      prefetch_ahead<kQ3 ? 110 : 84>(p);
      const uint8_t* qs = p + (kQ3 ? 32 : 16);
      __m256i sc16, mn16 = _mm256_setzero_si256();
      float d, dmin = 0.0f;
      if constexpr (kQ3) {  // hmask[32], qs[64], scales[12] (16 × 6 bit, −32), d
        uint32_t b[3];
        std::memcpy(b, p + 96, 12);
        constexpr uint32_t k0f = 0x0f0f0f0f, k03 = 0x03030303;
        // Built in registers: storing 4 words and reloading 16 bytes would stall store forwarding.
        const __m128i s = _mm_setr_epi32(int((b[0] & k0f) | ((b[2] & k03) << 4)),
                                         int((b[1] & k0f) | (((b[2] >> 2) & k03) << 4)),
                                         int(((b[0] >> 4) & k0f) | (((b[2] >> 4) & k03) << 4)),
                                         int(((b[1] >> 4) & k0f) | (((b[2] >> 6) & k03) << 4)));
        sc16 = _mm256_sub_epi16(_mm256_cvtepu8_epi16(s), _mm256_set1_epi16(32));
        d = f16(p + 108);
      } else {  // scales[16] (low nibble scale, high nibble min), qs[64], d, dmin
        const __m256i sb16 = _mm256_cvtepu8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
        sc16 = _mm256_and_si256(sb16, _mm256_set1_epi16(0xF));
        mn16 = _mm256_srli_epi16(sb16, 4);
        d = f16(p + 80);
        dmin = f16(p + 82);
      }
      const __m512i scz = _mm512_castsi256_si512(sc16);
      __m512i c[4], sv[4];
      for (int v = 0; v < 4; ++v) {  // register v = 2n + t: elements 128n + 64t + [0, 64)
        const int n = v / 2;
        const __m512i q = _mm512_broadcast_i64x4(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(qs + 32 * n)));
        c[v] = _mm512_and_si512(_mm512_srlv_epi16(q, _mm512_load_si512(kK.q2s[v % 2].data())), m03);
        if constexpr (kQ3) {
          const __m512i hm = _mm512_broadcast_i64x4(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
          const __m512i hb = v == 0 ? _mm512_sllv_epi16(hm, _mm512_load_si512(kK.q3h[0].data()))
                                    : _mm512_srlv_epi16(hm, _mm512_load_si512(kK.q3h[v].data()));
          c[v] = _mm512_or_si512(c[v], _mm512_and_si512(hb, m04));
        }
        sv[v] = _mm512_permutexvar_epi16(_mm512_load_si512(kK.q23s[v].data()), scz);
      }
      const __m512i corr = _mm512_zextsi256_si512(_mm256_slli_epi16(sc16, 2));  // Q3_K: 4·scale
      for (int r = 0; r < NR; ++r) {
        const A256Block& x = reinterpret_cast<const A256Block*>(a + r * a_stride)[sb];
        const __m256i nbs = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x.nbsum16));
        __m512i acc = kQ3 ? _mm512_dpwssd_epi32(_mm512_setzero_si512(), corr, _mm512_zextsi256_si512(nbs))
                          : _mm512_setzero_si512();
        for (int v = 0; v < 4; ++v)
          acc = _mm512_dpwssd_epi32(acc, _mm512_maddubs_epi16(c[v], _mm512_load_si512(x.qs + 64 * v)), sv[v]);
        facc[r] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(acc), _mm512_set1_ps(d * x.d), facc[r]);
        if constexpr (!kQ3)  // −dmin·Σ min·bsum = dmin·Σ min·(−bsum)
          macc[r] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_madd_epi16(mn16, nbs)), _mm256_set1_ps(dmin * x.d), macc[r]);
      }
    }
    for (int r = 0; r < NR; ++r) {
      const __m128 m = _mm_add_ps(_mm256_castps256_ps128(macc[r]), _mm256_extractf128_ps(macc[r], 1));
      out[r] = _mm512_reduce_add_ps(facc[r]) + hsum4(m);
    }
  }
};

}  // namespace

MatmulKernel avx512_qk_kernel(DType t) {
  MatmulKernel m;
  m.act_row_bytes = a256_row_bytes;
  switch (t) {
    case DType::Q4_K: m.prepare = prep_a256<true>; m.tile = tile_rows<Q4KKernel<false>>; return m;
    case DType::Q5_K: m.prepare = prep_a256<true>; m.tile = tile_rows<Q4KKernel<true>>; return m;
    case DType::Q6_K: m.prepare = prep_a256<false>; m.tile = tile_rows<Q6KKernel>; return m;
    case DType::Q2_K: m.prepare = prep_a256<false>; m.tile = tile_rows<Q23KKernel<false>>; return m;
    case DType::Q3_K: m.prepare = prep_a256<false>; m.tile = tile_rows<Q23KKernel<true>>; return m;
    default: return {};
  }
}

}  // namespace oxyd::backend::cpu
