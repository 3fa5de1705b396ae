// AVX2/FMA kernels for the most used weight formats: Q4_0, Q4_1, Q8_0 (per 32-block, vpmaddubsw
// with the sign trick; Q4_1 is what AWQ / GPTQ checkpoints repack to, core/quant_repack.h), Q4_K, Q6_K (per 256 super-block, vpmaddubsw + vpmaddwd with the sub-block
// scales). Activations are quantized once per matmul to a plain Q8 layout (Q8_0-like for
// 32-blocks, Q8_K-like with per-16 sums for K-quants). Q2_K, Q3_K and MXFP4 are in
// lowbit_rowdot_avx2.cc, the float formats in float_avx2.cc; select.cc gives other formats the
// packed or the generic kernel.
#include <immintrin.h>

#include <cmath>
#include <cstring>

#include "backend/cpu/matmul/rowdot_avx2.h"
#include "backend/cpu/matmul/tile.h"
#include "core/half.h"

namespace oxyd::backend::cpu {

namespace {

struct Q4_0Kernel {
  template <int NR>
  static void dot(int64_t k, const uint8_t* w, const uint8_t* a, int64_t a_stride, float* out) {
    const __m256i m0f = _mm256_set1_epi8(0x0F), m8 = _mm256_set1_epi8(8);
    __m256 acc[NR];
    for (int r = 0; r < NR; ++r) acc[r] = _mm256_setzero_ps();
    for (int64_t b = 0; b < k / 32; ++b) {
      const uint8_t* p = w + b * 18;
      if (b % 4 == 0) prefetch_ahead<72>(p);
      const __m128i q = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 2));
      const __m256i v = _mm256_sub_epi8(
          _mm256_and_si256(_mm256_set_m128i(_mm_srli_epi16(q, 4), q), m0f), m8);  // [−8, 7]
      const __m256 dw = _mm256_set1_ps(f16(p));
      for (int r = 0; r < NR; ++r) {
        const A32& x = reinterpret_cast<const A32*>(a + r * a_stride)[b];
        const __m256i s = dot_s8(v, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x.qs)));
        acc[r] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(s), _mm256_mul_ps(dw, _mm256_set1_ps(x.d)), acc[r]);
      }
    }
    for (int r = 0; r < NR; ++r) out[r] = hsum8(acc[r]);
  }
};

// Q4_1 (w = d·q + m, q unsigned 0..15): the unsigned nibbles go straight into vpmaddubsw against the
// signed activation codes (|Σ pair| ≤ 2·15·127, no saturation); the min term is m · dx·Σcodes,
// which prep_a32_sum keeps in the activation block (A32::pad), as ggml's Q8_1 keeps s = d·Σq.
struct Q4_1Kernel {
  template <int NR>
  static void dot(int64_t k, const uint8_t* w, const uint8_t* a, int64_t a_stride, float* out) {
    const __m256i m0f = _mm256_set1_epi8(0x0F), ones = _mm256_set1_epi16(1);
    __m256 acc[NR];
    float mins[NR];
    for (int r = 0; r < NR; ++r) acc[r] = _mm256_setzero_ps(), mins[r] = 0.0f;
    for (int64_t b = 0; b < k / 32; ++b) {
      const uint8_t* p = w + b * 20;
      if (b % 4 == 0) prefetch_ahead<80>(p);
      const __m128i q = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 4));
      const __m256i v = _mm256_and_si256(_mm256_set_m128i(_mm_srli_epi16(q, 4), q), m0f);  // [0, 15]
      const __m256 dw = _mm256_set1_ps(f16(p));
      const float mw = f16(p + 2);
      for (int r = 0; r < NR; ++r) {
        const A32& x = reinterpret_cast<const A32*>(a + r * a_stride)[b];
        const __m256i s = _mm256_madd_epi16(
            _mm256_maddubs_epi16(v, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x.qs))), ones);
        acc[r] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(s), _mm256_mul_ps(dw, _mm256_set1_ps(x.d)), acc[r]);
        mins[r] = std::fma(mw, x.pad, mins[r]);
      }
    }
    for (int r = 0; r < NR; ++r) out[r] = hsum8(acc[r]) + mins[r];
  }
};

struct Q8_0Kernel {
  template <int NR>
  static void dot(int64_t k, const uint8_t* w, const uint8_t* a, int64_t a_stride, float* out) {
    __m256 acc[NR];
    for (int r = 0; r < NR; ++r) acc[r] = _mm256_setzero_ps();
    for (int64_t b = 0; b < k / 32; ++b) {
      const uint8_t* p = w + b * 34;
      if (b % 2 == 0) prefetch_ahead<68>(p);
      const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 2));
      const __m256 dw = _mm256_set1_ps(f16(p));
      for (int r = 0; r < NR; ++r) {
        const A32& x = reinterpret_cast<const A32*>(a + r * a_stride)[b];
        const __m256i s = dot_s8(v, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x.qs)));
        acc[r] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(s), _mm256_mul_ps(dw, _mm256_set1_ps(x.d)), acc[r]);
      }
    }
    for (int r = 0; r < NR; ++r) out[r] = hsum8(acc[r]);
  }
};

inline void q4k_scales(const uint8_t* q, uint8_t* sc, uint8_t* mn) {
  for (int j = 0; j < 8; ++j) {
    if (j < 4) {
      sc[j] = q[j] & 63;
      mn[j] = q[j + 4] & 63;
    } else {
      sc[j] = uint8_t((q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4));
      mn[j] = uint8_t((q[j + 4] >> 4) | ((q[j] >> 6) << 4));
    }
  }
}

struct Q4KKernel {
  template <int NR>
  static void dot(int64_t k, const uint8_t* w, const uint8_t* a, int64_t a_stride, float* out) {
    const __m256i m0f = _mm256_set1_epi8(0x0F);
    __m256 acc[NR];
    float macc[NR];
    for (int r = 0; r < NR; ++r) {
      acc[r] = _mm256_setzero_ps();
      macc[r] = 0.0f;
    }
    for (int64_t sb = 0; sb < k / 256; ++sb) {
      const uint8_t* p = w + sb * 144;  // d, dmin, scales[12], qs[128]
      prefetch_ahead<144>(p);
      const float d = f16(p), dmin = f16(p + 2);
      uint8_t sc[8], mn[8];
      q4k_scales(p + 4, sc, mn);
      __m256i s[NR];
      for (int r = 0; r < NR; ++r) s[r] = _mm256_setzero_si256();
      for (int c = 0; c < 4; ++c) {
        const __m256i q = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 16 + 32 * c));
        const __m256i lo = _mm256_and_si256(q, m0f), hi = _mm256_and_si256(_mm256_srli_epi16(q, 4), m0f);
        const __m256i s0 = _mm256_set1_epi16(sc[2 * c]), s1 = _mm256_set1_epi16(sc[2 * c + 1]);
        for (int r = 0; r < NR; ++r) {
          const A256& x = reinterpret_cast<const A256*>(a + r * a_stride)[sb];
          const __m256i p0 = _mm256_maddubs_epi16(lo, _mm256_load_si256(reinterpret_cast<const __m256i*>(x.qs + 64 * c)));
          const __m256i p1 = _mm256_maddubs_epi16(hi, _mm256_load_si256(reinterpret_cast<const __m256i*>(x.qs + 64 * c + 32)));
          s[r] = _mm256_add_epi32(s[r], _mm256_add_epi32(_mm256_madd_epi16(p0, s0), _mm256_madd_epi16(p1, s1)));
        }
      }
      for (int r = 0; r < NR; ++r) {
        const A256& x = reinterpret_cast<const A256*>(a + r * a_stride)[sb];
        acc[r] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(s[r]), _mm256_set1_ps(d * x.d), acc[r]);
        int msum = 0;
        for (int j = 0; j < 8; ++j) msum += mn[j] * (x.bsum16[2 * j] + x.bsum16[2 * j + 1]);
        macc[r] += dmin * x.d * float(msum);
      }
    }
    for (int r = 0; r < NR; ++r) out[r] = hsum8(acc[r]) - macc[r];
  }
};

struct Q6KKernel {
  template <int NR>
  static void dot(int64_t k, const uint8_t* w, const uint8_t* a, int64_t a_stride, float* out) {
    const __m256i m0f = _mm256_set1_epi8(0x0F), m03 = _mm256_set1_epi8(0x03);
    __m256 acc[NR];
    for (int r = 0; r < NR; ++r) acc[r] = _mm256_setzero_ps();
    for (int64_t sb = 0; sb < k / 256; ++sb) {
      const uint8_t* p = w + sb * 210;  // ql[128], qh[64], scales[16], d
      prefetch_ahead<210>(p);
      const float d = f16(p + 208);
      const int8_t* sc = reinterpret_cast<const int8_t*>(p + 192);
      __m256i s[NR];
      int corr[NR];
      for (int r = 0; r < NR; ++r) {
        s[r] = _mm256_setzero_si256();
        const A256& x = reinterpret_cast<const A256*>(a + r * a_stride)[sb];
        int c = 0;
        for (int j = 0; j < 16; ++j) c += sc[j] * x.bsum16[j];
        corr[r] = 32 * c;
      }
      for (int h = 0; h < 2; ++h) {
        const __m256i l0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 64 * h));
        const __m256i l1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 64 * h + 32));
        const __m256i qh = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 128 + 32 * h));
        // 4 registers of 32 codes: elements 128h + 32i + [0, 32), scales 8h + 2i, 8h + 2i + 1.
        const __m256i c[4] = {
            _mm256_or_si256(_mm256_and_si256(l0, m0f), _mm256_slli_epi16(_mm256_and_si256(qh, m03), 4)),
            _mm256_or_si256(_mm256_and_si256(l1, m0f),
                            _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 2), m03), 4)),
            _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l0, 4), m0f),
                            _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 4), m03), 4)),
            _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l1, 4), m0f),
                            _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 6), m03), 4))};
        for (int i = 0; i < 4; ++i) {
          const __m256i sv = _mm256_set_m128i(_mm_set1_epi16(sc[8 * h + 2 * i + 1]), _mm_set1_epi16(sc[8 * h + 2 * i]));
          for (int r = 0; r < NR; ++r) {
            const A256& x = reinterpret_cast<const A256*>(a + r * a_stride)[sb];
            const __m256i pr = _mm256_maddubs_epi16(
                c[i], _mm256_load_si256(reinterpret_cast<const __m256i*>(x.qs + 128 * h + 32 * i)));
            s[r] = _mm256_add_epi32(s[r], _mm256_madd_epi16(pr, sv));
          }
        }
      }
      for (int r = 0; r < NR; ++r) {
        const A256& x = reinterpret_cast<const A256*>(a + r * a_stride)[sb];
        const __m256 f = _mm256_cvtepi32_ps(_mm256_sub_epi32(s[r], _mm256_setr_epi32(corr[r], 0, 0, 0, 0, 0, 0, 0)));
        acc[r] = _mm256_fmadd_ps(f, _mm256_set1_ps(d * x.d), acc[r]);
      }
    }
    for (int r = 0; r < NR; ++r) out[r] = hsum8(acc[r]);
  }
};

}  // namespace

MatmulKernel avx2_rowdot_kernel(DType t) {
  MatmulKernel m;
  switch (t) {
    case DType::Q4_0: m.act_row_bytes = a32_row_bytes; m.prepare = prep_a32; m.tile = tile_rows<Q4_0Kernel>; break;
    case DType::Q4_1: m.act_row_bytes = a32_row_bytes; m.prepare = prep_a32_sum; m.tile = tile_rows<Q4_1Kernel>; break;
    case DType::Q8_0: m.act_row_bytes = a32_row_bytes; m.prepare = prep_a32; m.tile = tile_rows<Q8_0Kernel>; break;
    case DType::Q4_K: m.act_row_bytes = a256_row_bytes; m.prepare = prep_a256; m.tile = tile_rows<Q4KKernel>; break;
    case DType::Q6_K: m.act_row_bytes = a256_row_bytes; m.prepare = prep_a256; m.tile = tile_rows<Q6KKernel>; break;
    default: break;
  }
  return m;
}

}  // namespace oxyd::backend::cpu
