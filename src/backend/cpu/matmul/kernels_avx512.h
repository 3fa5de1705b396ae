// Entry points of the AVX-512 kernel files; select.cc's table says which one serves a weight.
// Each returns an empty MatmulKernel (tile == nullptr) for a dtype it does not handle.
#pragma once

#include "backend/cpu/matmul/kernel.h"

namespace oxyd::backend::cpu {

MatmulKernel avx512_q32_kernel(DType t);  // block32_avx512.cc: Q4_0 Q4_1 Q5_0 Q5_1 IQ4_NL MXFP4 Q8_0 IQ4_XS
MatmulKernel avx512_qk_kernel(DType t);   // kquant_avx512.cc: Q4_K Q5_K Q6_K (+ Q2_K Q3_K)
MatmulKernel avx512_float_kernel(DType t);  // float_avx512.cc: F32 F16 BF16
MatmulKernel generic_avx512_kernel(DType t);  // generic_avx512.cc: every format
/// amx_bf16_avx512.cc: BF16 weights on CPUs with AMX-BF16 (else empty).
MatmulKernel avx512_amx_kernel(DType t);
/// amx_int8_avx512.cc: the 32-block formats (not IQ4_XS) on CPUs with AMX-INT8 (else empty).
MatmulKernel avx512_amx_q8_kernel(DType t);
/// block32_panel_avx512.cc: the 32-block formats (not IQ4_XS) on VNNI, 16 weight rows per
/// register (else empty).
MatmulKernel avx512_q32_panel_kernel(DType t);
/// block32_panel_avx512.cc: the panel kernel over weights packed by matmul_pack (the formats of
/// avx512_q32_panel_kernel; w points at the packed groups, w_stride = 1/16 of a group), for any m.
MatmulKernel avx512_q32_packed_kernel(DType t);
/// float_packed_avx512.cc: F32 and BF16 weights packed by matmul_pack (w points at the packed
/// groups), any m.
MatmulKernel avx512_float_packed_kernel(DType t);
/// kquant_panel_avx512.cc: Q4_K, Q5_K and Q6_K on VNNI, likewise (else empty).
MatmulKernel avx512_qk_panel_kernel(DType t);
/// AMX tile configuration (palette 1), the layout LDTILECFG reads; shared by the AMX kernel files.
struct alignas(64) AmxTileConfig {
  uint8_t palette_id;
  uint8_t start_row;
  uint8_t reserved[14];
  uint16_t colsb[16];
  uint8_t rows[16];
};
/// amx_bf16_avx512.cc: whether this process may use AMX tiles (the CPU has AMX-TILE and Linux
/// granted the tile state, asked once per process).
bool amx_tiles_permitted();
/// The vdpbf16ps tile over bf16 activation rows (a_stride bytes apart, zero-padded to 32).
void avx512_bf16_rows(const TileArgs& t);
/// float_avx512.cc: a bf16 activation row's bytes (k rounded up to 32 elements), and x f32 [k] →
/// bf16 (round to nearest even), zero-padded to a multiple of 32 elements.
int64_t bf16_row_bytes(int64_t k);
void prep_bf16(const float* x, int64_t k, uint8_t* out);

}  // namespace oxyd::backend::cpu
