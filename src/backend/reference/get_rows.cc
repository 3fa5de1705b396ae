// Embedding lookup by dequantizing whole rows; see get_rows.h.
#include "backend/reference/get_rows.h"

#include <string>

#include "core/error.h"
#include "core/quant.h"

namespace oxyd::backend::reference {

void get_rows(const Tensor& table, const int32_t* ids, int64_t num_ids, const Tensor& out) {
  auto bad = [](const std::string& msg) { throw_error(ErrorCode::INVALID_ARGUMENT, "reference::get_rows: " + msg); };
  if (table.device != Device::CPU || out.device != Device::CPU) bad("expected CPU tensors");
  if (table.ndim != 2) bad("expected a 2-D table [num_rows, dim], got " + table.shape_str());
  if (out.dtype != DType::F32) bad("expected F32 out, got " + std::string(dtype_name(out.dtype)));
  const int64_t num_rows = table.dim(0), dim = table.dim(1);
  if (num_ids < 0 || out.rows() != num_ids || out.cols() != dim)
    bad("expected out [" + std::to_string(num_ids) + ", " + std::to_string(dim) + "], got " + out.shape_str());
  if (!can_dequantize(table.dtype))
    throw_error(ErrorCode::UNSUPPORTED, "reference::get_rows: no decoder for table dtype " + std::string(dtype_name(table.dtype)));
  if (num_ids > 0 && (!ids || !table.data || !out.data)) bad("null data pointer");
  for (int64_t i = 0; i < num_ids; ++i) {
    if (ids[i] < 0 || ids[i] >= num_rows)
      bad("id " + std::to_string(ids[i]) + " at position " + std::to_string(i) + " is outside [0, " +
          std::to_string(num_rows) + ")");
  }
  for (int64_t i = 0; i < num_ids; ++i) dequantize_row(table.dtype, table.row(ids[i]), out.row<float>(i), dim);
}

}  // namespace oxyd::backend::reference
