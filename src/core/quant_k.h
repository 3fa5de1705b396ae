// Internal to core/quant_*.cc: the K-quant block encoders (ggml's quantize_row_q*_K_ref without an
// importance matrix), one 256-element super-block at a time. Use quantize_row() from quant.h.
#pragma once

#include "core/dtype.h"

namespace oxyd {

void quantize_block_q2_k(const float* x, BlockQ2_K* y);  // x [256]
void quantize_block_q3_k(const float* x, BlockQ3_K* y);
void quantize_block_q4_k(const float* x, BlockQ4_K* y);
void quantize_block_q5_k(const float* x, BlockQ5_K* y);
void quantize_block_q6_k(const float* x, BlockQ6_K* y);

}  // namespace oxyd
