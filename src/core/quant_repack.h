// One-time repacks of the quantized linear layouts Hugging Face checkpoints ship (block-scaled FP8,
// AutoAWQ GEMM int4, GPTQ int4) into block formats the CPU matmul reads (docs/architecture.md §9).
// Not a kernel: each runs once per weight at load. The layouts, from the public writers:
//  * FP8: w [rows, cols] E4M3, weight_scale_inv [ceil(rows/br), ceil(cols/bc)] (the multiplier).
//  * AWQ GEMM: qweight [in, out/8] int32, nibble i (bits 4i..4i+3) of word c holding output column
//    8c + kAwqOrder[i]; qzeros [in/g, out/8] packed the same; scales [in/g, out]; w = (q − z)·s.
//  * GPTQ: qweight [in/8, out] int32, nibble j of word r holding input row 8r + j; qzeros
//    [groups, out/8] packed along the outputs (nibble j = column 8c + j), stored − 1 in the v1
//    format; scales [groups, out]; g_idx [in] names each input's group; w = (q − z)·s.
// Invariant: output rows are the checkpoint's output features, [out, in] as nn.Linear's weight.
#pragma once

#include <cstdint>

#include "core/dtype.h"

namespace oxyd {

/// AutoAWQ's GEMM packing order: nibble i of a word holds column 8c + kAwqOrder[i].
inline constexpr int kAwqOrder[8] = {0, 2, 4, 6, 1, 3, 5, 7};

/// Group-quantized int4 weight in planar form, as both checkpoint layouts unpack to.
struct Int4Groups {
  int64_t rows = 0, cols = 0, groups = 0;  // rows = out features, cols = in features
  const uint8_t* q = nullptr;              // [rows, cols] values 0..15
  const uint8_t* zero = nullptr;           // [rows, groups] zero points 0..16 (GPTQ v1: stored + 1)
  const float* scale = nullptr;            // [rows, groups]
  const int32_t* g_idx = nullptr;          // [cols] group of each input
};

/// Whether each 32-input block of `w` lies in one group (then Q4_1 holds it, see repack_int4).
bool int4_groups_block_aligned(const Int4Groups& w);

/// Repacks an int4 weight into `out` ([rows, cols] of `dt`): Q4_1 (d = s, m = −s·z, both f16, q
/// kept: exact up to the f16 rounding of s and s·z; needs int4_groups_block_aligned) or Q8_0 (the
/// exact values requantized per 32, for act-order weights whose 32-blocks mix groups).
/// cols must be a multiple of 32.
void repack_int4(const Int4Groups& w, DType dt, void* out);

/// FP8 E4M3 [rows, cols] × scale_inv [ceil(rows/br), ceil(cols/bc)] f32 → Q8_0 rows (each 32
/// block of the exact product requantized, ggml's Q8_0 rule). cols must be a multiple of 32.
void repack_fp8_block_q8_0(const uint8_t* w, int64_t rows, int64_t cols, const float* scale_inv, int64_t br,
                           int64_t bc, void* out);

}  // namespace oxyd
