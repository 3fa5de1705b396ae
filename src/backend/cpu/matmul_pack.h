// Packed weights for the AVX-512 VNNI panel kernels (matmul_panel_avx512.h) on CPUs without
// AMX-INT8: Q8_0, Q4_0, Q4_1, Q5_0, Q5_1 and IQ4_NL rows rearranged once at load into groups of
// 16 rows, so that matmul reads each 32-block of 16 rows as whole registers instead of
// transposing it from 16 rows every call. At 16 activation rows that transposition was a quarter
// of a decode step.
//
// Group g (rows 16g..16g+15, the last group padded with copies of the last row) holds its nb
// blocks one after another; block b of the group is GB = 16 · block bytes:
//   codes: one 64-byte register per 4 code bytes of a block (Q8_0: 8, the nibble formats: 4):
//          byte 4L + j of register d = code byte 4d + j of row π(L), π(L) = 4·(L % 4) + L / 4 (the
//          lane order of load_transposed); Q8_0 codes with 0x80 flipped (unsigned, offset 128)
//   Q5_0, Q5_1: 8 words of 64 bits: bit 4L + j of word q = the fifth bit of element 4q + j of
//          row π(L)
//   scales: 16 f16, lane L = the scale of row π(L); Q4_1, Q5_1: then their 16 f16 mins likewise
// The same bytes as the original (16 rows × block bytes), plus the padding rows. Results are
// those of the panel kernel on the original rows, whatever the number of activation rows.
#pragma once

#include <cstdint>

#include "core/tensor.h"

namespace oxyd::backend::cpu {

/// Whether matmul on this CPU wants `t` weights packed: AVX-512 VNNI without usable AMX-INT8
/// (there the AMX kernels read the original rows), t packable, and packing not
/// switched off by set_matmul_pack(false).
bool matmul_packs(DType t);
/// Whether matmul runs the packed kernel for a weight with a packed copy: this CPU takes the
/// AVX-512 matmul path (AVX-512 with VNNI, BF16, VBMI; no lower ISA forced). Elsewhere matmul
/// reads the weight's original rows.
bool packed_kernel_runs();
/// Whether `t` has a packed layout at all (Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, IQ4_NL), whatever the CPU.
bool packable(DType t);
/// Bytes of the packed copy of a [n, k] weight of dtype t (n rounded up to 16); t packable.
int64_t matmul_packed_bytes(DType t, int64_t n, int64_t k);
/// Writes the packed copy of w (2-D, packable dtype) to out, matmul_packed_bytes(...) bytes.
/// Splits the work over threads of its own (not the global pool, which may be busy).
void matmul_pack(const Tensor& w, uint8_t* out);
/// Row r of a packed [n, k] weight back in its original block layout (row_bytes bytes at out).
void matmul_unpack_row(DType t, const uint8_t* packed, int64_t k, int64_t r, uint8_t* out);

/// Tests and benches: false makes matmul_packs() answer false (weights loaded meanwhile stay in
/// their original rows). matmul() uses a tensor's packed copy whenever it has one.
void set_matmul_pack(bool allowed);

}  // namespace oxyd::backend::cpu
