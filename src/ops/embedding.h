// ops::embedding — token embedding lookup: out[i, :] = table[ids[i], :] as F32, from a table of
// any weight format matmul accepts. Validates ids against the table once, then dispatches.
#pragma once

#include <cstdint>

#include "core/tensor.h"

namespace oxyd::ops {

/// table [vocab, dim] (any matmul weight dtype), ids [num_ids], out [num_ids, dim] F32.
/// Throws Error(INVALID_ARGUMENT) for an id outside [0, vocab) or mismatched shapes.
void embedding(const Tensor& table, const int32_t* ids, int64_t num_ids, const Tensor& out);

}  // namespace oxyd::ops
