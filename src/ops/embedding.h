// ops::embedding — token embedding lookup: out[i, :] = table[ids[i], :] as F32, from a table of
// any weight format matmul accepts. Validates ids against the table once, then dispatches.
#pragma once

#include <cstdint>

#include "core/tensor.h"

namespace oxyd::ops {

/// table [vocab, dim] (any matmul weight dtype), ids I32 [num_ids] on the table's device, out
/// [num_ids, dim] F32. Throws Error(INVALID_ARGUMENT) for mismatched shapes or devices, and, where
/// the ids are host-readable (CPU), for an id outside [0, vocab).
void embedding(const Tensor& table, const Tensor& ids, const Tensor& out);

}  // namespace oxyd::ops
