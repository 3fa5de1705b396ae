// Portable decoders from every weight format to f32, used by the generic matmul path (formats
// without a hand-written SIMD kernel, and the scalar ISA variant) and by get_rows. Written from
// the byte layouts of ggml-common.h (docs/architecture.md §9); they are not the oracle (backend/reference is).
#pragma once

#include <cstdint>

#include "core/dtype.h"

namespace oxyd::backend::cpu {

/// True for the weight dtypes matmul and get_rows accept.
bool decodable(DType t);

/// Decodes n elements (a multiple of t's block) starting at a block boundary. src is read-only.
void decode_row(DType t, const void* src, float* dst, int64_t n);

/// The 16-entry value tables of IQ4_NL/IQ4_XS and MXFP4 (the latter doubled: E2M1 × 2).
extern const int8_t kIQ4NLValues[16];
extern const int8_t kMXFP4Values[16];

}  // namespace oxyd::backend::cpu
