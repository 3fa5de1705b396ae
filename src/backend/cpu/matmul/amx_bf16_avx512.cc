// AMX-BF16 matmul for BF16 weights at batch ≥ 16 (prefill). Computes yᵀ tiles: the A operand is
// 16 weight rows × 32 k read straight from w (row-major, k contiguous is AMX's A layout); the B
// operand is the activations, converted to bf16 and packed once per matmul into AMX's pair-
// interleaved layout (tile row p = the k-pair p of 16 activation rows). A 2×2 block of C tiles
// (32 weight rows × 32 activation rows) accumulates over k, then is written back transposed.
// Weight rows left over (n % 16) go through the AVX-512 vdpbf16ps kernel. Quantized weights at
// large m (prefill) take the same path after decoding 32-row panels to bf16 (zero-padded rows),
// which costs a scalar decode per weight but is shared by all m rows.
// Extra ISA flags (-mamx-tile -mamx-bf16): set for this file in src/CMakeLists.txt (clang ignores #pragma GCC target).
#include <immintrin.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "backend/cpu/matmul/decode_impl.h"
#include "backend/cpu/matmul/kernels_avx512.h"
#include "core/cpu_features.h"

namespace oxyd::backend::cpu {
namespace {

constexpr int64_t kRowAlign = 32;  // activation rows are padded to a multiple of this (zeros)

inline int64_t k_pad(int64_t k) { return (k + 31) / 32 * 32; }
inline int64_t m_pad(int64_t m) { return (m + kRowAlign - 1) / kRowAlign * kRowAlign; }
inline int64_t row_part_bytes(int64_t m, int64_t k) { return m * k_pad(k) * 2; }

// Layout: [m rows of bf16, k_pad each] then [m_pad/16][k_pad/32] packed 1 KiB B tiles.
int64_t amx_act_bytes(int64_t m, int64_t k) {
  return row_part_bytes(m, k) + m_pad(m) / 16 * (k_pad(k) / 32) * 1024;
}

// Part `part` of `num_parts`: whole groups of 16 activation rows, so parts need no barrier.
// Each group: its rows to bf16 (zero-padded to k_pad), then its B tiles: tile (g, s) row p,
// column j = the bf16 pair (2p, 2p+1) of k-step s of row 16g + j (zero beyond m).
void amx_prepare(const float* x, int64_t m, int64_t k, uint8_t* out, int part, int num_parts) {
  const int64_t kp = k_pad(k), steps = kp / 32, groups = m_pad(m) / 16;
  uint16_t* rows = reinterpret_cast<uint16_t*>(out);
  const uint32_t* r32 = reinterpret_cast<const uint32_t*>(rows);
  uint32_t* packed = reinterpret_cast<uint32_t*>(out + row_part_bytes(m, k));
  for (int64_t g = groups * part / num_parts; g < groups * (part + 1) / num_parts; ++g) {
    for (int64_t i = g * 16; i < std::min(m, g * 16 + 16); ++i)
      for (int64_t c = 0; c < kp; c += 32) {
        const int64_t left = k - c;
        const __mmask16 m0 = left >= 16 ? 0xffff : left <= 0 ? 0 : __mmask16((1u << left) - 1);
        const __mmask16 m1 = left >= 32 ? 0xffff : left <= 16 ? 0 : __mmask16((1u << (left - 16)) - 1);
        const __m512 lo = _mm512_maskz_loadu_ps(m0, x + i * k + c);
        const __m512 hi = _mm512_maskz_loadu_ps(m1, x + i * k + c + 16);
        _mm512_storeu_si512(rows + i * kp + c, (__m512i)_mm512_cvtne2ps_pbh(hi, lo));
      }
    for (int64_t s = 0; s < steps; ++s) {
      uint32_t* tile = packed + (g * steps + s) * 256;
      for (int j = 0; j < 16; ++j) {
        const int64_t i = g * 16 + j;
        for (int p = 0; p < 16; ++p) tile[p * 16 + j] = i < m ? r32[i * (kp / 2) + s * 16 + p] : 0u;
      }
    }
  }
}

void load_config() {
  AmxTileConfig cfg{};
  cfg.palette_id = 1;
  for (int t = 0; t < 8; ++t) {
    cfg.colsb[t] = 64;
    cfg.rows[t] = 16;
  }
  _tile_loadconfig(&cfg);
}

// y[i0 + 0..31][j0 + 0..(nt·16 − 1)] from C tiles (C[n][m] = yᵀ) stored to buf.
inline void write_back(const float* buf, int64_t rows_n, int64_t i0, int64_t m, float* y, int64_t y_stride,
                       int64_t j0) {
  for (int64_t mm = 0; mm < 16 && i0 + mm < m; ++mm)
    for (int64_t nn = 0; nn < rows_n; ++nn) y[(i0 + mm) * y_stride + j0 + nn] = buf[nn * 16 + mm];
}

// C tiles for weight rows [w0 .. w0 + 16·nt) (bf16, k contiguous, `ws` bytes apart; nt = 1 or 2)
// against every packed activation tile pair; writes y[:, j .. j + rows_n).
void amx_panel(const uint8_t* w0, int64_t ws, int nt, int64_t rows_n, const uint8_t* packed, int64_t steps,
               int64_t m, float* y, int64_t y_stride, int64_t j) {
  alignas(64) float buf[4][256];
  const uint8_t* w1 = w0 + 16 * ws;
  for (int64_t i = 0; i < m_pad(m); i += 32) {
    const uint8_t* b0 = packed + (i / 16) * steps * 1024;
    const uint8_t* b1 = b0 + steps * 1024;
    _tile_zero(0);
    _tile_zero(1);
    if (nt == 2) {
      _tile_zero(2);
      _tile_zero(3);
      for (int64_t s = 0; s < steps; ++s) {
        _tile_loadd(4, w0 + s * 64, ws);
        _tile_loadd(5, w1 + s * 64, ws);
        _tile_loadd(6, b0 + s * 1024, 64);
        _tile_loadd(7, b1 + s * 1024, 64);
        _tile_dpbf16ps(0, 4, 6);
        _tile_dpbf16ps(1, 4, 7);
        _tile_dpbf16ps(2, 5, 6);
        _tile_dpbf16ps(3, 5, 7);
      }
      _tile_stored(2, buf[2], 64);
      _tile_stored(3, buf[3], 64);
    } else {
      for (int64_t s = 0; s < steps; ++s) {
        _tile_loadd(4, w0 + s * 64, ws);
        _tile_loadd(6, b0 + s * 1024, 64);
        _tile_loadd(7, b1 + s * 1024, 64);
        _tile_dpbf16ps(0, 4, 6);
        _tile_dpbf16ps(1, 4, 7);
      }
    }
    _tile_stored(0, buf[0], 64);
    _tile_stored(1, buf[1], 64);
    write_back(buf[0], std::min<int64_t>(16, rows_n), i, m, y, y_stride, j);
    write_back(buf[1], std::min<int64_t>(16, rows_n), i + 16, m, y, y_stride, j);
    if (nt == 2) {
      write_back(buf[2], rows_n - 16, i, m, y, y_stride, j + 16);
      write_back(buf[3], rows_n - 16, i + 16, m, y, y_stride, j + 16);
    }
  }
}

void amx_decode_tile(const TileArgs& t);

void amx_tile(const TileArgs& t) {
  // Weights are read as A tiles straight from memory only when every row has whole 64-byte
  // k-steps; otherwise the last step would read past a row (and past the tensor's end), so such
  // shapes go through the panel path, which zero-pads.
  if (t.k % 32 != 0) return amx_decode_tile(t);
  const int64_t kp = k_pad(t.k), steps = kp / 32;
  const uint8_t* packed = t.a + row_part_bytes(t.m, t.k);
  load_config();
  int64_t j = 0;
  for (; j + 32 <= t.n; j += 32) amx_panel(t.w + j * t.w_stride, t.w_stride, 2, 32, packed, steps, t.m, t.y, t.y_stride, j);
  for (; j + 16 <= t.n; j += 16) amx_panel(t.w + j * t.w_stride, t.w_stride, 1, 16, packed, steps, t.m, t.y, t.y_stride, j);
  _tile_release();
  if (j < t.n) {  // fewer than 16 weight rows left: the vdpbf16ps kernel on the bf16 rows
    TileArgs r = t;
    r.w = t.w + j * t.w_stride;
    r.n = t.n - j;
    r.y = t.y + j;
    r.a_stride = kp * 2;
    avx512_bf16_rows(r);
  }
}

// Quantized weights, blocked for L2: per chunk of 128 activation rows and group of 128 weight
// rows, k goes in chunks of kKC; each k chunk of the group is decoded to bf16 once (rows past n
// and elements past k are zero) and multiplied against the chunk's packed activations, with the
// 16×16 C tiles parked in a small f32 buffer between k chunks.
void amx_decode_tile(const TileArgs& t) {
  constexpr int64_t kMChunk = 512, kNGroup = 128, kKC = 1024;  // kKC: a multiple of 256
  const int64_t kp = k_pad(t.k), steps = kp / 32;
  const DTypeTraits& tr = dtype_traits(t.wtype);
  const uint8_t* packed = t.a + row_part_bytes(t.m, t.k);
  // The pool thread's scratch: [kNGroup][kKC] bf16 panel, a decoded row, parked C tiles.
  uint16_t* panel = reinterpret_cast<uint16_t*>(t.scratch->get(kTileSlot0, kNGroup * kKC * sizeof(uint16_t)));
  float* row = reinterpret_cast<float*>(t.scratch->get(kTileSlot1, kKC * sizeof(float)));
  float* cacc = reinterpret_cast<float*>(t.scratch->get(kTileSlot2, kNGroup / 32 * kMChunk / 32 * 1024 * sizeof(float)));
  alignas(64) float buf[256];
  load_config();
  for (int64_t i0 = 0; i0 < t.m; i0 += kMChunk) {
    const int64_t mc = std::min(kMChunk, t.m - i0), mt_n = m_pad(mc) / 16;
    for (int64_t j0 = 0; j0 < t.n; j0 += kNGroup) {
      const int64_t ng = std::min(kNGroup, t.n - j0), at_n = (ng + 15) / 16;
      for (int64_t kc = 0; kc < kp; kc += kKC) {
        const int64_t kl = std::min(kKC, kp - kc), len = std::max<int64_t>(0, std::min(kl, t.k - kc));
        for (int64_t r = 0; r < at_n * 16; ++r) {
          uint16_t* dst = panel + r * kKC;
          if (r >= ng) {
            std::memset(dst, 0, size_t(kl) * 2);
            continue;
          }
          decode_row_impl(t.wtype, t.w + (j0 + r) * t.w_stride + kc / tr.block_elems * tr.block_bytes, row, len);
          for (int64_t c = 0; c < kl; c += 32) {
            const int64_t left = len - c;
            const __mmask16 m0 = left >= 16 ? 0xffff : left <= 0 ? 0 : __mmask16((1u << left) - 1);
            const __mmask16 m1 = left >= 32 ? 0xffff : left <= 16 ? 0 : __mmask16((1u << (left - 16)) - 1);
            const __m512 lo = _mm512_maskz_loadu_ps(m0, row + c);
            const __m512 hi = _mm512_maskz_loadu_ps(m1, row + c + 16);
            _mm512_storeu_si512(dst + c, (__m512i)_mm512_cvtne2ps_pbh(hi, lo));
          }
        }
        for (int64_t mt = 0; mt < mt_n; mt += 2)
          for (int64_t at = 0; at < at_n; at += 2) {
            const bool two_a = at + 1 < at_n;
            float* c = cacc + ((at / 2) * (kMChunk / 32) + mt / 2) * 1024;
            if (kc == 0) {
              _tile_zero(0);
              _tile_zero(1);
              _tile_zero(2);
              _tile_zero(3);
            } else {
              _tile_loadd(0, c, 64);
              _tile_loadd(1, c + 256, 64);
              _tile_loadd(2, c + 512, 64);
              _tile_loadd(3, c + 768, 64);
            }
            const uint16_t* a0 = panel + at * 16 * kKC;
            const uint16_t* a1 = a0 + 16 * kKC;
            const uint8_t* b0 = packed + ((i0 / 16 + mt) * steps + kc / 32) * 1024;
            const uint8_t* b1 = b0 + steps * 1024;
            for (int64_t s = 0; s < kl / 32; ++s) {
              _tile_loadd(4, a0 + s * 32, kKC * 2);
              _tile_loadd(6, b0 + s * 1024, 64);
              _tile_loadd(7, b1 + s * 1024, 64);
              _tile_dpbf16ps(0, 4, 6);
              _tile_dpbf16ps(1, 4, 7);
              if (two_a) {
                _tile_loadd(5, a1 + s * 32, kKC * 2);
                _tile_dpbf16ps(2, 5, 6);
                _tile_dpbf16ps(3, 5, 7);
              }
            }
            _tile_stored(0, c, 64);
            _tile_stored(1, c + 256, 64);
            _tile_stored(2, c + 512, 64);
            _tile_stored(3, c + 768, 64);
          }
      }
      // C tile q of block (at, mt): weight rows j0 + (at + q/2)·16 + nn, activation rows
      // i0 + (mt + q%2)·16 + mm, stored as [nn][mm].
      for (int64_t mt = 0; mt < mt_n; mt += 2)
        for (int64_t at = 0; at < at_n; at += 2)
          for (int q = 0; q < 4; ++q) {
            const int64_t wr = (at + q / 2) * 16, ar = (mt + q % 2) * 16;
            if (wr >= ng || ar >= mc) continue;
            std::memcpy(buf, cacc + ((at / 2) * (kMChunk / 32) + mt / 2) * 1024 + q * 256, sizeof(buf));
            write_back(buf, std::min<int64_t>(16, ng - wr), i0 + ar, t.m, t.y, t.y_stride, j0 + wr);
          }
    }
  }
  _tile_release();
}

}  // namespace

bool amx_tiles_permitted() {
  static const bool ok = [] {
    if (!cpu_features().amx_tile) return false;
    constexpr long kArchReqXcompPerm = 0x1023, kXfeatureXtiledata = 18;
    return syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0;
  }();
  return ok;
}

MatmulKernel avx512_amx_kernel(DType t) {
  MatmulKernel k;
  // BF16 weights at every number of activation rows (batch invariance: below 16 rows a tile is
  // mostly padding and vdpbf16ps was faster, but sums in another order). The quantized formats
  // keep to their own kernels at every size (the decode-to-bf16 path below was taken from 128
  // rows only). F32/F16 weights stay exact on the FMA kernels.
  if (t != DType::BF16) return k;
  if (!cpu_features().amx_bf16 || !amx_tiles_permitted()) return k;
  k.act_bytes_all = amx_act_bytes;
  k.prepare_all = amx_prepare;
  k.tile = amx_tile;
  return k;
}

}  // namespace oxyd::backend::cpu
