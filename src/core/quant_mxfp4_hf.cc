// mxfp4_from_hf (see quant.h): gpt-oss's Hugging Face MXFP4 layout → GGUF MXFP4 blocks. Only the
// nibble order differs: HF packs consecutive elements (2k, 2k+1) into byte k, GGUF packs (j, j+16)
// into byte j (ARCHITECTURES §5.4; tests/quant/mxfp4_hf_test.cc checks it against transformers'
// own dequantizer).
#include "core/quant.h"

namespace oxyd {

void mxfp4_from_hf(const uint8_t* blocks, const uint8_t* scales, int64_t groups, int64_t row_begin,
                   int64_t row_step, int64_t num_out_rows, BlockMXFP4* out) {
  auto nibble = [](const uint8_t* in, int e) { return (e & 1) ? in[e >> 1] >> 4 : in[e >> 1] & 0xF; };
  for (int64_t r = 0; r < num_out_rows; ++r) {
    const int64_t src_row = row_begin + r * row_step;
    for (int64_t g = 0; g < groups; ++g) {
      const uint8_t* in = blocks + (src_row * groups + g) * 16;
      BlockMXFP4& b = out[r * groups + g];
      b.e = scales[src_row * groups + g];
      for (int j = 0; j < 16; ++j) b.qs[j] = uint8_t(nibble(in, j) | nibble(in, j + 16) << 4);
    }
  }
}

}  // namespace oxyd
