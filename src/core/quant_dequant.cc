// dequantize_row for every DType: one plain block decoder per format. The float operations are
// done in the same order as gguf-py's numpy decoders (e.g. (d*sc)*q - dmin*m), so results are
// bit-identical, which tests/quant checks on committed goldens.
#include <cmath>
#include <string>

#include "core/error.h"
#include "core/half.h"
#include "core/quant.h"

namespace oxyd {
namespace {

void check_row(DType t, int64_t n) {
  if (n < 0 || n % dtype_block_elems(t) != 0)
    throw_error(ErrorCode::INVALID_ARGUMENT,
                std::string("dequantize_row: ") + std::string(dtype_name(t)) + " row of " + std::to_string(n) +
                    " elements is not a multiple of the block size " + std::to_string(dtype_block_elems(t)));
}

template <typename T>
void copy_cast(const void* src, float* y, int64_t n) {
  const T* s = static_cast<const T*>(src);
  for (int64_t i = 0; i < n; ++i) y[i] = float(s[i]);
}

void dq_q4_0(const BlockQ4_0* b, float* y) {
  const float d = f16_to_f32(b->d);
  for (int j = 0; j < 16; ++j) {
    y[j] = d * float((b->qs[j] & 0xF) - 8);
    y[j + 16] = d * float((b->qs[j] >> 4) - 8);
  }
}

void dq_q4_1(const BlockQ4_1* b, float* y) {
  const float d = f16_to_f32(b->d), m = f16_to_f32(b->m);
  for (int j = 0; j < 16; ++j) {
    y[j] = d * float(b->qs[j] & 0xF) + m;
    y[j + 16] = d * float(b->qs[j] >> 4) + m;
  }
}

uint32_t load_u32(const uint8_t* p) { return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24; }

void dq_q5_0(const BlockQ5_0* b, float* y) {
  const float d = f16_to_f32(b->d);
  const uint32_t qh = load_u32(b->qh);
  for (int j = 0; j < 16; ++j) {
    const int lo = (b->qs[j] & 0xF) | int((qh >> j) & 1) << 4;
    const int hi = (b->qs[j] >> 4) | int((qh >> (j + 16)) & 1) << 4;
    y[j] = d * float(lo - 16);
    y[j + 16] = d * float(hi - 16);
  }
}

void dq_q5_1(const BlockQ5_1* b, float* y) {
  const float d = f16_to_f32(b->d), m = f16_to_f32(b->m);
  const uint32_t qh = load_u32(b->qh);
  for (int j = 0; j < 16; ++j) {
    const int lo = (b->qs[j] & 0xF) | int((qh >> j) & 1) << 4;
    const int hi = (b->qs[j] >> 4) | int((qh >> (j + 16)) & 1) << 4;
    y[j] = d * float(lo) + m;
    y[j + 16] = d * float(hi) + m;
  }
}

void dq_q8_0(const BlockQ8_0* b, float* y) {
  const float d = f16_to_f32(b->d);
  for (int j = 0; j < 32; ++j) y[j] = d * float(b->qs[j]);
}

void dq_q8_1(const BlockQ8_1* b, float* y) {
  const float d = f16_to_f32(b->d);  // s = d * sum(qs) is a dot-product helper, not needed here
  for (int j = 0; j < 32; ++j) y[j] = d * float(b->qs[j]);
}

// Q2_K: element 128*h + 32*s + l (h half, s 2-bit shift slot, l 0..31) is bits 2s of qs[32h + l];
// its 16-element sub-block index is (128*h + 32*s + l) / 16.
void dq_q2_k(const BlockQ2_K* b, float* y) {
  const float d = f16_to_f32(b->d), dmin = f16_to_f32(b->dmin);
  for (int e = 0; e < kQK_K; ++e) {
    const int h = e / 128, s = (e / 32) % 4, l = e % 32;
    const uint8_t sc = b->scales[e / 16];
    const float dl = d * float(sc & 0xF), ml = dmin * float(sc >> 4);
    const int q = (b->qs[32 * h + l] >> (2 * s)) & 3;
    y[e] = dl * float(q) - ml;
  }
}

// Q3_K: like Q2_K plus a high bit: bit (e / 32) of hmask[e % 32]; set means no -4 offset.
void dq_q3_k(const BlockQ3_K* b, float* y) {
  const float d = f16_to_f32(b->d);
  int8_t sc[16];
  unpack_q3_k_scales(b->scales, sc);
  for (int e = 0; e < kQK_K; ++e) {
    const int h = e / 128, s = (e / 32) % 4, l = e % 32;
    const float dl = d * float(sc[e / 16]);
    const int lo = (b->qs[32 * h + l] >> (2 * s)) & 3;
    const int high = (b->hmask[l] >> (e / 32)) & 1;
    y[e] = dl * float(lo - (high ? 0 : 4));
  }
}

// Q4_K: chunk c (64 elements) uses qs[32c..32c+31]: low nibbles are sub-block 2c, high are 2c+1.
void dq_q4_k(const BlockQ4_K* b, float* y) {
  const float d = f16_to_f32(b->d), dmin = f16_to_f32(b->dmin);
  for (int sb = 0; sb < 8; ++sb) {
    uint8_t sc, m;
    get_scale_min_k4(sb, b->scales, &sc, &m);
    const float dl = d * float(sc), ml = dmin * float(m);
    const uint8_t* q = b->qs + 32 * (sb / 2);
    const int shift = 4 * (sb % 2);
    for (int l = 0; l < 32; ++l) y[32 * sb + l] = dl * float((q[l] >> shift) & 0xF) - ml;
  }
}

// Q5_K: as Q4_K plus bit sb of qh[l] as the fifth bit.
void dq_q5_k(const BlockQ5_K* b, float* y) {
  const float d = f16_to_f32(b->d), dmin = f16_to_f32(b->dmin);
  for (int sb = 0; sb < 8; ++sb) {
    uint8_t sc, m;
    get_scale_min_k4(sb, b->scales, &sc, &m);
    const float dl = d * float(sc), ml = dmin * float(m);
    const uint8_t* q = b->qs + 32 * (sb / 2);
    const int shift = 4 * (sb % 2);
    for (int l = 0; l < 32; ++l) {
      const int v = ((q[l] >> shift) & 0xF) | (((b->qh[l] >> sb) & 1) << 4);
      y[32 * sb + l] = dl * float(v) - ml;
    }
  }
}

// Q6_K: per 128-half h, l 0..31 and quarter k 0..3: element 128h + 32k + l has low nibble
// ql[64h + l + 32*(k%2)] >> 4*(k/2), high bits (qh[32h + l] >> 2k) & 3, scale scales[8h + 2k + l/16].
void dq_q6_k(const BlockQ6_K* b, float* y) {
  const float d = f16_to_f32(b->d);
  for (int e = 0; e < kQK_K; ++e) {
    const int h = e / 128, k = (e / 32) % 4, l = e % 32;
    const int lo = (b->ql[64 * h + l + 32 * (k % 2)] >> (4 * (k / 2))) & 0xF;
    const int hi = (b->qh[32 * h + l] >> (2 * k)) & 3;
    const float dl = d * float(b->scales[8 * h + 2 * k + l / 16]);
    y[e] = dl * float((lo | hi << 4) - 32);
  }
}

void dq_q8_k(const BlockQ8_K* b, float* y) {
  for (int j = 0; j < kQK_K; ++j) y[j] = b->d * float(b->qs[j]);
}

void dq_iq4_nl(const BlockIQ4_NL* b, float* y) {
  const float d = f16_to_f32(b->d);
  for (int j = 0; j < 16; ++j) {
    y[j] = d * float(kIQ4NLValues[b->qs[j] & 0xF]);
    y[j + 16] = d * float(kIQ4NLValues[b->qs[j] >> 4]);
  }
}

void dq_iq4_xs(const BlockIQ4_XS* b, float* y) {
  const float d = f16_to_f32(b->d);
  for (int ib = 0; ib < 8; ++ib) {
    const int ls = ((b->scales_l[ib / 2] >> (4 * (ib % 2))) & 0xF) | (((b->scales_h >> (2 * ib)) & 3) << 4);
    const float dl = d * float(ls - 32);
    const uint8_t* qs = b->qs + 16 * ib;
    for (int j = 0; j < 16; ++j) {
      y[32 * ib + j] = dl * float(kIQ4NLValues[qs[j] & 0xF]);
      y[32 * ib + j + 16] = dl * float(kIQ4NLValues[qs[j] >> 4]);
    }
  }
}

void dq_mxfp4(const BlockMXFP4* b, float* y) {
  const float d = e8m0_to_f32_half(b->e);
  for (int j = 0; j < 16; ++j) {
    y[j] = d * float(kMXFP4Values[b->qs[j] & 0xF]);
    y[j + 16] = d * float(kMXFP4Values[b->qs[j] >> 4]);
  }
}

// FP8 E5M2 is the upper byte of an IEEE f16.
float fp8_e5m2_to_f32(uint8_t v) { return f16_to_f32(uint16_t(v) << 8); }

template <typename Block, void (*Decode)(const Block*, float*)>
void blocks(const void* src, float* y, int64_t n, int64_t qk) {
  const Block* b = static_cast<const Block*>(src);
  for (int64_t i = 0; i < n / qk; ++i) Decode(b + i, y + i * qk);
}

}  // namespace

bool can_dequantize(DType t) {
  switch (t) {
    case DType::F32: case DType::F16: case DType::BF16: case DType::F64:
    case DType::Q4_0: case DType::Q4_1: case DType::Q5_0: case DType::Q5_1: case DType::Q8_0:
    case DType::Q8_1: case DType::Q2_K: case DType::Q3_K: case DType::Q4_K: case DType::Q5_K:
    case DType::Q6_K: case DType::Q8_K: case DType::IQ4_NL: case DType::IQ4_XS: case DType::MXFP4:
    case DType::F8_E4M3: case DType::F8_E5M2:
    case DType::I8: case DType::U8: case DType::I16: case DType::I32: case DType::I64: case DType::BOOL:
      return true;
  }
  return false;
}

void dequantize_row(DType t, const void* src, float* y, int64_t n) {
  if (!can_dequantize(t))
    throw_error(ErrorCode::UNSUPPORTED, "dequantize_row: no decoder for dtype id " + std::to_string(uint32_t(t)));
  check_row(t, n);
  const uint8_t* u8 = static_cast<const uint8_t*>(src);
  switch (t) {
    case DType::F32: std::memcpy(y, src, size_t(n) * 4); return;
    case DType::F16: {
      const uint16_t* s = static_cast<const uint16_t*>(src);
      for (int64_t i = 0; i < n; ++i) y[i] = f16_to_f32(s[i]);
      return;
    }
    case DType::BF16: {
      const uint16_t* s = static_cast<const uint16_t*>(src);
      for (int64_t i = 0; i < n; ++i) y[i] = bf16_to_f32(s[i]);
      return;
    }
    case DType::F8_E4M3: for (int64_t i = 0; i < n; ++i) y[i] = fp8_e4m3_to_f32(u8[i]); return;
    case DType::F8_E5M2: for (int64_t i = 0; i < n; ++i) y[i] = fp8_e5m2_to_f32(u8[i]); return;
    case DType::F64: copy_cast<double>(src, y, n); return;
    case DType::I8: copy_cast<int8_t>(src, y, n); return;
    case DType::U8: copy_cast<uint8_t>(src, y, n); return;
    case DType::BOOL: for (int64_t i = 0; i < n; ++i) y[i] = u8[i] ? 1.0f : 0.0f; return;
    case DType::I16: copy_cast<int16_t>(src, y, n); return;
    case DType::I32: copy_cast<int32_t>(src, y, n); return;
    case DType::I64: copy_cast<int64_t>(src, y, n); return;
    case DType::Q4_0: blocks<BlockQ4_0, dq_q4_0>(src, y, n, 32); return;
    case DType::Q4_1: blocks<BlockQ4_1, dq_q4_1>(src, y, n, 32); return;
    case DType::Q5_0: blocks<BlockQ5_0, dq_q5_0>(src, y, n, 32); return;
    case DType::Q5_1: blocks<BlockQ5_1, dq_q5_1>(src, y, n, 32); return;
    case DType::Q8_0: blocks<BlockQ8_0, dq_q8_0>(src, y, n, 32); return;
    case DType::Q8_1: blocks<BlockQ8_1, dq_q8_1>(src, y, n, 32); return;
    case DType::Q2_K: blocks<BlockQ2_K, dq_q2_k>(src, y, n, kQK_K); return;
    case DType::Q3_K: blocks<BlockQ3_K, dq_q3_k>(src, y, n, kQK_K); return;
    case DType::Q4_K: blocks<BlockQ4_K, dq_q4_k>(src, y, n, kQK_K); return;
    case DType::Q5_K: blocks<BlockQ5_K, dq_q5_k>(src, y, n, kQK_K); return;
    case DType::Q6_K: blocks<BlockQ6_K, dq_q6_k>(src, y, n, kQK_K); return;
    case DType::Q8_K: blocks<BlockQ8_K, dq_q8_k>(src, y, n, kQK_K); return;
    case DType::IQ4_NL: blocks<BlockIQ4_NL, dq_iq4_nl>(src, y, n, 32); return;
    case DType::IQ4_XS: blocks<BlockIQ4_XS, dq_iq4_xs>(src, y, n, kQK_K); return;
    case DType::MXFP4: blocks<BlockMXFP4, dq_mxfp4>(src, y, n, 32); return;
  }
}

void dequantize_fp8_block_scaled(const uint8_t* w, int64_t rows, int64_t cols, const float* scale_inv,
                                 int64_t block_rows, int64_t block_cols, float* out) {
  if (rows < 0 || cols < 0 || block_rows <= 0 || block_cols <= 0)
    throw_error(ErrorCode::INVALID_ARGUMENT,
                "dequantize_fp8_block_scaled: expected rows, cols >= 0 and block sizes > 0, got [" +
                    std::to_string(rows) + ", " + std::to_string(cols) + "] blocks [" +
                    std::to_string(block_rows) + ", " + std::to_string(block_cols) + "]");
  const int64_t scale_cols = (cols + block_cols - 1) / block_cols;
  for (int64_t i = 0; i < rows; ++i) {
    const float* srow = scale_inv + (i / block_rows) * scale_cols;
    for (int64_t j = 0; j < cols; ++j) out[i * cols + j] = fp8_e4m3_to_f32(w[i * cols + j]) * srow[j / block_cols];
  }
}

}  // namespace oxyd
