// Block decoders (→ f32) for every weight format; see decode.h.
#include "backend/cpu/matmul/decode.h"

#include <cmath>
#include <cstring>

#include "backend/cpu/matmul/decode_impl.h"

namespace oxyd::backend::cpu {

const int8_t kIQ4NLValues[16] = {-127, -104, -83, -65, -49, -35, -22, -10,
                                 1,    13,   25,  38,  53,  69,  89,  113};
const int8_t kMXFP4Values[16] = {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12};

void decode_row(DType t, const void* src, float* dst, int64_t n) { decode_row_impl(t, src, dst, n); }

bool decodable(DType t) {
  switch (t) {
    case DType::F32: case DType::F16: case DType::BF16: case DType::Q4_0: case DType::Q4_1:
    case DType::Q5_0: case DType::Q5_1: case DType::Q8_0: case DType::Q2_K: case DType::Q3_K:
    case DType::Q4_K: case DType::Q5_K: case DType::Q6_K: case DType::IQ4_NL: case DType::IQ4_XS:
    case DType::MXFP4:
      return true;
    default:
      return false;
  }
}

}  // namespace oxyd::backend::cpu
