// CUDA get_rows: the embedding lookup of ops::embedding on device tables. F32 tables are gathered
// row by row; F16 / BF16 and the GGUF block formats are decoded by matmul.h's dequantize_rows, so a
// looked-up row is bit-identical to core's dequantize_row. The ids are read on the device.
#pragma once

#include <cstdint>

#include "backend/cuda/device.h"
#include "core/tensor.h"

namespace oxyd::backend::cuda {

/// table [n, dim] (F32, or a dtype gemv_supports) in device memory; ids [num_ids] I32 in DEVICE
/// memory, each in [0, n); out F32 [num_ids, dim]. Queued on `stream`.
void get_rows(const Tensor& table, const int32_t* ids, int64_t num_ids, const Tensor& out, const Stream& stream);

}  // namespace oxyd::backend::cuda
