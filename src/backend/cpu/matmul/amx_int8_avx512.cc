// AMX-INT8 matmul for the 32-element block formats Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, IQ4_NL, MXFP4 at
// batched-decode and prefill sizes. Computes yᵀ one 32-block at a time: tile A = 16 weight rows ×
// 32 signed codes (Q8_0: the qs bytes read straight from the GGUF rows; the other formats: each
// panel of 16 rows decoded once into a buffer), tile B = 16 activation rows quantized exactly as
// the VNNI path quantizes them (quant32), packed once per matmul in AMX's 4-byte-interleaved
// layout. TDPBSSD gives the 16×16 integer block dot products; they are scaled by dw·da in f32 and
// summed in 16 registers (one per weight row; lanes = activation rows). The integer sums equal
// the VNNI kernels', so the two paths differ only in f32 summation order.
// Extra ISA flags (-mamx-tile -mamx-int8 -mavx512vbmi): set for this file in src/CMakeLists.txt (clang ignores #pragma GCC target).
#include <immintrin.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>

#include "backend/cpu/matmul/kernels_avx512.h"
#include "backend/cpu/matmul/act_quant32_avx512.h"
#include "core/cpu_features.h"

namespace oxyd::backend::cpu {
namespace {

// One (group of 16 activation rows, 32-block) B operand: q is the tile (row p, column j = codes
// 4p..4p+3 of activation row j), d the rows' f16-rounded scales, sx = d·Σcodes (the min term of
// Q4_1/Q5_1). Rows past m are zero. Stored [group][block].
struct alignas(64) BTile {
  int32_t q[128];
  float d[16];
  float sx[16];
};
static_assert(sizeof(BTile) == 640);

// It runs at every number of activation rows, so that a row's result never depends on its batch
// (batch invariance), although other kernels were faster at some sizes (matmul_bench --cpu-time,
// 1 thread, 1024×4096, in cache): VNNI below 4 rows for Q8_0 (VNNI 48 → 55 GF/s at 4) and below
// 6 for the decoded formats (at 4 the panel decode, shared by only 4 rows, loses: Q4_0 71 → 39;
// at 6: 75 → 82), AMX-BF16 from ~384 rows (at 512 rows int8 200/187/219 vs bf16 254/216/230 GF/s,
// Q8_0/Q4_0/Q5_0).

inline int64_t groups(int64_t m) { return (m + 15) / 16; }
int64_t act_bytes(int64_t m, int64_t k) { return groups(m) * (k / 32) * int64_t(sizeof(BTile)); }

// Splits the (group, block) units over the parts; each unit is independent.
void prepare(const float* x, int64_t m, int64_t k, uint8_t* out, int part, int num_parts) {
  const int64_t nb = k / 32, units = groups(m) * nb;
  BTile* tiles = reinterpret_cast<BTile*>(out);
  const __m512i row_idx = _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                                             _mm512_set1_epi32(8));
  for (int64_t u = units * part / num_parts; u < units * (part + 1) / num_parts; ++u) {
    const int64_t g = u / nb, b = u % nb;
    BTile& t = tiles[u];
    alignas(64) int32_t q[16][8] = {};  // [activation row][4 codes]
    alignas(64) float d[16] = {};
    for (int j = 0; j < 16 && g * 16 + j < m; ++j) d[j] = quant32(x + (g * 16 + j) * k + b * 32, reinterpret_cast<int8_t*>(q[j]));
    __m512i sum = _mm512_setzero_si512();
    for (int p = 0; p < 8; ++p) {
      const __m512i r = _mm512_i32gather_epi32(_mm512_add_epi32(row_idx, _mm512_set1_epi32(p)), &q[0][0], 4);
      _mm512_store_si512(t.q + 16 * p, r);
      sum = _mm512_dpbusd_epi32(sum, _mm512_set1_epi8(1), r);
    }
    const __m512 dv = _mm512_load_ps(d);
    _mm512_store_ps(t.d, dv);
    _mm512_store_ps(t.sx, _mm512_mul_ps(dv, _mm512_cvtepi32_ps(sum)));
  }
}

enum class Scale { F16, F16_MIN, E8M0 };
enum class Lut { NONE, IQ4NL, MXFP4 };

// A block format: BB block bytes, QOFF offset of the codes, QH offset of Q5's 32 high bits (-1:
// none), OFF the code of value 0 (subtracted), LUT a table of signed values instead.
template <int BB_, int QOFF_, int QH_, int OFF_, Scale SC_, Lut LUT_>
struct Fmt {
  static constexpr int BB = BB_, QOFF = QOFF_, QH = QH_, OFF = OFF_;
  static constexpr Scale SC = SC_;
  static constexpr Lut LUT = LUT_;
  static constexpr bool kQ8 = BB_ == 34;
};
using Q8_0F = Fmt<34, 2, -1, 0, Scale::F16, Lut::NONE>;

// vpermt2b indices for decoding 4 nibble blocks (A:B = their 4·BB bytes) into two registers of
// two blocks each in element order: byte i of register h is element i%32 of block 2h + i/32.
struct DecodeTables {
  alignas(64) std::array<uint8_t, 64> q[2]{}, h[2]{}, bit{};
  alignas(16) std::array<int8_t, 16> lut{};
};
template <class F>
constexpr DecodeTables make_tables() {
  DecodeTables t;
  for (int r = 0; r < 2; ++r)
    for (int i = 0; i < 64; ++i) {
      const int blk = 2 * r + i / 32, e = i % 32;
      t.q[r][i] = uint8_t(F::BB * blk + F::QOFF + e % 16);
      t.h[r][i] = uint8_t(F::BB * blk + (F::QH < 0 ? 0 : F::QH) + e / 8);
    }
  for (int i = 0; i < 64; ++i) t.bit[i] = uint8_t(1u << (i % 32 % 8));
  constexpr int8_t iq4nl[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};
  constexpr int8_t mxfp4[16] = {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12};
  for (int i = 0; i < 16; ++i) t.lut[i] = F::LUT == Lut::IQ4NL ? iq4nl[i] : F::LUT == Lut::MXFP4 ? mxfp4[i] : 0;
  return t;
}
template <class F>
alignas(64) constexpr DecodeTables kTables = make_tables<F>();

inline __mmask64 bytes_mask(int64_t n) {
  return n >= 64 ? ~__mmask64(0) : n <= 0 ? __mmask64(0) : (__mmask64(1) << n) - 1;
}

// One weight row of nb blocks → nb·32 signed codes (the values the scale multiplies).
template <class F>
void decode_row(const uint8_t* w, int64_t nb, int8_t* dst) {
  if constexpr (F::kQ8) {
    for (int64_t b = 0; b < nb; ++b) std::memcpy(dst + b * 32, w + b * 34 + 2, 32);
  } else {
    constexpr const DecodeTables& kT = kTables<F>;
    const __m512i m0f = _mm512_set1_epi8(0x0F);
    const __m512i lut = _mm512_broadcast_i32x4(_mm_load_si128(reinterpret_cast<const __m128i*>(kT.lut.data())));
    for (int64_t b0 = 0; b0 < nb; b0 += 4) {
      const int64_t left = (nb - b0) * F::BB;
      const uint8_t* p = w + b0 * F::BB;
      const __m512i A = _mm512_maskz_loadu_epi8(bytes_mask(left), p);
      const __m512i B = _mm512_maskz_loadu_epi8(bytes_mask(left - 64), p + 64);
      for (int r = 0; r < 2 && b0 + 2 * r < nb; ++r) {
        const __m512i v = _mm512_permutex2var_epi8(A, _mm512_load_si512(kT.q[r].data()), B);
        // Elements 16..31 of a block are the high nibbles: the odd 16-byte quarters.
        __m512i c = _mm512_and_si512(_mm512_mask_blend_epi8(0xFFFF0000FFFF0000ull, v, _mm512_srli_epi16(v, 4)), m0f);
        if constexpr (F::QH >= 0) {
          const __m512i hb = _mm512_permutex2var_epi8(A, _mm512_load_si512(kT.h[r].data()), B);
          c = _mm512_mask_add_epi8(c, _mm512_test_epi8_mask(hb, _mm512_load_si512(kT.bit.data())), c,
                                   _mm512_set1_epi8(0x10));
        }
        if constexpr (F::LUT != Lut::NONE) c = _mm512_shuffle_epi8(lut, c);
        if constexpr (F::OFF != 0) c = _mm512_sub_epi8(c, _mm512_set1_epi8(char(F::OFF)));
        _mm512_mask_storeu_epi8(dst + (b0 + 2 * r) * 32, bytes_mask((nb - b0 - 2 * r) * 32), c);
      }
    }
  }
}


// Tiles 0, 3: C (16 × 16 int32); 1, 4: A (16 weight rows × 32 codes); 2, 5: B (8 × 64 bytes).
void load_config() {
  AmxTileConfig cfg{};
  cfg.palette_id = 1;
  for (int s = 0; s < 2; ++s) {
    cfg.colsb[3 * s] = 64;
    cfg.rows[3 * s] = 16;
    cfg.colsb[3 * s + 1] = 32;
    cfg.rows[3 * s + 1] = 16;
    cfg.colsb[3 * s + 2] = 64;
    cfg.rows[3 * s + 2] = 8;
  }
  _tile_loadconfig(&cfg);
}

// Scales of the panel's rows (rows ≥ `rows` get 0) per block: dw[b·16 + r], dm likewise.
template <class F>
void panel_scales(const uint8_t* w, int64_t ws, int rows, int64_t nb, float* dw, float* dm) {
  const __m512i idx = _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                                         _mm512_set1_epi32(int(ws)));
  const __mmask16 live = rows >= 16 ? __mmask16(0xffff) : __mmask16((1u << rows) - 1);
  for (int64_t b = 0; b < nb; ++b) {
    const __m512i v = _mm512_mask_i32gather_epi32(_mm512_setzero_si512(), live, idx, w + b * F::BB, 1);
    if constexpr (F::SC == Scale::E8M0) {
      const __m512 e = _mm512_cvtepi32_ps(_mm512_and_si512(v, _mm512_set1_epi32(0xFF)));
      _mm512_store_ps(dw + b * 16, _mm512_scalef_ps(_mm512_set1_ps(1.0f), _mm512_sub_ps(e, _mm512_set1_ps(128.0f))));
    } else {
      _mm512_store_ps(dw + b * 16, _mm512_cvtph_ps(_mm512_cvtepi32_epi16(v)));
      if constexpr (F::SC == Scale::F16_MIN)
        _mm512_store_ps(dm + b * 16, _mm512_cvtph_ps(_mm512_cvtepi32_epi16(_mm512_srli_epi32(v, 16))));
    }
  }
}

// One weight panel (A operand: 16 rows, block b at a + b·a_block, rows a_stride apart) against
// one group of 16 activation rows: acc[r] lane i = Σ_b dw·da·(codes of weight row r · act row i).
// The tile ops of block pair p+1 are issued (and stored to the other half of c) before the f32
// work of pair p, so the AMX latency overlaps the vector work. Prefetches `pf_bytes` of `pf`
// spread over the blocks.
template <class F>
void panel_group(const int8_t* a, int64_t a_stride, int64_t a_block, const BTile* bg, int64_t nb, const float* dw,
                 const float* dm, const uint8_t* pf, int64_t pf_bytes, __m512* acc) {
  alignas(64) int32_t c[2][2][256];
  const int64_t pf_step = (pf_bytes / nb + 64) / 64 * 64;
  auto issue = [&](int64_t b, int32_t (*out)[256]) {
    _tile_loadd(1, a + b * a_block, a_stride);
    _tile_loadd(2, bg[b].q, 64);
    _tile_zero(0);
    _tile_dpbssd(0, 1, 2);
    if (b + 1 < nb) {
      _tile_loadd(4, a + (b + 1) * a_block, a_stride);
      _tile_loadd(5, bg[b + 1].q, 64);
      _tile_zero(3);
      _tile_dpbssd(3, 4, 5);
    }
    _tile_stored(0, out[0], 64);
    if (b + 1 < nb) _tile_stored(3, out[1], 64);
  };
  issue(0, c[0]);
  for (int64_t b0 = 0, p = 0; b0 < nb; b0 += 2, ++p) {
    if (b0 + 2 < nb) issue(b0 + 2, c[(p + 1) & 1]);
    for (int64_t o = b0 * pf_step; o < std::min(pf_bytes, (b0 + 2) * pf_step); o += 64) __builtin_prefetch(pf + o, 0, 3);
    for (int64_t h = 0; h < 2 && b0 + h < nb; ++h) {
      const int64_t b = b0 + h;
      const int32_t* cb = c[p & 1][h];
      const __m512 da = _mm512_load_ps(bg[b].d);
      const float* dwb = dw + b * 16;
      for (int r = 0; r < 16; ++r)
        acc[r] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_load_si512(cb + 16 * r)),
                                 _mm512_mul_ps(da, _mm512_set1_ps(dwb[r])), acc[r]);
      if constexpr (F::SC == Scale::F16_MIN) {
        const __m512 sx = _mm512_load_ps(bg[b].sx);
        for (int r = 0; r < 16; ++r) acc[r] = _mm512_fmadd_ps(sx, _mm512_set1_ps(dm[b * 16 + r]), acc[r]);
      }
    }
  }
}

template <class F>
void amx_q32_tile(const TileArgs& t) {
  const int64_t nb = t.k / 32, ng = groups(t.m), ws = t.w_stride;
  const BTile* bt = reinterpret_cast<const BTile*>(t.a);
  // The pool thread's scratch: decoded panel [16][k] int8, then dw, dm [nb][16] f32.
  uint8_t* s = t.scratch->get(kTileSlot0, size_t(16 * t.k + 2 * nb * 64));
  int8_t* panel = reinterpret_cast<int8_t*>(s);
  float* dw = reinterpret_cast<float*>(s + 16 * t.k);
  float* dm = dw + nb * 16;
  alignas(64) float out[256];
  load_config();
  for (int64_t j0 = 0; j0 < t.n; j0 += 16) {
    const int rows = int(std::min<int64_t>(16, t.n - j0));
    const uint8_t* w = t.w + j0 * ws;
    const int64_t next_rows = std::clamp<int64_t>(t.n - j0 - 16, 0, 16);
    panel_scales<F>(w, ws, rows, nb, dw, dm);
    const int8_t* a = panel;
    int64_t a_stride = t.k, a_block = 32;
    if (F::kQ8 && rows == 16) {
      a = reinterpret_cast<const int8_t*>(w + 2);
      a_stride = ws;
      a_block = 34;
    } else {
      for (int r = 0; r < rows; ++r) decode_row<F>(w + r * ws, nb, panel + r * t.k);
      if (rows < 16) std::memset(panel + rows * t.k, 0, size_t((16 - rows) * t.k));
    }
    for (int64_t g = 0; g < ng; ++g) {
      __m512 acc[16];
      for (auto& v : acc) v = _mm512_setzero_ps();
      // The first group's pass prefetches the next panel.
      panel_group<F>(a, a_stride, a_block, bt + g * nb, nb, dw, dm, w + 16 * ws, g == 0 ? next_rows * ws : 0, acc);
      for (int r = 0; r < 16; ++r) _mm512_store_ps(out + 16 * r, acc[r]);
      const int64_t mrows = std::min<int64_t>(16, t.m - g * 16);
      for (int64_t i = 0; i < mrows; ++i)
        for (int r = 0; r < rows; ++r) t.y[(g * 16 + i) * t.y_stride + j0 + r] = out[16 * r + i];
    }
  }
  _tile_release();
}

template <class F>
MatmulKernel make() {
  MatmulKernel k;
  k.act_bytes_all = act_bytes;
  k.prepare_all = prepare;
  k.tile = amx_q32_tile<F>;
  return k;
}

}  // namespace

MatmulKernel avx512_amx_q8_kernel(DType t) {
  if (!cpu_features().amx_int8 || !amx_tiles_permitted()) return {};
  switch (t) {
    case DType::Q8_0: return make<Q8_0F>();
    case DType::Q4_0: return make<Fmt<18, 2, -1, 8, Scale::F16, Lut::NONE>>();
    case DType::Q4_1: return make<Fmt<20, 4, -1, 0, Scale::F16_MIN, Lut::NONE>>();
    case DType::Q5_0: return make<Fmt<22, 6, 2, 16, Scale::F16, Lut::NONE>>();
    case DType::Q5_1: return make<Fmt<24, 8, 4, 0, Scale::F16_MIN, Lut::NONE>>();
    case DType::IQ4_NL: return make<Fmt<18, 2, -1, 0, Scale::F16, Lut::IQ4NL>>();
    case DType::MXFP4: return make<Fmt<17, 1, -1, 0, Scale::E8M0, Lut::MXFP4>>();
    default: return {};
  }
}

}  // namespace oxyd::backend::cpu
