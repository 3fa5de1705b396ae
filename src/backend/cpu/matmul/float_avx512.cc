// AVX-512 kernels for the float weight formats. BF16 weights meet activations rounded once to
// bf16 and use vdpbf16ps (32 multiply-adds per instruction, f32 accumulation); F16 weights are
// widened with vcvtph2ps and F32 weights used as is, both against exact f32 activations.
#include <immintrin.h>

#include <cstring>

#include "backend/cpu/matmul/kernels_avx512.h"
#include "backend/cpu/matmul/tile.h"

namespace oxyd::backend::cpu {
namespace {

inline __mmask16 mask16(int64_t n) {
  return n >= 16 ? __mmask16(0xffff) : n <= 0 ? __mmask16(0) : __mmask16((1u << n) - 1);
}
inline __mmask32 mask32(int64_t n) {
  return n >= 32 ? ~__mmask32(0) : n <= 0 ? __mmask32(0) : __mmask32((1u << n) - 1);
}


struct Bf16Kernel {
  template <int NR>
  static void dot(int64_t k, const uint8_t* w, const uint8_t* a, int64_t a_stride, float* out) {
    const uint16_t* wp = reinterpret_cast<const uint16_t*>(w);
    __m512 acc0[NR], acc1[NR];
    for (int r = 0; r < NR; ++r) acc0[r] = acc1[r] = _mm512_setzero_ps();
    int64_t e = 0;
    for (; e + 64 <= k; e += 64) {
      prefetch_ahead<128>(reinterpret_cast<const uint8_t*>(wp + e));
      const __m512i w0 = _mm512_loadu_si512(wp + e), w1 = _mm512_loadu_si512(wp + e + 32);
      for (int r = 0; r < NR; ++r) {
        const uint16_t* x = reinterpret_cast<const uint16_t*>(a + r * a_stride) + e;
        acc0[r] = _mm512_dpbf16_ps(acc0[r], (__m512bh)w0, (__m512bh)_mm512_load_si512(x));
        acc1[r] = _mm512_dpbf16_ps(acc1[r], (__m512bh)w1, (__m512bh)_mm512_load_si512(x + 32));
      }
    }
    for (; e < k; e += 32) {  // zero-padded activations make the masked tail exact
      const __m512i w0 = _mm512_maskz_loadu_epi16(mask32(k - e), wp + e);
      for (int r = 0; r < NR; ++r) {
        const uint16_t* x = reinterpret_cast<const uint16_t*>(a + r * a_stride) + e;
        acc0[r] = _mm512_dpbf16_ps(acc0[r], (__m512bh)w0, (__m512bh)_mm512_load_si512(x));
      }
    }
    for (int r = 0; r < NR; ++r) out[r] = _mm512_reduce_add_ps(_mm512_add_ps(acc0[r], acc1[r]));
  }
};

// F32 / F16 weights against the f32 rows of x (no preparation). Loads 16 weights as f32.
template <bool kF16>
struct FloatKernel {
  static __m512 load_w(const uint8_t* w, int64_t e, __mmask16 m) {
    if constexpr (kF16)
      return _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, reinterpret_cast<const uint16_t*>(w) + e));
    else
      return _mm512_maskz_loadu_ps(m, reinterpret_cast<const float*>(w) + e);
  }
  template <int NR>
  static void dot(int64_t k, const uint8_t* w, const uint8_t* a, int64_t a_stride, float* out) {
    __m512 acc0[NR], acc1[NR];
    for (int r = 0; r < NR; ++r) acc0[r] = acc1[r] = _mm512_setzero_ps();
    int64_t e = 0;
    for (; e + 32 <= k; e += 32) {
      prefetch_ahead<kF16 ? 64 : 128>(w + e * (kF16 ? 2 : 4));
      const __m512 w0 = load_w(w, e, 0xffff), w1 = load_w(w, e + 16, 0xffff);
      for (int r = 0; r < NR; ++r) {
        const float* x = reinterpret_cast<const float*>(a + r * a_stride) + e;
        acc0[r] = _mm512_fmadd_ps(w0, _mm512_loadu_ps(x), acc0[r]);
        acc1[r] = _mm512_fmadd_ps(w1, _mm512_loadu_ps(x + 16), acc1[r]);
      }
    }
    for (; e < k; e += 16) {
      const __mmask16 m = mask16(k - e);
      const __m512 w0 = load_w(w, e, m);
      for (int r = 0; r < NR; ++r) {
        const float* x = reinterpret_cast<const float*>(a + r * a_stride) + e;
        acc0[r] = _mm512_fmadd_ps(w0, _mm512_maskz_loadu_ps(m, x), acc0[r]);
      }
    }
    for (int r = 0; r < NR; ++r) out[r] = _mm512_reduce_add_ps(_mm512_add_ps(acc0[r], acc1[r]));
  }
};

}  // namespace

int64_t bf16_row_bytes(int64_t k) { return (k * 2 + 63) / 64 * 64; }

void prep_bf16(const float* x, int64_t k, uint8_t* out) {
  uint16_t* o = reinterpret_cast<uint16_t*>(out);
  for (int64_t e = 0; e < k; e += 32) {
    const __m512 a = _mm512_maskz_loadu_ps(mask16(k - e), x + e);
    const __m512 b = _mm512_maskz_loadu_ps(mask16(k - e - 16), x + e + 16);
    _mm512_store_si512(o + e, (__m512i)_mm512_cvtne2ps_pbh(b, a));
  }
}

void avx512_bf16_rows(const TileArgs& t) { tile_rows<Bf16Kernel>(t); }

MatmulKernel avx512_float_kernel(DType t) {
  MatmulKernel m;
  switch (t) {
    case DType::BF16:
      m.act_row_bytes = bf16_row_bytes;
      m.prepare = prep_bf16;
      m.tile = tile_rows<Bf16Kernel>;
      return m;
    case DType::F16: m.tile = tile_rows<FloatKernel<true>>; return m;
    case DType::F32: m.tile = tile_rows<FloatKernel<false>>; return m;
    default: return m;
  }
}

}  // namespace oxyd::backend::cpu
