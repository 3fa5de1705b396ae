// AVX-512 VNNI matmul for the 32-element block formats Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, IQ4_NL and
// MXFP4 at batched-decode and prefill sizes, for CPUs without AMX (AMD Zen 4, Intel before
// Sapphire Rapids). The row-dot kernels of matmul_q32_avx512.cc spend ~6 vector ops per
// activation row per 2 vpdpbusd and sum lanes at the end; here one register holds 16 weight rows:
// each panel of 16 weight rows is decoded once into unsigned codes laid out so that int32 lane L
// of register q holds elements 4q..4q+3 of one row's block, and an activation row then costs, per
// 32-block, 8 vpdpbusd (its codes broadcast 4 at a time from memory) + convert, scale, fma.
// Lanes are weight rows, so the f32 sums need no horizontal reduction.
//
// The activation codes and scales are quant32's, as on the VNNI row-dot path, so the integer
// block sums are the same and the two paths differ only in f32 summation order.
#include <immintrin.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>

#include "backend/cpu/matmul_q_avx512.h"
#include "backend/cpu/matmul_quant32_avx512.h"

namespace oxyd::backend::cpu {
namespace {

// From this many activation rows the panel kernel beats the row-dot kernels: a whole-model decode
// step (2 threads, Zen 4, Qwen3-0.6B-shaped Q4_0 and Gemma 3 270M) is ~20% slower at 4 rows, even
// at 6, and 20-35% faster at 8 (docs/performance.md, "Batched decode without AMX").
constexpr int64_t kPanelMinRows = 8;

// One prepared activation row: codes[nb][32] (quant32, element order), then per block the f16-
// rounded scale dx, init = −OFF·Σcodes (the weights' unsigned code offset, removed from the
// integer sum) and sx = dx·Σcodes (the min term of Q4_1/Q5_1). Padded to 64 bytes.
int64_t row_bytes(int64_t k) {
  const int64_t nb = k / 32;
  return (nb * 32 + nb * 12 + 63) / 64 * 64;
}

template <int OFF>
void prepare(const float* x, int64_t k, uint8_t* out) {
  const int64_t nb = k / 32;
  float* dx = reinterpret_cast<float*>(out + nb * 32);
  int32_t* init = reinterpret_cast<int32_t*>(out + nb * 36);
  float* sx = reinterpret_cast<float*>(out + nb * 40);
  for (int64_t b = 0; b < nb; ++b) {
    int8_t* q = reinterpret_cast<int8_t*>(out + b * 32);
    dx[b] = quant32(x + b * 32, q);
    const __m512i c = _mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(q)));
    const __m512i d = _mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(q + 16)));
    const int32_t s = _mm512_reduce_add_epi32(_mm512_add_epi32(c, d));
    init[b] = -OFF * s;
    sx[b] = dx[b] * float(s);
  }
}

// One decoded 32-block of a 16-row panel: w[q] lane L = elements 4q..4q+3 of weight row π(L) as
// unsigned codes (value = code − OFF, or code · d + m); dw/dm the rows' scale and min in lane order.
// The loads give lane order π(L) = 4·(L % 4) + L / 4 (a 4×4 transpose of 128-bit lanes), undone
// when the sums are stored.
struct alignas(64) PBlock {
  __m512i w[8];
  __m512 dw, dm;
};
static_assert(sizeof(PBlock) == 640);

inline __m512i pi_index() { return _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15); }

enum class Scale { F16, F16_MIN, E8M0 };
enum class Lut { NONE, IQ4NL, MXFP4 };

// BB block bytes, QOFF offset of the 16 (Q8_0: 32) code bytes, QH offset of Q5's 32 high bits (-1:
// none), OFF the unsigned code of value 0, LUT a table mapping nibbles to unsigned codes.
template <int BB_, int QOFF_, int QH_, int OFF_, Scale SC_, Lut LUT_>
struct Fmt {
  static constexpr int BB = BB_, QOFF = QOFF_, QH = QH_, OFF = OFF_;
  static constexpr Scale SC = SC_;
  static constexpr Lut LUT = LUT_;
  static constexpr bool kQ8 = BB_ == 34;
  static constexpr bool kMin = SC_ == Scale::F16_MIN;
};

struct Tables {
  alignas(64) std::array<uint8_t, 64> rep[4]{}, bits[2]{};
  alignas(16) std::array<uint8_t, 16> lut{};
};
template <Lut LUT>
constexpr Tables make_tables() {
  Tables t;
  for (int i = 0; i < 64; ++i) {
    for (int p = 0; p < 4; ++p) t.rep[p][i] = uint8_t(i % 16 / 4 * 4 + p);  // vpshufb: byte p of each dword
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

// 16 bytes at `off` of the 16 rows (row r at p + ro[r]) as 4 registers: T[d] lane L = dword d of
// row π(L).
inline void load_transposed(const uint8_t* p, const int64_t* ro, int64_t off, __m512i T[4]) {
  __m512i Z[4];
  for (int g = 0; g < 4; ++g) {
    auto row = [&](int r) { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + ro[4 * g + r] + off)); };
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

// Decodes the panel of weight rows [0, rows) (rows past the end repeat the last one; their sums
// are never stored) into nb PBlocks.
template <class F>
void decode_panel(const uint8_t* w, int64_t ws, int rows, int64_t nb, PBlock* out) {
  alignas(64) int64_t ro[16];
  alignas(64) int32_t ro32[16];
  for (int r = 0; r < 16; ++r) ro[r] = int64_t(std::min(r, rows - 1)) * ws;
  for (int r = 0; r < 16; ++r) ro32[r] = int32_t(ro[r]);
  const __m512i gidx = _mm512_permutexvar_epi32(pi_index(), _mm512_load_si512(ro32));
  constexpr const Tables& kT = kTables<F::LUT>;
  const __m512i m0f = _mm512_set1_epi8(0x0F);
  for (int64_t b = 0; b < nb; ++b) {
    const uint8_t* p = w + b * F::BB;
    PBlock& o = out[b];
    __m512i T[4];
    load_transposed(p, ro, F::QOFF, T);
    if constexpr (F::kQ8) {
      const __m512i flip = _mm512_set1_epi8(char(0x80));
      for (int d = 0; d < 4; ++d) o.w[d] = _mm512_xor_si512(T[d], flip);
      load_transposed(p, ro, F::QOFF + 16, T);
      for (int d = 0; d < 4; ++d) o.w[4 + d] = _mm512_xor_si512(T[d], flip);
    } else {
      __m512i W[8];
      for (int d = 0; d < 4; ++d) {
        W[d] = _mm512_and_si512(T[d], m0f);
        W[4 + d] = _mm512_and_si512(_mm512_srli_epi16(T[d], 4), m0f);
      }
      if constexpr (F::QH >= 0) {
        // Element e's fifth bit is bit e of the row's qh word.
        const __m512i H = _mm512_i32gather_epi32(gidx, p + F::QH, 1);
        for (int q = 0; q < 8; ++q) {
          const __m512i rep = _mm512_shuffle_epi8(H, _mm512_load_si512(kT.rep[q / 2].data()));
          const __mmask64 hi = _mm512_test_epi8_mask(rep, _mm512_load_si512(kT.bits[q % 2].data()));
          W[q] = _mm512_mask_add_epi8(W[q], hi, W[q], _mm512_set1_epi8(0x10));
        }
      }
      if constexpr (F::LUT != Lut::NONE) {
        const __m512i lut = _mm512_broadcast_i32x4(_mm_load_si128(reinterpret_cast<const __m128i*>(kT.lut.data())));
        for (auto& v : W) v = _mm512_shuffle_epi8(lut, v);
      }
      for (int q = 0; q < 8; ++q) o.w[q] = W[q];
    }
    const __m512i head = _mm512_i32gather_epi32(gidx, p, 1);
    if constexpr (F::SC == Scale::E8M0) {
      const __m512 e = _mm512_cvtepi32_ps(_mm512_and_si512(head, _mm512_set1_epi32(0xFF)));
      o.dw = _mm512_scalef_ps(_mm512_set1_ps(1.0f), _mm512_sub_ps(e, _mm512_set1_ps(128.0f)));
      o.dm = _mm512_setzero_ps();
    } else {
      o.dw = _mm512_cvtph_ps(_mm512_cvtepi32_epi16(head));
      o.dm = F::kMin ? _mm512_cvtph_ps(_mm512_cvtepi32_epi16(_mm512_srli_epi32(head, 16))) : _mm512_setzero_ps();
    }
  }
}

// R activation rows (a, a_stride apart) against a decoded panel; y row r gets the `rows` sums.
// Prefetches pf_bytes at pf spread over the blocks (the next panel's weights).
template <int R, bool kMin>
void panel_rows(const PBlock* P, int64_t nb, const uint8_t* a, int64_t a_stride, float* y, int64_t ys, int rows,
                const uint8_t* pf, int64_t pf_bytes) {
  __m512 acc[R];
  for (auto& v : acc) v = _mm512_setzero_ps();
  const int64_t pf_step = (pf_bytes / nb + 64) / 64 * 64;
  for (int64_t b = 0; b < nb; ++b) {
    for (int64_t o = b * pf_step; o < std::min(pf_bytes, (b + 1) * pf_step); o += 64) __builtin_prefetch(pf + o, 0, 3);
    const PBlock& pb = P[b];
    // Unrolled so that the R sums stay in registers across the blocks.
#pragma GCC unroll 16
    for (int r = 0; r < R; ++r) {
      const uint8_t* ar = a + r * a_stride;
      const int32_t* codes = reinterpret_cast<const int32_t*>(ar + b * 32);
      const float dx = reinterpret_cast<const float*>(ar + nb * 32)[b];
      __m512i s = _mm512_set1_epi32(reinterpret_cast<const int32_t*>(ar + nb * 36)[b]);
#pragma GCC unroll 8
      for (int q = 0; q < 8; ++q) s = _mm512_dpbusd_epi32(s, pb.w[q], _mm512_set1_epi32(codes[q]));
      acc[r] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(s), _mm512_mul_ps(pb.dw, _mm512_set1_ps(dx)), acc[r]);
      if constexpr (kMin)
        acc[r] = _mm512_fmadd_ps(pb.dm, _mm512_set1_ps(reinterpret_cast<const float*>(ar + nb * 40)[b]), acc[r]);
    }
  }
  const __mmask16 live = rows >= 16 ? __mmask16(0xffff) : __mmask16((1u << rows) - 1);
  for (int r = 0; r < R; ++r) _mm512_mask_storeu_ps(y + r * ys, live, _mm512_permutexvar_ps(pi_index(), acc[r]));
}

// Per-thread panel buffer from aligned_alloc (see matmul_amx_avx512.cc on std::vector here).
struct Scratch {
  void* p = nullptr;
  size_t bytes = 0;
  ~Scratch() { std::free(p); }
  PBlock* get(int64_t count) {
    const size_t need = size_t(count) * sizeof(PBlock);
    if (bytes < need) {
      std::free(p);
      p = std::aligned_alloc(64, need);
      bytes = p ? need : 0;
    }
    return static_cast<PBlock*>(p);
  }
};

template <class F>
void panel_tile(const TileArgs& t) {
  const int64_t nb = t.k / 32, ws = t.w_stride;
  thread_local Scratch scratch;
  PBlock* panel = scratch.get(nb);
  // Activation rows per pass over the panels: ~512 KiB of them stay in L2 while n is swept.
  const int64_t mc = std::max<int64_t>(16, (512 << 10) / t.a_stride / 16 * 16);
  for (int64_t i0 = 0; i0 < t.m; i0 += mc) {
    const int64_t i1 = std::min(t.m, i0 + mc);
    for (int64_t j0 = 0; j0 < t.n; j0 += 16) {
      const int rows = int(std::min<int64_t>(16, t.n - j0));
      decode_panel<F>(t.w + j0 * ws, ws, rows, nb, panel);
      const uint8_t* pf = t.w + (j0 + 16) * ws;
      int64_t pf_bytes = std::clamp<int64_t>(t.n - j0 - 16, 0, 16) * ws;
      for (int64_t i = i0; i < i1;) {
        const int64_t left = i1 - i;
        const uint8_t* a = t.a + i * t.a_stride;
        float* y = t.y + i * t.y_stride + j0;
        const int r = left >= 16 ? 16 : left >= 8 ? 8 : left >= 4 ? 4 : left >= 2 ? 2 : 1;
        switch (r) {
          case 16: panel_rows<16, F::kMin>(panel, nb, a, t.a_stride, y, t.y_stride, rows, pf, pf_bytes); break;
          case 8: panel_rows<8, F::kMin>(panel, nb, a, t.a_stride, y, t.y_stride, rows, pf, pf_bytes); break;
          case 4: panel_rows<4, F::kMin>(panel, nb, a, t.a_stride, y, t.y_stride, rows, pf, pf_bytes); break;
          case 2: panel_rows<2, F::kMin>(panel, nb, a, t.a_stride, y, t.y_stride, rows, pf, pf_bytes); break;
          default: panel_rows<1, F::kMin>(panel, nb, a, t.a_stride, y, t.y_stride, rows, pf, pf_bytes); break;
        }
        pf_bytes = 0;  // the first group's pass prefetches the next panel
        i += r;
      }
    }
  }
}

template <class F>
MatmulKernel make() {
  MatmulKernel k;
  k.act_row_bytes = row_bytes;
  k.prepare = prepare<F::OFF>;
  k.tile = panel_tile<F>;
  return k;
}

}  // namespace

MatmulKernel avx512_q32_panel_kernel(DType t, int64_t m) {
  if (m < kPanelMinRows) return {};
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

}  // namespace oxyd::backend::cpu
