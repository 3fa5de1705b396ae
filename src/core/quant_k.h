// Internal to core/quant_*.cc: the block encoders that live in their own files (K-quants and IQ4,
// ggml's reference quantizers without an importance matrix), one block at a time.
// Use quantize_row() from quant.h.
#pragma once

#include "core/dtype.h"

namespace oxyd {

void quantize_block_q2_k(const float* x, BlockQ2_K* y);  // x [256]
void quantize_block_q3_k(const float* x, BlockQ3_K* y);
void quantize_block_q4_k(const float* x, BlockQ4_K* y);
void quantize_block_q5_k(const float* x, BlockQ5_K* y);
void quantize_block_q6_k(const float* x, BlockQ6_K* y);
void quantize_block_iq4_nl(const float* x, BlockIQ4_NL* y);  // x [32]
void quantize_block_iq4_xs(const float* x, BlockIQ4_XS* y);  // x [256]

}  // namespace oxyd
