// ops::embedding front end: validation, then dispatch on device.
#include "ops/embedding.h"

#include <string>

#include "core/error.h"
#include "ops/dispatch.h"

namespace oxyd::ops {

void embedding(const Tensor& table, const Tensor& ids_t, const Tensor& out) {
  if (ids_t.dtype != DType::I32 || ids_t.ndim != 1)
    throw_error(ErrorCode::INVALID_ARGUMENT, "embedding: ids must be I32 [num_ids], got " +
                    std::string(dtype_name(ids_t.dtype)) + " " + ids_t.shape_str());
  const int64_t num_ids = ids_t.numel();
  if (table.ndim != 2)
    throw_error(ErrorCode::INVALID_ARGUMENT, "embedding: table must be 2-D [vocab, dim], got " + table.shape_str());
  if (out.dtype != DType::F32 || out.cols() != table.cols() || out.rows() != num_ids)
    throw_error(ErrorCode::INVALID_ARGUMENT, "embedding: out must be F32 [" + std::to_string(num_ids) + ", " +
                    std::to_string(table.cols()) + "], got " + std::string(dtype_name(out.dtype)) + " " +
                    out.shape_str());
  if (table.device != out.device || ids_t.device != table.device)
    throw_error(ErrorCode::INVALID_ARGUMENT, "embedding: table, ids and out must be on the same device");
  backend::Backend& b = device_backend(table.device, "embedding");
  if (!b.has_weight_kernel(table.dtype))
    throw_error(ErrorCode::UNSUPPORTED, "embedding: no decoder for table dtype " + std::string(dtype_name(table.dtype)));
  if (table.cols() % dtype_block_elems(table.dtype) != 0)
    throw_error(ErrorCode::INVALID_ARGUMENT, "embedding: dim is not a multiple of the dtype's block");
  if (num_ids > 0 && !ids_t.data) throw_error(ErrorCode::INVALID_ARGUMENT, "embedding: null ids");
  const int64_t vocab = table.dim(0);
  if (ids_t.device == Device::CPU) {  // host-readable: checked here once
    const int32_t* ids = ids_t.ptr<int32_t>();
    for (int64_t i = 0; i < num_ids; ++i)
      if (ids[i] < 0 || ids[i] >= vocab)
        throw_error(ErrorCode::INVALID_ARGUMENT, "embedding: token id " + std::to_string(ids[i]) + " at position " +
                        std::to_string(i) + " is outside the vocabulary [0, " + std::to_string(vocab) + ")");
  }
  b.get_rows(table, ids_t, out);
}

}  // namespace oxyd::ops
