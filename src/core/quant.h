// Scalar quantize / dequantize for every weight format of DType (GGUF block formats, FP8, plain
// ints/floats). This is the oracle-grade path: plain, readable, bit-exact with gguf-py / ggml's
// reference code (tests/quant). It is not the fast path (backend/cpu has SIMD kernels that are
// tested against this). Byte layouts: ggml-common.h (docs/architecture.md §9) and the Block* structs in dtype.h.
#pragma once

#include <cstdint>
#include <cstring>

#include "core/dtype.h"

namespace oxyd {

/// Whether dequantize_row() decodes dtype t.
bool can_dequantize(DType t);

/// Decodes n elements of dtype t (n a multiple of t's block size) from src into dst as float32.
/// Throws Error(UNSUPPORTED) for a dtype without a decoder, Error(INVALID_ARGUMENT) for a bad n.
/// Integer dtypes convert by value (I64/F64 may round). Thread-safe, no allocation.
void dequantize_row(DType t, const void* src, float* dst, int64_t n);

/// Whether quantize_row() encodes dtype t: F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q8_1,
/// Q8_K, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, IQ4_NL, IQ4_XS, MXFP4.
bool can_quantize(DType t);

/// Encodes n float32 values (n a multiple of t's block size) into dtype_row_bytes(t, n) bytes at
/// dst. Block formats follow ggml's reference quantizers (quantize_row_*_ref, no importance
/// matrix), so results are bit-identical to gguf-py / llama.cpp for the same input (two defined
/// deviations where ggml leaves bytes undefined: Q8_K bsums and IQ4_NL indices of an all-zero
/// block are written as 0; MXFP4 blocks with max |x| < 2^-125 get exponent 0).
/// Throws Error(UNSUPPORTED) / Error(INVALID_ARGUMENT) like dequantize_row().
void quantize_row(DType t, const float* src, void* dst, int64_t n);

/// Block-scaled FP8 E4M3 weight (DeepSeek-style checkpoints, docs/architecture.md §9):
/// w [rows, cols] FP8 E4M3 bytes, scale_inv [ceil(rows/block_rows), ceil(cols/block_cols)] f32,
/// out [rows, cols] f32 with out[i][j] = fp8(w[i][j]) * scale_inv[i/block_rows][j/block_cols].
/// Despite its name, scale_inv is the multiplier. Throws Error(INVALID_ARGUMENT) on bad sizes.
void dequantize_fp8_block_scaled(const uint8_t* w, int64_t rows, int64_t cols, const float* scale_inv,
                                 int64_t block_rows, int64_t block_cols, float* out);

/// gpt-oss's Hugging Face MXFP4 (the `*_blocks` / `*_scales` pair of its expert weights) → GGUF
/// MXFP4 blocks. blocks U8 [rows, groups, 16]: element 2k of a 32-group in the low nibble of byte
/// k, 2k+1 in the high one; scales U8 [rows, groups], E8M0 (value = FP4 · 2^(scale − 127)).
/// Writes out [num_out_rows, groups] for rows row_begin, row_begin + row_step, ... (GGUF: elements
/// j and j + 16 in byte j; the scale byte is kept, its value being 2^(e−128) × the doubled FP4).
/// row_step 2 takes the gate (row_begin 0) or up (1) rows of the interleaved gate_up_proj.
void mxfp4_from_hf(const uint8_t* blocks, const uint8_t* scales, int64_t groups, int64_t row_begin,
                   int64_t row_step, int64_t num_out_rows, BlockMXFP4* out);

// ---- Small pieces of the formats, shared with the fast kernels (backend/cpu, backend/cuda). ----

/// IQ4_NL / IQ4_XS non-linear 4-bit codebook.
inline constexpr int8_t kIQ4NLValues[16] = {-127, -104, -83, -65, -49, -35, -22, -10,
                                            1,    13,   25,  38,  53,  69,  89,  113};
/// MXFP4: E2M1 values times 2 (the block scale is halved to compensate, see e8m0_to_f32_half).
inline constexpr int8_t kMXFP4Values[16] = {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12};

/// MXFP4 block scale: 2^(e-128) (= half of the E8M0 value 2^(e-127)), exact, e<2 as subnormals.
inline float e8m0_to_f32_half(uint8_t e) {
  const uint32_t bits = e < 2 ? (0x00200000u << e) : (uint32_t(e - 1) << 23);
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

/// Q4_K / Q5_K: the 6-bit scale and min of sub-block j (0..7) from the 12 packed scale bytes.
inline void get_scale_min_k4(int j, const uint8_t* q, uint8_t* sc, uint8_t* m) {
  if (j < 4) {
    *sc = q[j] & 63;
    *m = q[j + 4] & 63;
  } else {
    *sc = uint8_t((q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4));
    *m = uint8_t((q[j + 4] >> 4) | ((q[j] >> 6) << 4));
  }
}

/// Q3_K: the 16 signed 6-bit scales (already minus 32) from the 12 packed scale bytes.
inline void unpack_q3_k_scales(const uint8_t* b, int8_t* sc) {
  for (int i = 0; i < 4; ++i) {
    sc[i] = int8_t(((b[i] & 0xF) | ((b[8 + i] & 3) << 4)) - 32);
    sc[4 + i] = int8_t(((b[4 + i] & 0xF) | (((b[8 + i] >> 2) & 3) << 4)) - 32);
    sc[8 + i] = int8_t(((b[i] >> 4) | (((b[8 + i] >> 4) & 3) << 4)) - 32);
    sc[12 + i] = int8_t(((b[4 + i] >> 4) | (((b[8 + i] >> 6) & 3) << 4)) - 32);
  }
}

/// Round to nearest, ties to even, exactly as ggml's nearest_int (|v| ≤ 4194303).
inline int nearest_int(float v) {
  const float biased = v + 12582912.f;  // 1.5 * 2^23: the sum's low mantissa bits hold round(v)
  int32_t i;
  std::memcpy(&i, &biased, 4);
  return (i & 0x007fffff) - 0x00400000;
}

}  // namespace oxyd
