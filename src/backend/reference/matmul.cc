// y = x · wᵀ in plain scalar code with double accumulation; see matmul.h.
#include "backend/reference/matmul.h"

#include <string>
#include <vector>

#include "core/error.h"
#include "core/quant.h"

namespace oxyd::backend::reference {

void matmul(const Tensor& x, const Tensor& w, const Tensor& y) {
  auto bad = [](const std::string& msg) { throw_error(ErrorCode::INVALID_ARGUMENT, "reference::matmul: " + msg); };
  if (x.device != Device::CPU || w.device != Device::CPU || y.device != Device::CPU) bad("expected CPU tensors");
  if (x.dtype != DType::F32 || y.dtype != DType::F32)
    bad("expected F32 x and y, got x " + std::string(dtype_name(x.dtype)) + ", y " + std::string(dtype_name(y.dtype)));
  if (w.ndim != 2) bad("expected a 2-D weight [n, k], got " + w.shape_str());
  const int64_t m = x.rows(), k = x.cols(), n = w.dim(0);
  if (w.dim(1) != k) bad("x " + x.shape_str() + " and w " + w.shape_str() + " disagree on k");
  if (y.rows() != m || y.cols() != n)
    bad("expected y [" + std::to_string(m) + ", " + std::to_string(n) + "], got " + y.shape_str());
  if (!can_dequantize(w.dtype))
    throw_error(ErrorCode::UNSUPPORTED, "reference::matmul: no decoder for weight dtype " + std::string(dtype_name(w.dtype)));
  if (m * n == 0) return;
  if ((m * k != 0 && !x.data) || !w.data || !y.data) bad("null data pointer");

  std::vector<float> w_row(static_cast<size_t>(k));  // [k]
  for (int64_t j = 0; j < n; ++j) {
    dequantize_row(w.dtype, w.row(j), w_row.data(), k);
    for (int64_t i = 0; i < m; ++i) {
      const float* xi = x.row<float>(i);  // [k]
      double acc = 0.0;
      for (int64_t c = 0; c < k; ++c) acc += double(xi[c]) * double(w_row[size_t(c)]);
      y.row<float>(i)[j] = float(acc);
    }
  }
}

}  // namespace oxyd::backend::reference
