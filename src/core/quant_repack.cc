// Repacks of checkpoint int4 / FP8 layouts into Q4_1 / Q8_0 (see quant_repack.h).
#include "core/quant_repack.h"

#include <vector>

#include "core/error.h"
#include "core/half.h"
#include "core/quant.h"

namespace oxyd {

bool int4_groups_block_aligned(const Int4Groups& w) {
  for (int64_t b = 0; b < w.cols; b += 32)
    for (int64_t i = b + 1; i < b + 32 && i < w.cols; ++i)
      if (w.g_idx[i] != w.g_idx[b]) return false;
  return true;
}

void repack_int4(const Int4Groups& w, DType dt, void* out) {
  OXYD_CHECK(w.cols % 32 == 0, "repack_int4: cols not a multiple of 32");
  const int64_t nb = w.cols / 32;
  if (dt == DType::Q4_1) {
    OXYD_CHECK(int4_groups_block_aligned(w), "repack_int4: a 32-block spans two groups");
    auto* o = static_cast<BlockQ4_1*>(out);
    for (int64_t r = 0; r < w.rows; ++r)
      for (int64_t b = 0; b < nb; ++b) {
        const int64_t g = w.g_idx[b * 32];
        const float s = w.scale[r * w.groups + g];
        BlockQ4_1& blk = o[r * nb + b];
        blk.d = f32_to_f16(s);
        // m from the rounded d, so that d·z + m is 0 up to m's own rounding.
        blk.m = f32_to_f16(-f16_to_f32(blk.d) * float(w.zero[r * w.groups + g]));
        const uint8_t* q = w.q + r * w.cols + b * 32;
        for (int j = 0; j < 16; ++j) blk.qs[j] = uint8_t(q[j] | (q[j + 16] << 4));  // ggml: j and j+16 share a byte
      }
    return;
  }
  OXYD_CHECK(dt == DType::Q8_0, "repack_int4: target must be Q4_1 or Q8_0");
  std::vector<float> row(static_cast<size_t>(w.cols));
  const int64_t row_bytes = dtype_row_bytes(DType::Q8_0, w.cols);
  for (int64_t r = 0; r < w.rows; ++r) {
    for (int64_t i = 0; i < w.cols; ++i) {
      const int64_t g = w.g_idx[i];
      row[i] = w.scale[r * w.groups + g] * float(int(w.q[r * w.cols + i]) - int(w.zero[r * w.groups + g]));
    }
    quantize_row(DType::Q8_0, row.data(), static_cast<uint8_t*>(out) + r * row_bytes, w.cols);
  }
}

void repack_fp8_block_q8_0(const uint8_t* w, int64_t rows, int64_t cols, const float* scale_inv, int64_t br,
                           int64_t bc, void* out) {
  OXYD_CHECK(cols % 32 == 0 && br > 0 && bc > 0, "repack_fp8_block_q8_0: bad shape");
  std::vector<float> row(static_cast<size_t>(cols));
  const int64_t row_bytes = dtype_row_bytes(DType::Q8_0, cols), sc_cols = (cols + bc - 1) / bc;
  for (int64_t r = 0; r < rows; ++r) {
    const float* s = scale_inv + (r / br) * sc_cols;
    for (int64_t i = 0; i < cols; ++i) row[i] = fp8_e4m3_to_f32(w[r * cols + i]) * s[i / bc];
    quantize_row(DType::Q8_0, row.data(), static_cast<uint8_t*>(out) + r * row_bytes, cols);
  }
}

}  // namespace oxyd
