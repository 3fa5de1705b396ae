#include "model/linear_attn_layout.h"

#include <cstring>
#include <vector>

#include "core/error.h"
#include "core/quant.h"

namespace oxyd::model {

void rows_from_tiled(const Tensor& t, int64_t first, int64_t per_head, int64_t hk, int64_t hv, void* out) {
  const int64_t rb = t.row_bytes(), rows = t.rows();
  if (hk <= 0 || hv % hk || first + hv * per_head > rows)
    throw Error(ErrorCode::INVALID_ARGUMENT, "tiled value heads: " + std::to_string(hv) + " heads of " +
                                                 std::to_string(per_head) + " rows after row " + std::to_string(first) +
                                                 " do not fit " + t.shape_str());
  auto* o = static_cast<uint8_t*>(out);
  std::memcpy(o, t.data, size_t(rb * first));
  for (int64_t g = 0; g < hv; ++g)
    std::memcpy(o + (first + g * per_head) * rb, t.row(first + tiled_position(g, hk, hv) * per_head),
                size_t(rb * per_head));
  const int64_t tail = first + hv * per_head;
  std::memcpy(o + tail * rb, t.row(tail), size_t(rb * (rows - tail)));
}

DType cols_from_tiled_dtype(const Tensor& t, int64_t dv) {
  return dv % dtype_block_elems(t.dtype) == 0 ? t.dtype : DType::F32;
}

void cols_from_tiled(const Tensor& t, int64_t dv, int64_t hk, int64_t hv, void* out) {
  const int64_t cols = t.cols(), rows = t.rows();
  if (hk <= 0 || hv % hk || cols != hv * dv)
    throw Error(ErrorCode::INVALID_ARGUMENT, "tiled value heads: " + t.shape_str() + " is not [rows, " +
                                                 std::to_string(hv) + " x " + std::to_string(dv) + "]");
  const DType dt = cols_from_tiled_dtype(t, dv);
  auto* o = static_cast<uint8_t*>(out);
  if (dt == t.dtype) {  // whole blocks (or scalars) per head
    const int64_t hb = dv / dtype_block_elems(dt) * dtype_block_bytes(dt), rb = t.row_bytes();
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t g = 0; g < hv; ++g)
        std::memcpy(o + i * rb + g * hb, t.row(i) + tiled_position(g, hk, hv) * hb, size_t(hb));
    return;
  }
  std::vector<float> buf(static_cast<size_t>(cols));
  for (int64_t i = 0; i < rows; ++i) {
    dequantize_row(t.dtype, t.row(i), buf.data(), cols);
    float* dst = reinterpret_cast<float*>(o) + i * cols;
    for (int64_t g = 0; g < hv; ++g)
      std::memcpy(dst + g * dv, buf.data() + tiled_position(g, hk, hv) * dv, sizeof(float) * size_t(dv));
  }
}

void vec_from_tiled(const float* v, int64_t per_head, int64_t hk, int64_t hv, float* out) {
  for (int64_t g = 0; g < hv; ++g)
    std::memcpy(out + g * per_head, v + tiled_position(g, hk, hv) * per_head, sizeof(float) * size_t(per_head));
}

}  // namespace oxyd::model
