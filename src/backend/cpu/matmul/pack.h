// Packed weights for the panel kernels: Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, IQ4_NL and MXFP4 rows rearranged once
// at load into groups of 16 rows, so that matmul reads each 32-block of 16 rows as whole registers
// instead of transposing it from 16 rows every call. At 16 activation rows that transposition was
// a quarter of a decode step. Two layouts, for the two kernels that read them:
//   AVX512: the VNNI panel kernel (panel_avx512.h) on CPUs without AMX-INT8;
//   AVX2:   the AVX2 packed kernel (packed_avx2.cc) on CPUs without AVX-512 VNNI.
//
// Group g (rows 16g..16g+15, the last group padded with copies of the last row) holds its nb
// blocks one after another; block b of the group is GB = 16 · block bytes:
//   codes: one 64-byte register per 4 code bytes of a block (Q8_0: 8, the nibble formats: 4):
//          byte 4L + j of register d = code byte 4d + j of row π(L), π(L) = 4·(L % 4) + L / 4 (the
//          lane order of load_transposed); AVX512: Q8_0 codes with 0x80 flipped (unsigned, offset
//          128); AVX2: as in the file (signed)
//   Q5_0, Q5_1, 64 bytes of fifth bits:
//          AVX512: 8 words of 64 bits: bit 4L + j of word q = the fifth bit of element 4q + j of
//          row π(L);
//          AVX2: byte 4L + j: bit d (d < 4) = the fifth bit of element 4d + j of row π(L), bit
//          4 + d that of element 16 + 4d + j (the low and high nibble of code byte 4L + j of
//          register d)
//   scales: 16 f16, lane L = the scale of row π(L); Q4_1, Q5_1: then their 16 f16 mins likewise;
//          MXFP4: 16 e8m0 bytes likewise (272 bytes per group block, the file's 17 per row)
// Q4_K, Q5_K and IQ4_XS, AVX2 only, per 256-element super-block of a group: its 8 sub-blocks of 32
// elements as 4 code registers each, in Q4_0's nibble order (code byte i: element i, high nibble
// element 16 + i), Q5_K's followed by their 64 bytes of fifth bits as Q5_0's AVX2 ones; then a
// scale byte per sub-block and row (byte 16j + L: sub-block j, row π(L)): Q4_K, Q5_K the 6-bit
// scales, the 6-bit mins likewise, 16 f16 d and 16 f16 dmin (2368 and 2880 bytes: 148 and 180 per
// row against the file's 144 and 176); IQ4_XS the int8 ls − 32 and 16 f16 d (2208 bytes: 138
// per row against 136).
// Q6_K, AVX2 only, per super-block of a group: per sub-block of 32 elements 4 code registers of
// the low 4 bits in Q4_0's order, then 2 registers of the high 2 bits (byte 4L + j of register
// 4 + p: bits 4(d % 2) + 2h.. of register d = 2p + d % 2's nibble h), then the int8 scales as pairs
// (byte 32j + 2L + t: scale 2j + t of row π(L)) and 16 f16 d: 3360 bytes, the file's 210 per row.
// F32, AVX512 only: group g holds k × 16 floats, element e of row 16g + L at float 16e + L (the
// outer-product kernel of float_packed_avx512.cc reads 16 outputs' weights as one register).
// BF16, AVX512 only: group g holds ceil(k / 2) × 16 dwords, dword 16p + L = elements 2p (low half)
// and 2p + 1 of row 16g + L (an odd k's last high half 0); the same kernel, with vdpbf16ps.
// The same bytes as the original (16 rows × block bytes), plus the padding rows. Results are
// those of the panel kernel on the original rows, whatever the number of activation rows (F32:
// one FMA chain per output over k, not the row-dot kernel's order).
#pragma once

#include <cstdint>

#include "core/tensor.h"

namespace oxyd::backend::cpu {

/// A packed copy's layout (its PreparedWeight::layout tag, backend/backend.h): which kernel reads it.
enum class PackLayout : uint8_t { NONE = 0, AVX512 = 1, AVX2 = 2 };

/// The layout matmul on this CPU wants `t` weights packed in, NONE for none: AVX512 on the AVX-512
/// matmul path without usable AMX-INT8 (there the AMX kernels read the original rows), and AVX2 there
/// for the formats packable in AVX2's layout only (Q4_K, Q5_K, Q6_K, IQ4_XS); AVX2 on the AVX2 path;
/// NONE too when t is not packable or packing is switched off by set_matmul_pack(false).
PackLayout matmul_pack_layout(DType t);
/// matmul_pack_layout(t) != NONE.
bool matmul_packs(DType t);
/// The layout whose packed kernel matmul runs on this CPU now (AVX-512 with VNNI, BF16, VBMI:
/// AVX512; AVX2 with BMI2: AVX2; forced lower ISAs count), NONE where none does. A weight packed
/// in another layout is read from its original rows.
PackLayout packed_kernel_layout();
/// packed_kernel_layout() != NONE.
bool packed_kernel_runs();
/// Whether `t` has a packed layout at all (Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, IQ4_NL, MXFP4; Q4_K, Q5_K,
/// Q6_K and IQ4_XS in the AVX2 layout only; F32 in the AVX512 one only), whatever the CPU; and
/// whether it has one in `layout`.
bool packable(DType t);
bool packable(DType t, PackLayout layout);
/// Bytes of the packed copy of a [n, k] weight of dtype t (n rounded up to 16), the same for both
/// layouts; t packable.
int64_t matmul_packed_bytes(DType t, int64_t n, int64_t k);
/// Writes the packed copy of w (2-D, packable dtype) in `layout` (not NONE) to out,
/// matmul_packed_bytes(...) bytes. Splits the work over threads of its own (not the global pool,
/// which may be busy).
void matmul_pack(const Tensor& w, PackLayout layout, uint8_t* out);
/// Row r of a packed [n, k] weight back in its original block layout (row_bytes bytes at out).
void matmul_unpack_row(DType t, PackLayout layout, const uint8_t* packed, int64_t k, int64_t r, uint8_t* out);

/// Tests and benches: false makes matmul_packs() answer false (weights loaded meanwhile stay in
/// their original rows). matmul() uses a tensor's packed copy whenever its layout's kernel runs.
void set_matmul_pack(bool allowed);

}  // namespace oxyd::backend::cpu
