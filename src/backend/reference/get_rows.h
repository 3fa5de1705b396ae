// Reference embedding lookup (get_rows): rows of a table in any weight format, dequantized to F32.
// The plain oracle for backend/cpu and backend/cuda get_rows.
#pragma once

#include <cstdint>

#include "core/tensor.h"

namespace oxyd::backend::reference {

/// out[i, :] = dequantize(table[ids[i], :]). table any dequantizable dtype [num_rows, dim],
/// out F32 [num_ids, dim] (preallocated). An id outside [0, num_rows) throws
/// Error(INVALID_ARGUMENT) naming the id and its position; nothing is read out of bounds.
void get_rows(const Tensor& table, const int32_t* ids, int64_t num_ids, const Tensor& out);

}  // namespace oxyd::backend::reference
