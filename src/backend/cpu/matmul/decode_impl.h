// The block decoders behind decode_row, as internal-linkage inline code so that a kernel file
// compiled with ISA flags (amx_bf16_avx512.cc) gets its own auto-vectorized copy. Include only
// from .cc files; each includer gets a private copy (anonymous namespace).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#ifdef __F16C__
#include <immintrin.h>
#endif

#include "backend/cpu/matmul/decode.h"
#include "core/half.h"

namespace oxyd::backend::cpu {
namespace {

// half.h's inline converters must not be emitted from an ISA-flagged file (the linker could pick
// that copy for portable callers), so ISA builds use the F16C instruction and bf16 is a shift.
inline float h(uint16_t v) {
#ifdef __F16C__
  return _cvtsh_ss(v);
#else
  return f16_to_f32(v);
#endif
}
inline float hb(uint16_t v) {
  const uint32_t u = uint32_t(v) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// 6-bit scale j and min j of a Q4_K/Q5_K super-block.
inline void scale_min_k4(int j, const uint8_t* q, uint8_t& sc, uint8_t& m) {
  if (j < 4) {
    sc = q[j] & 63;
    m = q[j + 4] & 63;
  } else {
    sc = (q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4);
    m = (q[j + 4] >> 4) | ((q[j] >> 6) << 4);
  }
}

void dec_q4_0(const BlockQ4_0& b, float* y) {
  const float d = h(b.d);
  for (int j = 0; j < 16; ++j) {
    y[j] = float((b.qs[j] & 0xF) - 8) * d;
    y[j + 16] = float((b.qs[j] >> 4) - 8) * d;
  }
}
void dec_q4_1(const BlockQ4_1& b, float* y) {
  const float d = h(b.d), m = h(b.m);
  for (int j = 0; j < 16; ++j) {
    y[j] = float(b.qs[j] & 0xF) * d + m;
    y[j + 16] = float(b.qs[j] >> 4) * d + m;
  }
}
void dec_q5_0(const BlockQ5_0& b, float* y) {
  const float d = h(b.d);
  uint32_t qh;
  std::memcpy(&qh, b.qh, 4);
  for (int j = 0; j < 16; ++j) {
    y[j] = float(int((b.qs[j] & 0xF) | (((qh >> j) & 1) << 4)) - 16) * d;
    y[j + 16] = float(int((b.qs[j] >> 4) | (((qh >> (j + 16)) & 1) << 4)) - 16) * d;
  }
}
void dec_q5_1(const BlockQ5_1& b, float* y) {
  const float d = h(b.d), m = h(b.m);
  uint32_t qh;
  std::memcpy(&qh, b.qh, 4);
  for (int j = 0; j < 16; ++j) {
    y[j] = float((b.qs[j] & 0xF) | (((qh >> j) & 1) << 4)) * d + m;
    y[j + 16] = float((b.qs[j] >> 4) | (((qh >> (j + 16)) & 1) << 4)) * d + m;
  }
}
void dec_q8_0(const BlockQ8_0& b, float* y) {
  const float d = h(b.d);
  for (int j = 0; j < 32; ++j) y[j] = float(b.qs[j]) * d;
}
void dec_q2_k(const BlockQ2_K& b, float* y) {
  const float d = h(b.d), dmin = h(b.dmin);
  for (int n = 0; n < 2; ++n) {
    const uint8_t* q = b.qs + 32 * n;
    for (int j = 0; j < 4; ++j) {
      const int s = 2 * j;
      for (int half = 0; half < 2; ++half) {
        const uint8_t sc = b.scales[8 * n + 2 * j + half];
        const float dl = d * float(sc & 0xF), ml = dmin * float(sc >> 4);
        float* out = y + 128 * n + 32 * j + 16 * half;
        for (int l = 0; l < 16; ++l) out[l] = dl * float((q[16 * half + l] >> s) & 3) - ml;
      }
    }
  }
}
void dec_q3_k(const BlockQ3_K& b, float* y) {
  const float d = h(b.d);
  const uint8_t* B = b.scales;
  int sc[16];
  for (int i = 0; i < 4; ++i) {
    sc[i] = (B[i] & 0xF) | ((B[8 + i] & 3) << 4);
    sc[4 + i] = (B[4 + i] & 0xF) | (((B[8 + i] >> 2) & 3) << 4);
    sc[8 + i] = (B[i] >> 4) | (((B[8 + i] >> 4) & 3) << 4);
    sc[12 + i] = (B[4 + i] >> 4) | (((B[8 + i] >> 6) & 3) << 4);
  }
  for (int n = 0; n < 2; ++n) {
    const uint8_t* q = b.qs + 32 * n;
    for (int j = 0; j < 4; ++j) {
      const int s = 2 * j;
      const uint8_t m = uint8_t(1u << (4 * n + j));
      for (int half = 0; half < 2; ++half) {
        const float dl = d * float(sc[8 * n + 2 * j + half] - 32);
        float* out = y + 128 * n + 32 * j + 16 * half;
        for (int l = 0; l < 16; ++l) {
          const int li = 16 * half + l;
          const int v = int((q[li] >> s) & 3) - ((b.hmask[li] & m) ? 0 : 4);
          out[l] = dl * float(v);
        }
      }
    }
  }
}
void dec_q4_k(const BlockQ4_K& b, float* y) {
  const float d = h(b.d), dmin = h(b.dmin);
  for (int c = 0; c < 4; ++c) {
    const uint8_t* q = b.qs + 32 * c;
    uint8_t s0, m0, s1, m1;
    scale_min_k4(2 * c, b.scales, s0, m0);
    scale_min_k4(2 * c + 1, b.scales, s1, m1);
    const float d0 = d * s0, mm0 = dmin * m0, d1 = d * s1, mm1 = dmin * m1;
    for (int l = 0; l < 32; ++l) {
      y[64 * c + l] = d0 * float(q[l] & 0xF) - mm0;
      y[64 * c + 32 + l] = d1 * float(q[l] >> 4) - mm1;
    }
  }
}
void dec_q5_k(const BlockQ5_K& b, float* y) {
  const float d = h(b.d), dmin = h(b.dmin);
  for (int c = 0; c < 4; ++c) {
    const uint8_t* q = b.qs + 32 * c;
    uint8_t s0, m0, s1, m1;
    scale_min_k4(2 * c, b.scales, s0, m0);
    scale_min_k4(2 * c + 1, b.scales, s1, m1);
    const float d0 = d * s0, mm0 = dmin * m0, d1 = d * s1, mm1 = dmin * m1;
    const uint8_t u0 = uint8_t(1u << (2 * c)), u1 = uint8_t(2u << (2 * c));
    for (int l = 0; l < 32; ++l) {
      y[64 * c + l] = d0 * float((q[l] & 0xF) + ((b.qh[l] & u0) ? 16 : 0)) - mm0;
      y[64 * c + 32 + l] = d1 * float((q[l] >> 4) + ((b.qh[l] & u1) ? 16 : 0)) - mm1;
    }
  }
}
void dec_q6_k(const BlockQ6_K& b, float* y) {
  const float d = h(b.d);
  const uint8_t* ql = b.ql;
  const uint8_t* qh = b.qh;
  const int8_t* sc = b.scales;
  for (int half = 0; half < 2; ++half) {
    for (int l = 0; l < 32; ++l) {
      const int is = l / 16;
      const int q1 = int((ql[l] & 0xF) | (((qh[l] >> 0) & 3) << 4)) - 32;
      const int q2 = int((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4)) - 32;
      const int q3 = int((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
      const int q4 = int((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
      y[l] = d * float(sc[is]) * float(q1);
      y[l + 32] = d * float(sc[is + 2]) * float(q2);
      y[l + 64] = d * float(sc[is + 4]) * float(q3);
      y[l + 96] = d * float(sc[is + 6]) * float(q4);
    }
    y += 128;
    ql += 64;
    qh += 32;
    sc += 8;
  }
}
void dec_iq4_nl(const BlockIQ4_NL& b, float* y) {
  const float d = h(b.d);
  for (int j = 0; j < 16; ++j) {
    y[j] = d * float(kIQ4NLValues[b.qs[j] & 0xF]);
    y[j + 16] = d * float(kIQ4NLValues[b.qs[j] >> 4]);
  }
}
void dec_iq4_xs(const BlockIQ4_XS& b, float* y) {
  const float d = h(b.d);
  for (int ib = 0; ib < 8; ++ib) {
    const int ls = ((b.scales_l[ib / 2] >> (4 * (ib % 2))) & 0xF) | (((b.scales_h >> (2 * ib)) & 3) << 4);
    const float dl = d * float(ls - 32);
    const uint8_t* qs = b.qs + 16 * ib;
    for (int j = 0; j < 16; ++j) {
      y[32 * ib + j] = dl * float(kIQ4NLValues[qs[j] & 0xF]);
      y[32 * ib + j + 16] = dl * float(kIQ4NLValues[qs[j] >> 4]);
    }
  }
}
void dec_mxfp4(const BlockMXFP4& b, float* y) {
  const float d = std::ldexp(1.0f, int(b.e) - 128);
  for (int j = 0; j < 16; ++j) {
    y[j] = d * float(kMXFP4Values[b.qs[j] & 0xF]);
    y[j + 16] = d * float(kMXFP4Values[b.qs[j] >> 4]);
  }
}

template <class Block, int kElems>
void dec_blocks(void (*fn)(const Block&, float*), const void* src, float* dst, int64_t n) {
  const Block* b = static_cast<const Block*>(src);
  for (int64_t i = 0; i < n / kElems; ++i) fn(b[i], dst + i * kElems);
}


inline void decode_row_impl(DType t, const void* src, float* dst, int64_t n) {
  switch (t) {
    case DType::F32: std::memcpy(dst, src, size_t(n) * 4); return;
    case DType::F16: {
      const uint16_t* s = static_cast<const uint16_t*>(src);
      for (int64_t i = 0; i < n; ++i) dst[i] = h(s[i]);
      return;
    }
    case DType::BF16: {
      const uint16_t* s = static_cast<const uint16_t*>(src);
      for (int64_t i = 0; i < n; ++i) dst[i] = hb(s[i]);
      return;
    }
    case DType::Q4_0: return dec_blocks<BlockQ4_0, 32>(dec_q4_0, src, dst, n);
    case DType::Q4_1: return dec_blocks<BlockQ4_1, 32>(dec_q4_1, src, dst, n);
    case DType::Q5_0: return dec_blocks<BlockQ5_0, 32>(dec_q5_0, src, dst, n);
    case DType::Q5_1: return dec_blocks<BlockQ5_1, 32>(dec_q5_1, src, dst, n);
    case DType::Q8_0: return dec_blocks<BlockQ8_0, 32>(dec_q8_0, src, dst, n);
    case DType::Q2_K: return dec_blocks<BlockQ2_K, 256>(dec_q2_k, src, dst, n);
    case DType::Q3_K: return dec_blocks<BlockQ3_K, 256>(dec_q3_k, src, dst, n);
    case DType::Q4_K: return dec_blocks<BlockQ4_K, 256>(dec_q4_k, src, dst, n);
    case DType::Q5_K: return dec_blocks<BlockQ5_K, 256>(dec_q5_k, src, dst, n);
    case DType::Q6_K: return dec_blocks<BlockQ6_K, 256>(dec_q6_k, src, dst, n);
    case DType::IQ4_NL: return dec_blocks<BlockIQ4_NL, 32>(dec_iq4_nl, src, dst, n);
    case DType::IQ4_XS: return dec_blocks<BlockIQ4_XS, 256>(dec_iq4_xs, src, dst, n);
    case DType::MXFP4: return dec_blocks<BlockMXFP4, 32>(dec_mxfp4, src, dst, n);
    default: return;
  }
}

}  // namespace
}  // namespace oxyd::backend::cpu
