// Expert layout rewrites at load (see experts_layout.h). Shapes are checked by the caller.
#include "model/experts_layout.h"

#include <vector>

#include "core/quant.h"

namespace oxyd::model {

void experts_gate_up_from_input_major(const Tensor& gate_up, float* out) {
  const int64_t E = gate_up.dim(0), H = gate_up.dim(1), I2 = gate_up.dim(2), I = I2 / 2;
  std::vector<float> row(static_cast<size_t>(I2));
  const auto* src = static_cast<const uint8_t*>(gate_up.data);
  const int64_t row_bytes = dtype_row_bytes(gate_up.dtype, I2);
  for (int64_t e = 0; e < E; ++e)
    for (int64_t h = 0; h < H; ++h) {  // input feature h: column h of every output row
      dequantize_row(gate_up.dtype, src + (e * H + h) * row_bytes, row.data(), I2);
      float* o = out + e * I2 * H;
      for (int64_t i = 0; i < I; ++i) {
        o[i * H + h] = row[size_t(2 * i)];            // gate row i
        o[(I + i) * H + h] = row[size_t(2 * i + 1)];  // up row i
      }
    }
}

void experts_down_from_input_major(const Tensor& down, float* out) {
  const int64_t E = down.dim(0), I = down.dim(1), H = down.dim(2);
  std::vector<float> row(static_cast<size_t>(H));
  const auto* src = static_cast<const uint8_t*>(down.data);
  const int64_t row_bytes = dtype_row_bytes(down.dtype, H);
  for (int64_t e = 0; e < E; ++e)
    for (int64_t i = 0; i < I; ++i) {
      dequantize_row(down.dtype, src + (e * I + i) * row_bytes, row.data(), H);
      for (int64_t h = 0; h < H; ++h) out[(e * H + h) * I + i] = row[size_t(h)];
    }
}

void experts_bias_split(const Tensor& bias, float* gate, float* up) {
  const int64_t E = bias.dim(0), I2 = bias.dim(1), I = I2 / 2;
  std::vector<float> row(static_cast<size_t>(I2));
  const auto* src = static_cast<const uint8_t*>(bias.data);
  for (int64_t e = 0; e < E; ++e) {
    dequantize_row(bias.dtype, src + e * dtype_row_bytes(bias.dtype, I2), row.data(), I2);
    for (int64_t i = 0; i < I; ++i) gate[e * I + i] = row[size_t(2 * i)], up[e * I + i] = row[size_t(2 * i + 1)];
  }
}

void experts_gate_up_from_mxfp4(const Tensor& blocks, const Tensor& scales, void* out) {
  const int64_t E = blocks.dim(0), I2 = blocks.dim(1), G = blocks.dim(2), I = I2 / 2;
  const auto* b = static_cast<const uint8_t*>(blocks.data);
  const auto* s = static_cast<const uint8_t*>(scales.data);
  auto* o = static_cast<BlockMXFP4*>(out);
  for (int64_t e = 0; e < E; ++e) {
    const uint8_t* be = b + e * I2 * G * 16;
    const uint8_t* se = s + e * I2 * G;
    mxfp4_from_hf(be, se, G, 0, 2, I, o + e * I2 * G);          // gate: even rows
    mxfp4_from_hf(be, se, G, 1, 2, I, o + (e * I2 + I) * G);    // up: odd rows
  }
}

void experts_down_from_mxfp4(const Tensor& blocks, const Tensor& scales, void* out) {
  const int64_t rows = blocks.dim(0) * blocks.dim(1), G = blocks.dim(2);
  mxfp4_from_hf(static_cast<const uint8_t*>(blocks.data), static_cast<const uint8_t*>(scales.data), G, 0, 1, rows,
                static_cast<BlockMXFP4*>(out));
}

}  // namespace oxyd::model
