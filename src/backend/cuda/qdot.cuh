// Integer dot products of GGUF weight blocks (Q8_0, Q4_0, Q4_K, Q5_K, Q6_K, MXFP4) with activations
// quantized to 8 bits, for the CUDA gemv (matmul.cu). Host-and-device code: the same functions
// run in the kernel and in tests/cuda/qdot_host_test.cc on the CPU, so the bit logic is checked
// on machines without a GPU.
//
// Activations: x is cut into blocks of 32; a block with largest magnitude a has scale d = a/127
// and values q = round(x·127/a) in [-127, 127] (x̂ = d·q; an all-zero block has d = 0).
// A "unit" is 32 weight elements one thread decodes at once: one block of Q8_0 / Q4_0 / MXFP4; half of a
// Q4_K / Q5_K sub-block pair (16 elements of sub-block 2j and the 16 beside them in 2j + 1);
// 8 consecutive positions l0..l0+7 of the four 32-element quarters of a Q6_K half. Every format
// has k/32 units per row. The weight values are small integers (nibbles, 5- and 6-bit values,
// int8, MXFP4's doubled E2M1 values) and each group of them shares one float scale and offset, so a unit's sum is
//   Σ_groups d_x·(d_w·Σ w_int·q − m_w·Σ q)
// with the inner sums taken exactly by dp4a (4 int8 products per instruction): the result is
// the exact product with x̂ up to fp32 rounding of the few float terms. Weight bytes are loaded
// evict-first on the device (read once per call), as wide as the block's alignment allows.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include "core/dtype.h"
#include "core/half.h"

#if defined(__CUDACC__)
#include <cuda_fp16.h>
#define OXYD_QD __host__ __device__ __forceinline__
#else
#define OXYD_QD inline
#endif
#if defined(__CUDA_ARCH__)
#define OXYD_QD_UNROLL _Pragma("unroll")
#else
#define OXYD_QD_UNROLL
#endif

namespace oxyd::backend::cuda::qdot {

inline constexpr int kXBlock = 32;  // activation elements per scale
inline constexpr int kUnit = 32;    // weight elements per unit

// ---- primitives ---------------------------------------------------------------------------

/// c + Σ_i int8(a_i)·int8(b_i) over the 4 bytes of a and b.
OXYD_QD int dp4a(uint32_t a, uint32_t b, int c) {
#if defined(__CUDA_ARCH__)
  return __dp4a(int(a), int(b), c);
#else
  for (int i = 0; i < 4; ++i) c += int(int8_t(uint8_t(a >> (8 * i)))) * int(int8_t(uint8_t(b >> (8 * i))));
  return c;
#endif
}

/// Σ of the 4 int8 values of b, plus c.
OXYD_QD int sum4(uint32_t b, int c) { return dp4a(0x01010101u, b, c); }

OXYD_QD float f16(uint16_t h) {
#if defined(__CUDA_ARCH__)
  return __half2float(__ushort_as_half(h));
#else
  return f16_to_f32(h);
#endif
}

/// N bytes (N % 4 == 0) of weights at p, which is A-byte aligned (1, 2, 4, 8 or 16), as N/4 words.
template <int A, int N> OXYD_QD void load_w(const uint8_t* p, uint32_t (&w)[N / 4]) {
#if defined(__CUDA_ARCH__)
  if constexpr (A >= 16 && N % 16 == 0) {
OXYD_QD_UNROLL
    for (int i = 0; i < N / 16; ++i) {
      const uint4 v = __ldcs(reinterpret_cast<const uint4*>(p) + i);
      w[4 * i] = v.x, w[4 * i + 1] = v.y, w[4 * i + 2] = v.z, w[4 * i + 3] = v.w;
    }
  } else if constexpr (A >= 8 && N % 8 == 0) {
OXYD_QD_UNROLL
    for (int i = 0; i < N / 8; ++i) {
      const uint2 v = __ldcs(reinterpret_cast<const uint2*>(p) + i);
      w[2 * i] = v.x, w[2 * i + 1] = v.y;
    }
  } else if constexpr (A >= 4) {
OXYD_QD_UNROLL
    for (int i = 0; i < N / 4; ++i) w[i] = __ldcs(reinterpret_cast<const unsigned int*>(p) + i);
  } else if constexpr (A == 1) {
OXYD_QD_UNROLL
    for (int i = 0; i < N / 4; ++i)
      w[i] = uint32_t(p[4 * i]) | uint32_t(p[4 * i + 1]) << 8 | uint32_t(p[4 * i + 2]) << 16 |
             uint32_t(p[4 * i + 3]) << 24;
  } else {
    static_assert(A == 2, "weight loads: alignment 1, 2, 4, 8 or 16");
    const unsigned short* h = reinterpret_cast<const unsigned short*>(p);
OXYD_QD_UNROLL
    for (int i = 0; i < N / 4; ++i) w[i] = uint32_t(__ldcs(h + 2 * i)) | uint32_t(__ldcs(h + 2 * i + 1)) << 16;
  }
#else
  std::memcpy(w, p, N);
#endif
}

OXYD_QD uint16_t load_w16(const uint8_t* p) {  // p 2-byte aligned
#if defined(__CUDA_ARCH__)
  return __ldcs(reinterpret_cast<const unsigned short*>(p));
#else
  uint16_t v;
  std::memcpy(&v, p, 2);
  return v;
#endif
}

/// N bytes of quantized activations at p as N/4 words: N = 8 (p 8-byte aligned) or a multiple
/// of 16 (p 16-byte aligned). Activations are reused by every weight row of a gemv block, so
/// they are read through the read-only cache.
template <int N> OXYD_QD void load_xq(const int8_t* p, uint32_t* w) {
#if defined(__CUDA_ARCH__)
  if constexpr (N % 16 == 0) {
OXYD_QD_UNROLL
    for (int i = 0; i < N / 16; ++i) {
      const uint4 v = __ldg(reinterpret_cast<const uint4*>(p) + i);
      w[4 * i] = v.x, w[4 * i + 1] = v.y, w[4 * i + 2] = v.z, w[4 * i + 3] = v.w;
    }
  } else {
    static_assert(N == 8, "8 or a multiple of 16 bytes");
    const uint2 v = __ldg(reinterpret_cast<const uint2*>(p));
    w[0] = v.x, w[1] = v.y;
  }
#else
  std::memcpy(w, p, N);
#endif
}

OXYD_QD float load_d(const float* p) {
#if defined(__CUDA_ARCH__)
  return __ldg(p);
#else
  return *p;
#endif
}

/// The bytes of (b:a) that the low 3 bits of the four selector nibbles of s name (PTX prmt with
/// selectors < 8).
OXYD_QD uint32_t byte_perm(uint32_t a, uint32_t b, uint32_t s) {
#if defined(__CUDA_ARCH__)
  return __byte_perm(a, b, s);
#else
  const uint64_t ab = uint64_t(b) << 32 | a;
  uint32_t r = 0;
  for (int i = 0; i < 4; ++i) r |= uint32_t((ab >> (8 * ((s >> (4 * i)) & 7))) & 0xFF) << (8 * i);
  return r;
#endif
}

/// Byte i (0..3, run-time) of w.
OXYD_QD uint32_t byte_of(uint32_t w, int i) { return (w >> (8 * i)) & 0xFFu; }

// ---- activations --------------------------------------------------------------------------

/// Scale of an activation block whose largest magnitude is amax, and its reciprocal.
struct XScale {
  float d, id;
};
OXYD_QD XScale x_scale(float amax) {
  return amax > 0.0f ? XScale{amax / 127.0f, 127.0f / amax} : XScale{0.0f, 0.0f};
}
/// round(v·id) to nearest even, within [-127, 127].
OXYD_QD int x_round(float v, float id) {
  const float t = v * id;
#if defined(__CUDA_ARCH__)
  const int q = __float2int_rn(t);
#else
  const int q = int(std::nearbyint(t));
#endif
  return q < -127 ? -127 : q > 127 ? 127 : q;
}

/// One unit's activations: 32 int8 values in the order the format's dot() takes them, and the
/// scales of the (up to 4) activation blocks they come from.
struct XUnit {
  uint32_t q[8];
  float d[4];
};

OXYD_QD void zero(XUnit& x) {
  for (int i = 0; i < 8; ++i) x.q[i] = 0;
  for (int i = 0; i < 4; ++i) x.d[i] = 0.0f;
}

// ---- formats ------------------------------------------------------------------------------
// Each: kBlockElems / kBlockBytes (core/dtype.h), kUnitsPerBlock, kAlign (the alignment its
// loads need of every row start), load_x(xq, xd, u, XUnit&) for a
// row's quantized activations xq [k] and scales xd [k/32], and dot<M>(row, u, x[M], acc[M]) that
// adds unit u of weight row `row` times each of M activation rows' units into acc.

/// A unit that is one whole 32-element block: x is activation block u.
OXYD_QD void load_x_block(const int8_t* xq, const float* xd, int u, XUnit& x) {
  load_xq<32>(xq + int64_t(u) * 32, x.q);
  x.d[0] = load_d(xd + u);
}

struct Q8_0 {
  static constexpr int kBlockElems = 32, kBlockBytes = 34, kUnitsPerBlock = 1, kAlign = 2;
  OXYD_QD static void load_x(const int8_t* xq, const float* xd, int u, XUnit& x) { load_x_block(xq, xd, u, x); }
  template <int M> OXYD_QD static void dot(const uint8_t* row, int u, const XUnit (&x)[M], float (&acc)[M]) {
    const uint8_t* b = row + int64_t(u) * kBlockBytes;
    const float d = f16(load_w16(b));
    uint32_t w[8];
    load_w<2, 32>(b + 2, w);
OXYD_QD_UNROLL
    for (int r = 0; r < M; ++r) {
      int s = 0;
OXYD_QD_UNROLL
      for (int i = 0; i < 8; ++i) s = dp4a(w[i], x[r].q[i], s);
      acc[r] += d * x[r].d[0] * float(s);
    }
  }
};

// Q4_0: element j < 16 is the low nibble of byte j, element j + 16 its high nibble; value − 8.
struct Q4_0 {
  static constexpr int kBlockElems = 32, kBlockBytes = 18, kUnitsPerBlock = 1, kAlign = 2;
  OXYD_QD static void load_x(const int8_t* xq, const float* xd, int u, XUnit& x) { load_x_block(xq, xd, u, x); }
  template <int M> OXYD_QD static void dot(const uint8_t* row, int u, const XUnit (&x)[M], float (&acc)[M]) {
    const uint8_t* b = row + int64_t(u) * kBlockBytes;
    const float d = f16(load_w16(b));
    uint32_t w[4];
    load_w<2, 16>(b + 2, w);
    uint32_t lo[4], hi[4];
OXYD_QD_UNROLL
    for (int i = 0; i < 4; ++i) lo[i] = w[i] & 0x0F0F0F0Fu, hi[i] = (w[i] >> 4) & 0x0F0F0F0Fu;
OXYD_QD_UNROLL
    for (int r = 0; r < M; ++r) {
      int s = 0, xs = 0;
OXYD_QD_UNROLL
      for (int i = 0; i < 4; ++i) {
        s = dp4a(lo[i], x[r].q[i], s);
        s = dp4a(hi[i], x[r].q[4 + i], s);
        xs = sum4(x[r].q[i], sum4(x[r].q[4 + i], xs));
      }
      acc[r] += d * x[r].d[0] * float(s - 8 * xs);
    }
  }
};

/// Q4_K / Q5_K: the 6-bit scales (byte i) and mins (byte i) of sub-blocks 4h .. 4h+3 (h = 0, 1)
/// from the 16-byte header words hw (d, dmin, 12 scale bytes: core/quant.h get_scale_min_k4).
OXYD_QD void scale_min_words(const uint32_t (&hw)[4], bool high, uint32_t& sc, uint32_t& mn) {
  if (!high) {
    sc = hw[1] & 0x3F3F3F3Fu;
    mn = hw[2] & 0x3F3F3F3Fu;
  } else {
    sc = (hw[3] & 0x0F0F0F0Fu) | ((hw[1] >> 2) & 0x30303030u);
    mn = ((hw[3] >> 4) & 0x0F0F0F0Fu) | ((hw[2] >> 2) & 0x30303030u);
  }
}

/// Q4_K / Q5_K unit u: super-block s = u/8, sub-block pair j = (u%8)/2, half t = u%2.
OXYD_QD void load_x_kpair(const int8_t* xq, const float* xd, int u, XUnit& x) {
  const int s = u >> 3, j = (u & 7) >> 1, t = u & 1;
  const int64_t b0 = int64_t(s) * 8 + 2 * j;  // activation block of sub-block 2j
  load_xq<16>(xq + b0 * 32 + 16 * t, x.q);
  load_xq<16>(xq + (b0 + 1) * 32 + 16 * t, x.q + 4);
  x.d[0] = load_d(xd + b0);
  x.d[1] = load_d(xd + b0 + 1);
}

/// The two sub-blocks' sums of a Q4_K / Q5_K unit: lo / hi the 16 values (0..31) of sub-blocks
/// 2j / 2j+1, header words hw.
template <int M>
OXYD_QD void kpair_dot(const uint32_t (&hw)[4], int j, const uint32_t (&lo)[4], const uint32_t (&hi)[4],
                       const XUnit (&x)[M], float (&acc)[M]) {
  const float d = f16(uint16_t(hw[0])), dmin = f16(uint16_t(hw[0] >> 16));
  uint32_t sc, mn;
  scale_min_words(hw, j >= 2, sc, mn);
  const int i0 = (2 * j) & 3;
  const float dl0 = d * float(byte_of(sc, i0)), ml0 = dmin * float(byte_of(mn, i0));
  const float dl1 = d * float(byte_of(sc, i0 + 1)), ml1 = dmin * float(byte_of(mn, i0 + 1));
OXYD_QD_UNROLL
  for (int r = 0; r < M; ++r) {
    int s0 = 0, s1 = 0, x0 = 0, x1 = 0;
OXYD_QD_UNROLL
    for (int i = 0; i < 4; ++i) {
      s0 = dp4a(lo[i], x[r].q[i], s0);
      s1 = dp4a(hi[i], x[r].q[4 + i], s1);
      x0 = sum4(x[r].q[i], x0);
      x1 = sum4(x[r].q[4 + i], x1);
    }
    acc[r] += x[r].d[0] * (dl0 * float(s0) - ml0 * float(x0)) + x[r].d[1] * (dl1 * float(s1) - ml1 * float(x1));
  }
}

// Q4_K super-block (144 bytes): header (d, dmin, scales) 16, qs[128]: bytes 32j..32j+31 hold
// sub-block 2j in their low nibbles and 2j+1 in their high ones.
struct Q4_K {
  static constexpr int kBlockElems = 256, kBlockBytes = 144, kUnitsPerBlock = 8, kAlign = 16;
  OXYD_QD static void load_x(const int8_t* xq, const float* xd, int u, XUnit& x) { load_x_kpair(xq, xd, u, x); }
  template <int M> OXYD_QD static void dot(const uint8_t* row, int u, const XUnit (&x)[M], float (&acc)[M]) {
    const int j = (u & 7) >> 1, t = u & 1;
    const uint8_t* b = row + int64_t(u >> 3) * kBlockBytes;
    uint32_t hw[4], w[4];
    load_w<16, 16>(b, hw);
    load_w<16, 16>(b + 16 + 32 * j + 16 * t, w);
    uint32_t lo[4], hi[4];
OXYD_QD_UNROLL
    for (int i = 0; i < 4; ++i) lo[i] = w[i] & 0x0F0F0F0Fu, hi[i] = (w[i] >> 4) & 0x0F0F0F0Fu;
    kpair_dot<M>(hw, j, lo, hi, x, acc);
  }
};

// Q5_K super-block (176 bytes): header 16, qh[32] (bit sb of qh[l]: the fifth bit of element l of
// sub-block sb), qs[128] as Q4_K's.
struct Q5_K {
  static constexpr int kBlockElems = 256, kBlockBytes = 176, kUnitsPerBlock = 8, kAlign = 16;
  OXYD_QD static void load_x(const int8_t* xq, const float* xd, int u, XUnit& x) { load_x_kpair(xq, xd, u, x); }
  template <int M> OXYD_QD static void dot(const uint8_t* row, int u, const XUnit (&x)[M], float (&acc)[M]) {
    const int j = (u & 7) >> 1, t = u & 1;
    const uint8_t* b = row + int64_t(u >> 3) * kBlockBytes;
    uint32_t hw[4], w[4], h[4];
    load_w<16, 16>(b, hw);
    load_w<16, 16>(b + 16 + 16 * t, h);
    load_w<16, 16>(b + 48 + 32 * j + 16 * t, w);
    uint32_t lo[4], hi[4];
OXYD_QD_UNROLL
    for (int i = 0; i < 4; ++i) {
      lo[i] = (w[i] & 0x0F0F0F0Fu) | (((h[i] >> (2 * j)) & 0x01010101u) << 4);
      hi[i] = ((w[i] >> 4) & 0x0F0F0F0Fu) | (((h[i] >> (2 * j + 1)) & 0x01010101u) << 4);
    }
    kpair_dot<M>(hw, j, lo, hi, x, acc);
  }
};

// Q6_K super-block (210 bytes, 2-byte aligned): ql[128], qh[64], scales[16] (int8), d (f16).
// In half hh, element 128hh + 32g + l (g = 0..3, l = 0..31) is the low (g = 0, 1) or high
// (g = 2, 3) nibble of ql[64hh + 32(g&1) + l] with bits 2g, 2g+1 of qh[32hh + l] above it,
// minus 32, times scales[8hh + 2g + l/16]. Unit u: super-block u/8, hh = (u%8)/4, l0 = 8(u%4).
struct Q6_K {
  static constexpr int kBlockElems = 256, kBlockBytes = 210, kUnitsPerBlock = 8, kAlign = 2;
  OXYD_QD static void load_x(const int8_t* xq, const float* xd, int u, XUnit& x) {
    const int hh = (u & 7) >> 2, l0 = 8 * (u & 3);
    const int64_t b0 = int64_t(u >> 3) * 8 + 4 * hh;  // activation block of g = 0
OXYD_QD_UNROLL
    for (int g = 0; g < 4; ++g) {
      load_xq<8>(xq + (b0 + g) * 32 + l0, x.q + 2 * g);
      x.d[g] = load_d(xd + b0 + g);
    }
  }
  template <int M> OXYD_QD static void dot(const uint8_t* row, int u, const XUnit (&x)[M], float (&acc)[M]) {
    const int hh = (u & 7) >> 2, l0 = 8 * (u & 3);
    const uint8_t* b = row + int64_t(u >> 3) * kBlockBytes;
    uint32_t qa[2], qb[2], qh[2];
    load_w<2, 8>(b + 64 * hh + l0, qa);
    load_w<2, 8>(b + 64 * hh + 32 + l0, qb);
    load_w<2, 8>(b + 128 + 32 * hh + l0, qh);
    const float d = f16(load_w16(b + 208));
    const uint8_t* sc = b + 192 + 8 * hh + (l0 >> 4);
    uint32_t v[4][2];
    float dg[4];
OXYD_QD_UNROLL
    for (int g = 0; g < 4; ++g) {
#if defined(__CUDA_ARCH__)
      dg[g] = d * float(int8_t(__ldcs(reinterpret_cast<const signed char*>(sc + 2 * g))));
#else
      dg[g] = d * float(int8_t(sc[2 * g]));
#endif
OXYD_QD_UNROLL
      for (int i = 0; i < 2; ++i) {
        const uint32_t nib = ((g & 1) ? qb[i] : qa[i]) >> (4 * (g >> 1));
        v[g][i] = (nib & 0x0F0F0F0Fu) | (((qh[i] >> (2 * g)) & 0x03030303u) << 4);
      }
    }
OXYD_QD_UNROLL
    for (int r = 0; r < M; ++r) {
      float sum = 0.0f;
OXYD_QD_UNROLL
      for (int g = 0; g < 4; ++g) {
        const int s = dp4a(v[g][1], x[r].q[2 * g + 1], dp4a(v[g][0], x[r].q[2 * g], 0));
        const int xs = sum4(x[r].q[2 * g + 1], sum4(x[r].q[2 * g], 0));
        sum += x[r].d[g] * dg[g] * float(s - 32 * xs);
      }
      acc[r] += sum;
    }
  }
};

/// Four E2M1 codes (bytes of c, each 0..15: bit 3 the sign, bits 0-2 the magnitude code) → their
/// values times 2 as int8 (core/quant.h kMXFP4Values: 0, 1, 2, 3, 4, 6, 8, 12), by table lookup.
OXYD_QD uint32_t e2m1x2(uint32_t c) {
  const uint32_t v = c & 0x07070707u, t = v | (v >> 4);
  const uint32_t sel = (t & 0xFFu) | ((t >> 8) & 0xFF00u);            // one selector nibble per byte
  const uint32_t pos = byte_perm(0x03020100u, 0x0C080604u, sel);       // 0 1 2 3 | 4 6 8 12
  const uint32_t neg = byte_perm(0xFDFEFF00u, 0xF4F8FAFCu, sel);       // their negations
  const uint32_t sign = ((c & 0x08080808u) >> 3) * 0xFFu;              // 0xFF in the negative bytes
  return (pos & ~sign) | (neg & sign);
}

// MXFP4 (gpt-oss experts; 17 bytes, byte aligned): E8M0 exponent e, qs[16] with element j < 16 in
// the low nibble of byte j and j + 16 in its high nibble; scale 2^(e−128) for the doubled values
// (core/quant.h e8m0_to_f32_half: e < 2 as subnormals).
struct MXFP4 {
  static constexpr int kBlockElems = 32, kBlockBytes = 17, kUnitsPerBlock = 1, kAlign = 1;
  OXYD_QD static void load_x(const int8_t* xq, const float* xd, int u, XUnit& x) { load_x_block(xq, xd, u, x); }
  template <int M> OXYD_QD static void dot(const uint8_t* row, int u, const XUnit (&x)[M], float (&acc)[M]) {
    const uint8_t* b = row + int64_t(u) * kBlockBytes;
    const uint32_t e = b[0];
    const uint32_t bits = e < 2 ? (0x00200000u << e) : ((e - 1) << 23);
    float d;
    std::memcpy(&d, &bits, 4);
    uint32_t w[4];
    load_w<1, 16>(b + 1, w);
    uint32_t lo[4], hi[4];
OXYD_QD_UNROLL
    for (int i = 0; i < 4; ++i) lo[i] = e2m1x2(w[i] & 0x0F0F0F0Fu), hi[i] = e2m1x2((w[i] >> 4) & 0x0F0F0F0Fu);
OXYD_QD_UNROLL
    for (int r = 0; r < M; ++r) {
      int s = 0;
OXYD_QD_UNROLL
      for (int i = 0; i < 4; ++i) s = dp4a(hi[i], x[r].q[4 + i], dp4a(lo[i], x[r].q[i], s));
      acc[r] += d * x[r].d[0] * float(s);
    }
  }
};

/// Host-side: calls f(Format{}) for the weight dtypes with an integer gemv; false otherwise.
template <typename F> bool dispatch(DType t, F&& f) {
  switch (t) {
    case DType::Q8_0: f(Q8_0{}); return true;
    case DType::Q4_0: f(Q4_0{}); return true;
    case DType::Q4_K: f(Q4_K{}); return true;
    case DType::Q5_K: f(Q5_K{}); return true;
    case DType::Q6_K: f(Q6_K{}); return true;
    case DType::MXFP4: f(MXFP4{}); return true;
    default: return false;
  }
}

}  // namespace oxyd::backend::cuda::qdot
