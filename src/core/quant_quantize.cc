// quantize_row: float32 → every format we can encode. The 32-element formats, Q8_K and MXFP4 are
// here; the K-quants (Q2_K..Q6_K) are in quant_quantize_k.cc, IQ4_NL/IQ4_XS in quant_quantize_iq4.cc.
// Each encoder follows ggml's quantize_row_*_ref step by step (same float ops in the same order,
// built with -ffp-contract=off, see src/CMakeLists.txt), so bytes match gguf-py / llama.cpp exactly.
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <string>

#include "core/error.h"
#include "core/half.h"
#include "core/quant.h"
#include "core/quant_k.h"

namespace oxyd {
namespace {

// Largest |x| and the signed value that has it (the first one on ties).
void abs_max(const float* x, int n, float* amax, float* max) {
  *amax = 0.0f;
  *max = 0.0f;
  for (int j = 0; j < n; ++j) {
    if (*amax < std::fabs(x[j])) {
      *amax = std::fabs(x[j]);
      *max = x[j];
    }
  }
}

void min_max(const float* x, int n, float* mn, float* mx) {
  *mn = FLT_MAX;
  *mx = -FLT_MAX;
  for (int j = 0; j < n; ++j) {
    if (x[j] < *mn) *mn = x[j];
    if (x[j] > *mx) *mx = x[j];
  }
}

void q_q4_0(const float* x, BlockQ4_0* y) {
  float amax, max;
  abs_max(x, 32, &amax, &max);
  const float d = max / -8;
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  y->d = f32_to_f16(d);
  for (int j = 0; j < 16; ++j) {
    const int lo = std::min(15, int(int8_t(x[j] * id + 8.5f)));
    const int hi = std::min(15, int(int8_t(x[j + 16] * id + 8.5f)));
    y->qs[j] = uint8_t(lo | hi << 4);
  }
}

void q_q4_1(const float* x, BlockQ4_1* y) {
  float mn, mx;
  min_max(x, 32, &mn, &mx);
  const float d = (mx - mn) / 15;
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  y->d = f32_to_f16(d);
  y->m = f32_to_f16(mn);
  for (int j = 0; j < 16; ++j) {
    const int lo = std::min(15, int(int8_t((x[j] - mn) * id + 0.5f)));
    const int hi = std::min(15, int(int8_t((x[j + 16] - mn) * id + 0.5f)));
    y->qs[j] = uint8_t(lo | hi << 4);
  }
}

void store_qh(uint8_t* dst, uint32_t qh) {
  for (int i = 0; i < 4; ++i) dst[i] = uint8_t(qh >> (8 * i));
}

void q_q5_0(const float* x, BlockQ5_0* y) {
  float amax, max;
  abs_max(x, 32, &amax, &max);
  const float d = max / -16;
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  y->d = f32_to_f16(d);
  uint32_t qh = 0;
  for (int j = 0; j < 16; ++j) {
    const int lo = std::min(31, int(int8_t(x[j] * id + 16.5f)));
    const int hi = std::min(31, int(int8_t(x[j + 16] * id + 16.5f)));
    y->qs[j] = uint8_t((lo & 0xF) | (hi & 0xF) << 4);
    qh |= uint32_t(lo >> 4 & 1) << j;
    qh |= uint32_t(hi >> 4 & 1) << (j + 16);
  }
  store_qh(y->qh, qh);
}

void q_q5_1(const float* x, BlockQ5_1* y) {
  float mn, mx;
  min_max(x, 32, &mn, &mx);
  const float d = (mx - mn) / 31;
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  y->d = f32_to_f16(d);
  y->m = f32_to_f16(mn);
  uint32_t qh = 0;
  for (int j = 0; j < 16; ++j) {
    const int lo = std::min(31, int(uint8_t((x[j] - mn) * id + 0.5f)));
    const int hi = std::min(31, int(uint8_t((x[j + 16] - mn) * id + 0.5f)));
    y->qs[j] = uint8_t((lo & 0xF) | (hi & 0xF) << 4);
    qh |= uint32_t(lo >> 4 & 1) << j;
    qh |= uint32_t(hi >> 4 & 1) << (j + 16);
  }
  store_qh(y->qh, qh);
}

// Shared by Q8_0 and Q8_1: d = amax/127, q = round-half-away(x/d). Returns d.
float q8_32(const float* x, int8_t* qs) {
  float amax = 0.0f;
  for (int j = 0; j < 32; ++j) amax = std::max(amax, std::fabs(x[j]));
  const float d = amax / 127;
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  for (int j = 0; j < 32; ++j) qs[j] = int8_t(std::round(x[j] * id));
  return d;
}

void q_q8_0(const float* x, BlockQ8_0* y) { y->d = f32_to_f16(q8_32(x, y->qs)); }

void q_q8_1(const float* x, BlockQ8_1* y) {
  const float d = q8_32(x, y->qs);
  int sum = 0;
  for (int j = 0; j < 32; ++j) sum += y->qs[j];
  y->d = f32_to_f16(d);
  y->s = f32_to_f16(float(sum) * d);
}

// Q8_K (the activation side of K-quant dot products): d is a plain float, q = nearest_int(x*-127/max)
// capped at 127 (the element with the largest |x| maps to ∓127), bsums = sums of each 16 q.
void q_q8_k(const float* x, BlockQ8_K* y) {
  float amax = 0.0f, max = 0.0f;
  for (int j = 0; j < kQK_K; ++j) {
    const float ax = std::fabs(x[j]);
    if (ax > amax) {
      amax = ax;
      max = x[j];
    }
  }
  if (amax == 0.0f) {  // ggml leaves bsums unset here; zero is their only consistent value
    std::memset(y, 0, sizeof(*y));
    return;
  }
  const float iscale = -127.f / max;
  for (int j = 0; j < kQK_K; ++j) y->qs[j] = int8_t(std::min(127, nearest_int(iscale * x[j])));
  for (int j = 0; j < kQK_K / 16; ++j) {
    int sum = 0;
    for (int i = 0; i < 16; ++i) sum += y->qs[16 * j + i];
    y->bsums[j] = int16_t(sum);
  }
  y->d = 1 / iscale;
}

int best_index_mxfp4(float x, float d) {
  int best = 0;
  float best_err = std::fabs(float(kMXFP4Values[0]) * d - x);
  for (int i = 1; i < 16; ++i) {
    const float err = std::fabs(float(kMXFP4Values[i]) * d - x);
    if (err < best_err) {
      best = i;
      best_err = err;
    }
  }
  return best;
}

void q_mxfp4(const float* x, BlockMXFP4* y) {
  float amax = 0.0f;
  for (int j = 0; j < 32; ++j) amax = std::max(amax, std::fabs(x[j]));
  // Exponent so that amax / 2^e' lands in [4, 8) (the top E2M1 magnitudes 4 and 6); blocks
  // below 2^-125 clamp to the smallest scale (ggml's uint8 cast is undefined there).
  const float e_f = amax > 0.0f ? std::floor(std::log2(amax)) - 2 + 127 : 0.0f;
  const uint8_t e = uint8_t(std::min(255.0f, std::max(0.0f, e_f)));
  const float d = e8m0_to_f32_half(e);
  y->e = e;
  for (int j = 0; j < 16; ++j)
    y->qs[j] = uint8_t(best_index_mxfp4(x[j], d) | best_index_mxfp4(x[j + 16], d) << 4);
}

template <typename Block, void (*Encode)(const float*, Block*)>
void blocks(const float* x, void* dst, int64_t n, int64_t qk) {
  Block* b = static_cast<Block*>(dst);
  for (int64_t i = 0; i < n / qk; ++i) Encode(x + i * qk, b + i);
}

}  // namespace

bool can_quantize(DType t) {
  switch (t) {
    case DType::F32: case DType::F16: case DType::BF16:
    case DType::Q4_0: case DType::Q4_1: case DType::Q5_0: case DType::Q5_1: case DType::Q8_0:
    case DType::Q8_1: case DType::Q8_K: case DType::MXFP4:
    case DType::Q2_K: case DType::Q3_K: case DType::Q4_K: case DType::Q5_K: case DType::Q6_K:
    case DType::IQ4_NL: case DType::IQ4_XS:
      return true;
    default:
      return false;
  }
}

void quantize_row(DType t, const float* x, void* dst, int64_t n) {
  if (!can_quantize(t))
    throw_error(ErrorCode::UNSUPPORTED, "quantize_row: no encoder for dtype " + std::string(dtype_name(t)) +
                                            " (id " + std::to_string(uint32_t(t)) + ")");
  if (n < 0 || n % dtype_block_elems(t) != 0)
    throw_error(ErrorCode::INVALID_ARGUMENT,
                "quantize_row: " + std::string(dtype_name(t)) + " row of " + std::to_string(n) +
                    " elements is not a multiple of the block size " + std::to_string(dtype_block_elems(t)));
  switch (t) {
    case DType::F32: std::memcpy(dst, x, size_t(n) * 4); return;
    case DType::F16: {
      uint16_t* d = static_cast<uint16_t*>(dst);
      for (int64_t i = 0; i < n; ++i) d[i] = f32_to_f16(x[i]);
      return;
    }
    case DType::BF16: {
      uint16_t* d = static_cast<uint16_t*>(dst);
      for (int64_t i = 0; i < n; ++i) d[i] = f32_to_bf16(x[i]);
      return;
    }
    case DType::Q4_0: blocks<BlockQ4_0, q_q4_0>(x, dst, n, 32); return;
    case DType::Q4_1: blocks<BlockQ4_1, q_q4_1>(x, dst, n, 32); return;
    case DType::Q5_0: blocks<BlockQ5_0, q_q5_0>(x, dst, n, 32); return;
    case DType::Q5_1: blocks<BlockQ5_1, q_q5_1>(x, dst, n, 32); return;
    case DType::Q8_0: blocks<BlockQ8_0, q_q8_0>(x, dst, n, 32); return;
    case DType::Q8_1: blocks<BlockQ8_1, q_q8_1>(x, dst, n, 32); return;
    case DType::Q8_K: blocks<BlockQ8_K, q_q8_k>(x, dst, n, kQK_K); return;
    case DType::MXFP4: blocks<BlockMXFP4, q_mxfp4>(x, dst, n, 32); return;
    case DType::Q2_K: blocks<BlockQ2_K, quantize_block_q2_k>(x, dst, n, kQK_K); return;
    case DType::Q3_K: blocks<BlockQ3_K, quantize_block_q3_k>(x, dst, n, kQK_K); return;
    case DType::Q4_K: blocks<BlockQ4_K, quantize_block_q4_k>(x, dst, n, kQK_K); return;
    case DType::Q5_K: blocks<BlockQ5_K, quantize_block_q5_k>(x, dst, n, kQK_K); return;
    case DType::Q6_K: blocks<BlockQ6_K, quantize_block_q6_k>(x, dst, n, kQK_K); return;
    case DType::IQ4_NL: blocks<BlockIQ4_NL, quantize_block_iq4_nl>(x, dst, n, 32); return;
    case DType::IQ4_XS: blocks<BlockIQ4_XS, quantize_block_iq4_xs>(x, dst, n, kQK_K); return;
    default: return;
  }
}

}  // namespace oxyd
