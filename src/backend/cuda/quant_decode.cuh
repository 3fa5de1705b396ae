// Device decoders of the GGUF weight blocks (layouts: core/dtype.h Block* structs, CPU decoders:
// core/quant_dequant.cc). Each format decodes one "piece" of a weight row into kPiece floats:
// one 32-element block (Q8_0, Q4_0, MXFP4), one 32-element sub-block of a 256-element super-block
// (Q4_K, Q5_K, Q6_K), or 8 elements (F16, BF16: one 16-byte load). The float operations are the
// CPU decoder's, in its order and without FMA contraction (__fmul_rn / __fsub_rn), so a decoded
// value is bit-identical to dequantize_row's. kAlign is the byte alignment every block start
// has when the row starts 16-byte aligned; loads are as wide as that alignment allows.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "core/dtype.h"

namespace oxyd::backend::cuda {

__device__ __forceinline__ float half_bits_to_float(uint16_t h) {
  return __half2float(__ushort_as_half(h));
}
__device__ __forceinline__ uint16_t load_u16(const uint8_t* p) {  // p 2-byte aligned
  return *reinterpret_cast<const uint16_t*>(p);
}

/// Loads N bytes (N % 16 == 0) from p, which is A-byte aligned (1, 2 or 16), as N/4 words.
template <int N, int A> __device__ __forceinline__ void load_words(const uint8_t* p, uint32_t (&w)[N / 4]) {
  static_assert(N % 16 == 0, "whole 16-byte groups only");
  if constexpr (A >= 16) {
#pragma unroll
    for (int i = 0; i < N / 16; ++i) {
      const uint4 v = reinterpret_cast<const uint4*>(p)[i];
      w[4 * i] = v.x, w[4 * i + 1] = v.y, w[4 * i + 2] = v.z, w[4 * i + 3] = v.w;
    }
  } else if constexpr (A >= 2) {
    const uint16_t* h = reinterpret_cast<const uint16_t*>(p);
#pragma unroll
    for (int i = 0; i < N / 4; ++i) w[i] = uint32_t(h[2 * i]) | uint32_t(h[2 * i + 1]) << 16;
  } else {
#pragma unroll
    for (int i = 0; i < N / 4; ++i)
      w[i] = uint32_t(p[4 * i]) | uint32_t(p[4 * i + 1]) << 8 | uint32_t(p[4 * i + 2]) << 16 |
             uint32_t(p[4 * i + 3]) << 24;
  }
}

/// Loads 8 bytes from p, which is A-byte aligned (1, 2 or 8), as two words. Weight bytes are read
/// once per gemv, so they are loaded evict-first (ld.global.cs) to leave L1 to the activations.
template <int A> __device__ __forceinline__ void load8(const uint8_t* p, uint32_t (&w)[2]) {
  if constexpr (A >= 8) {
    const uint2 v = __ldcs(reinterpret_cast<const uint2*>(p));
    w[0] = v.x, w[1] = v.y;
  } else if constexpr (A >= 2) {
    const unsigned short* h = reinterpret_cast<const unsigned short*>(p);
    w[0] = uint32_t(__ldcs(h)) | uint32_t(__ldcs(h + 1)) << 16;
    w[1] = uint32_t(__ldcs(h + 2)) | uint32_t(__ldcs(h + 3)) << 16;
  } else {
#pragma unroll
    for (int i = 0; i < 2; ++i)
      w[i] = uint32_t(p[4 * i]) | uint32_t(p[4 * i + 1]) << 8 | uint32_t(p[4 * i + 2]) << 16 |
             uint32_t(p[4 * i + 3]) << 24;
  }
}

/// Byte j of a word array (j a compile-time constant after unrolling).
template <int N> __device__ __forceinline__ uint32_t byte_at(const uint32_t (&w)[N], int j) {
  return (w[j >> 2] >> (8 * (j & 3))) & 0xFFu;
}

template <DType kType> struct Decoder;

template <> struct Decoder<DType::Q8_0> {
  static constexpr int kBlockElems = 32, kBlockBytes = 34, kPiece = 32, kAlign = 2;
  __device__ static void decode(const uint8_t* row, int64_t piece, float (&y)[kPiece]) {
    const uint8_t* b = row + piece * kBlockBytes;
    const float d = half_bits_to_float(load_u16(b));
    uint32_t q[8];
    load_words<32, 2>(b + 2, q);
#pragma unroll
    for (int j = 0; j < 32; ++j) y[j] = __fmul_rn(d, float(int8_t(byte_at(q, j))));
  }
  // decode8: elements 8c .. 8c+7 of the row (one quarter of block c/4).
  __device__ static void decode8(const uint8_t* row, int64_t c, float (&y)[8]) {
    const uint8_t* b = row + (c >> 2) * kBlockBytes;
    const float d = half_bits_to_float(__ldcs(reinterpret_cast<const unsigned short*>(b)));
    uint32_t q[2];
    load8<2>(b + 2 + 8 * (c & 3), q);
#pragma unroll
    for (int j = 0; j < 8; ++j) y[j] = __fmul_rn(d, float(int8_t(byte_at(q, j))));
  }
};

template <> struct Decoder<DType::Q4_0> {
  static constexpr int kBlockElems = 32, kBlockBytes = 18, kPiece = 32, kAlign = 2;
  __device__ static void decode(const uint8_t* row, int64_t piece, float (&y)[kPiece]) {
    const uint8_t* b = row + piece * kBlockBytes;
    const float d = half_bits_to_float(load_u16(b));
    uint32_t q[4];
    load_words<16, 2>(b + 2, q);
#pragma unroll
    for (int j = 0; j < 16; ++j) {
      const int v = int(byte_at(q, j));
      y[j] = __fmul_rn(d, float((v & 0xF) - 8));
      y[j + 16] = __fmul_rn(d, float((v >> 4) - 8));
    }
  }
  // Quarter j of a block: low nibbles of bytes 0-7 / 8-15, then high nibbles of bytes 0-7 / 8-15.
  __device__ static void decode8(const uint8_t* row, int64_t c, float (&y)[8]) {
    const uint8_t* b = row + (c >> 2) * kBlockBytes;
    const int j = int(c & 3), shift = 4 * (j >> 1);
    const float d = half_bits_to_float(__ldcs(reinterpret_cast<const unsigned short*>(b)));
    uint32_t q[2];
    load8<2>(b + 2 + 8 * (j & 1), q);
#pragma unroll
    for (int l = 0; l < 8; ++l) y[l] = __fmul_rn(d, float(int((byte_at(q, l) >> shift) & 0xF) - 8));
  }
};

/// MXFP4 E2M1 code (4 bits) times 2, as kMXFP4Values in core/quant.h: 0,1,2,3,4,6,8,12, sign bit 8.
__device__ __forceinline__ float mxfp4_value(uint32_t c) {
  const int m = int(c & 7);
  const int mag = m < 4 ? m : (2 | (m & 1)) << ((m >> 1) - 1);
  return float((c & 8) ? -mag : mag);
}

template <> struct Decoder<DType::MXFP4> {
  static constexpr int kBlockElems = 32, kBlockBytes = 17, kPiece = 32, kAlign = 1;
  __device__ static void decode(const uint8_t* row, int64_t piece, float (&y)[kPiece]) {
    const uint8_t* b = row + piece * kBlockBytes;
    const uint32_t e = b[0];
    // 2^(e-128), e < 2 as subnormals: core/quant.h e8m0_to_f32_half.
    const float d = __uint_as_float(e < 2 ? (0x00200000u << e) : ((e - 1) << 23));
    uint32_t q[4];
    load_words<16, 1>(b + 1, q);
#pragma unroll
    for (int j = 0; j < 16; ++j) {
      const uint32_t v = byte_at(q, j);
      y[j] = __fmul_rn(d, mxfp4_value(v & 0xF));
      y[j + 16] = __fmul_rn(d, mxfp4_value(v >> 4));
    }
  }
  __device__ static void decode8(const uint8_t* row, int64_t c, float (&y)[8]) {
    const uint8_t* b = row + (c >> 2) * kBlockBytes;
    const int j = int(c & 3), shift = 4 * (j >> 1);
    const uint32_t e = b[0];
    const float d = __uint_as_float(e < 2 ? (0x00200000u << e) : ((e - 1) << 23));
    uint32_t q[2];
    load8<1>(b + 1 + 8 * (j & 1), q);
#pragma unroll
    for (int l = 0; l < 8; ++l) y[l] = __fmul_rn(d, mxfp4_value((byte_at(q, l) >> shift) & 0xF));
  }
};

/// Q4_K / Q5_K 6-bit scale and min of sub-block j from the 12 scale bytes at q (core/quant.h).
__device__ __forceinline__ void scale_min_k4(int j, const uint8_t* q, float& sc, float& m) {
  if (j < 4) {
    sc = float(q[j] & 63);
    m = float(q[j + 4] & 63);
  } else {
    sc = float((q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4));
    m = float((q[j + 4] >> 4) | ((q[j] >> 6) << 4));
  }
}

/// Byte i (0..15, run-time) of a 16-byte K-quant header (d, dmin, 12 scale bytes) held in registers.
__device__ __forceinline__ uint32_t header_byte(const uint4& h, int i) {
  const uint32_t w = i < 4 ? h.x : i < 8 ? h.y : i < 12 ? h.z : h.w;
  return (w >> (8 * (i & 3))) & 0xFFu;
}

/// scale_min_k4 on a header loaded whole (its 12 scale bytes are header bytes 4..15), without a
/// branch: lanes of a gemv warp hold different sub-blocks j, and a branch would both diverge and
/// keep the compiler from hoisting the next rows' loads above it.
__device__ __forceinline__ void scale_min_k4(int j, const uint4& h, float& sc, float& m) {
  const uint32_t a = header_byte(h, 4 + j), b = header_byte(h, 8 + j), c = header_byte(h, j);
  // j < 4: a = q[j], b = q[j + 4]. j >= 4: a = q[j], b = q[j + 4], c = q[j - 4].
  const bool lo = j < 4;
  sc = float(lo ? (a & 63) : ((b & 0xF) | ((c >> 6) << 4)));
  m = float(lo ? (b & 63) : ((b >> 4) | ((a >> 6) << 4)));
}

/// 8 bytes at a 2-byte aligned p in the widest loads p's alignment allows. Use only where the
/// alignment is the same for all lanes of a warp (else both paths run): Q6_K, whose gemv warp
/// reads within one super-block of one row.
__device__ __forceinline__ void load8_uniform(const uint8_t* p, uint32_t (&w)[2]) {
  const uintptr_t a = reinterpret_cast<uintptr_t>(p);
  if ((a & 7) == 0) {
    load8<8>(p, w);
  } else if ((a & 3) == 0) {
    const unsigned int* u = reinterpret_cast<const unsigned int*>(p);
    w[0] = __ldcs(u), w[1] = __ldcs(u + 1);
  } else {
    load8<2>(p, w);
  }
}

template <> struct Decoder<DType::Q4_K> {
  static constexpr int kBlockElems = 256, kBlockBytes = 144, kPiece = 32, kAlign = 16;
  __device__ static void decode(const uint8_t* row, int64_t piece, float (&y)[kPiece]) {
    const uint8_t* b = row + (piece >> 3) * kBlockBytes;
    const int sb = int(piece & 7);
    const float d = half_bits_to_float(load_u16(b)), dmin = half_bits_to_float(load_u16(b + 2));
    float sc, m;
    scale_min_k4(sb, b + 4, sc, m);
    const float dl = __fmul_rn(d, sc), ml = __fmul_rn(dmin, m);
    uint32_t q[8];
    load_words<32, 16>(b + 16 + 32 * (sb >> 1), q);
    const int shift = 4 * (sb & 1);
#pragma unroll
    for (int l = 0; l < 32; ++l)
      y[l] = __fsub_rn(__fmul_rn(dl, float((byte_at(q, l) >> shift) & 0xF)), ml);
  }
  // decode8: chunk s = c % 32 of super-block c / 32: sub-block s / 4, its elements 8·(s % 4) + l.
  __device__ static void decode8(const uint8_t* row, int64_t c, float (&y)[8]) {
    const uint8_t* b = row + (c >> 5) * kBlockBytes;
    const int sb = int(c & 31) >> 2, l0 = 8 * int(c & 3);
    const uint4 hd = __ldcs(reinterpret_cast<const uint4*>(b));  // d, dmin, scales: one load
    const float d = half_bits_to_float(uint16_t(hd.x)), dmin = half_bits_to_float(uint16_t(hd.x >> 16));
    float sc, m;
    scale_min_k4(sb, hd, sc, m);
    const float dl = __fmul_rn(d, sc), ml = __fmul_rn(dmin, m);
    uint32_t q[2];
    load8<8>(b + 16 + 32 * (sb >> 1) + l0, q);
    const int shift = 4 * (sb & 1);
#pragma unroll
    for (int l = 0; l < 8; ++l)
      y[l] = __fsub_rn(__fmul_rn(dl, float((byte_at(q, l) >> shift) & 0xF)), ml);
  }
};

template <> struct Decoder<DType::Q5_K> {
  static constexpr int kBlockElems = 256, kBlockBytes = 176, kPiece = 32, kAlign = 16;
  __device__ static void decode(const uint8_t* row, int64_t piece, float (&y)[kPiece]) {
    const uint8_t* b = row + (piece >> 3) * kBlockBytes;
    const int sb = int(piece & 7);
    const float d = half_bits_to_float(load_u16(b)), dmin = half_bits_to_float(load_u16(b + 2));
    float sc, m;
    scale_min_k4(sb, b + 4, sc, m);
    const float dl = __fmul_rn(d, sc), ml = __fmul_rn(dmin, m);
    uint32_t q[8], h[8];
    load_words<32, 16>(b + 48 + 32 * (sb >> 1), q);
    load_words<32, 16>(b + 16, h);
    const int shift = 4 * (sb & 1);
#pragma unroll
    for (int l = 0; l < 32; ++l) {
      const uint32_t v = ((byte_at(q, l) >> shift) & 0xF) | (((byte_at(h, l) >> sb) & 1) << 4);
      y[l] = __fsub_rn(__fmul_rn(dl, float(v)), ml);
    }
  }
  __device__ static void decode8(const uint8_t* row, int64_t c, float (&y)[8]) {
    const uint8_t* b = row + (c >> 5) * kBlockBytes;
    const int sb = int(c & 31) >> 2, l0 = 8 * int(c & 3);
    const uint4 hd = __ldcs(reinterpret_cast<const uint4*>(b));  // d, dmin, scales: one load
    const float d = half_bits_to_float(uint16_t(hd.x)), dmin = half_bits_to_float(uint16_t(hd.x >> 16));
    float sc, m;
    scale_min_k4(sb, hd, sc, m);
    const float dl = __fmul_rn(d, sc), ml = __fmul_rn(dmin, m);
    uint32_t q[2], h[2];
    load8<8>(b + 48 + 32 * (sb >> 1) + l0, q);
    load8<8>(b + 16 + l0, h);
    const int shift = 4 * (sb & 1);
#pragma unroll
    for (int l = 0; l < 8; ++l) {
      const uint32_t v = ((byte_at(q, l) >> shift) & 0xF) | (((byte_at(h, l) >> sb) & 1) << 4);
      y[l] = __fsub_rn(__fmul_rn(dl, float(v)), ml);
    }
  }
};

// Q6_K piece p (0..7): half hh = p/4, quarter k = p%4: elements 128·hh + 32·k + l.
template <> struct Decoder<DType::Q6_K> {
  static constexpr int kBlockElems = 256, kBlockBytes = 210, kPiece = 32, kAlign = 2;
  __device__ static void decode(const uint8_t* row, int64_t piece, float (&y)[kPiece]) {
    const uint8_t* b = row + (piece >> 3) * kBlockBytes;
    const int hh = int(piece & 7) >> 2, k = int(piece & 3);
    const float d = half_bits_to_float(load_u16(b + 208));
    const int8_t* scales = reinterpret_cast<const int8_t*>(b + 192);
    const float dl0 = __fmul_rn(d, float(scales[8 * hh + 2 * k]));
    const float dl1 = __fmul_rn(d, float(scales[8 * hh + 2 * k + 1]));
    uint32_t ql[8], qh[8];
    load_words<32, 2>(b + 64 * hh + 32 * (k & 1), ql);
    load_words<32, 2>(b + 128 + 32 * hh, qh);
    const int shift = 4 * (k >> 1);
#pragma unroll
    for (int l = 0; l < 32; ++l) {
      const int lo = int((byte_at(ql, l) >> shift) & 0xF), hi = int((byte_at(qh, l) >> (2 * k)) & 3);
      y[l] = __fmul_rn(l < 16 ? dl0 : dl1, float((lo | hi << 4) - 32));
    }
  }
  // decode8: chunk s = c % 32 of super-block c / 32 is piece s / 4, its elements 8·(s % 4) + l.
  __device__ static void decode8(const uint8_t* row, int64_t c, float (&y)[8]) {
    const uint8_t* b = row + (c >> 5) * kBlockBytes;
    const int piece = int(c & 31) >> 2, l0 = 8 * int(c & 3);
    const int hh = piece >> 2, k = piece & 3;
    const float d = half_bits_to_float(load_u16(b + 208));
    const int8_t* scales = reinterpret_cast<const int8_t*>(b + 192);
    const float dl = __fmul_rn(d, float(scales[8 * hh + 2 * k + (l0 >> 4)]));
    uint32_t ql[2], qh[2];
    load8_uniform(b + 64 * hh + 32 * (k & 1) + l0, ql);
    load8_uniform(b + 128 + 32 * hh + l0, qh);
    const int shift = 4 * (k >> 1);
#pragma unroll
    for (int l = 0; l < 8; ++l) {
      const int lo = int((byte_at(ql, l) >> shift) & 0xF), hi = int((byte_at(qh, l) >> (2 * k)) & 3);
      y[l] = __fmul_rn(dl, float((lo | hi << 4) - 32));
    }
  }
};

template <> struct Decoder<DType::F16> {
  static constexpr int kBlockElems = 1, kBlockBytes = 2, kPiece = 8, kAlign = 16;
  __device__ static void decode(const uint8_t* row, int64_t piece, float (&y)[kPiece]) {
    const uint4 v = reinterpret_cast<const uint4*>(row)[piece];
    const uint32_t w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      y[2 * i] = half_bits_to_float(uint16_t(w[i] & 0xFFFF));
      y[2 * i + 1] = half_bits_to_float(uint16_t(w[i] >> 16));
    }
  }
  __device__ static void decode8(const uint8_t* row, int64_t c, float (&y)[8]) { decode(row, c, y); }
};

template <> struct Decoder<DType::BF16> {
  static constexpr int kBlockElems = 1, kBlockBytes = 2, kPiece = 8, kAlign = 16;
  __device__ static void decode(const uint8_t* row, int64_t piece, float (&y)[kPiece]) {
    const uint4 v = reinterpret_cast<const uint4*>(row)[piece];
    const uint32_t w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      y[2 * i] = __uint_as_float(w[i] << 16);
      y[2 * i + 1] = __uint_as_float(w[i] & 0xFFFF0000u);
    }
  }
  __device__ static void decode8(const uint8_t* row, int64_t c, float (&y)[8]) { decode(row, c, y); }
};

/// Host-side: calls f(Decoder<T>{}) for a weight dtype the CUDA matmul decodes; false otherwise.
template <typename F> bool dispatch_weight(DType t, F&& f) {
  switch (t) {
    case DType::Q8_0: f(Decoder<DType::Q8_0>{}); return true;
    case DType::Q4_0: f(Decoder<DType::Q4_0>{}); return true;
    case DType::Q4_K: f(Decoder<DType::Q4_K>{}); return true;
    case DType::Q5_K: f(Decoder<DType::Q5_K>{}); return true;
    case DType::Q6_K: f(Decoder<DType::Q6_K>{}); return true;
    case DType::MXFP4: f(Decoder<DType::MXFP4>{}); return true;
    case DType::F16: f(Decoder<DType::F16>{}); return true;
    case DType::BF16: f(Decoder<DType::BF16>{}); return true;
    default: return false;
  }
}

}  // namespace oxyd::backend::cuda
