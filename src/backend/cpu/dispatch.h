// Picks the kernel variant for active_isa() among the three copies of a kernel compiled from one
// *_impl.h (see simd.h). Usage: pick(simd_scalar::f, simd_avx2::f, simd_avx512::f).
#pragma once

#include "backend/cpu/isa.h"

namespace oxyd::backend::cpu {

template <typename Fn>
Fn pick(Fn scalar, Fn avx2, Fn avx512) {
  switch (active_isa()) {
    case Isa::AVX512: return avx512;
    case Isa::AVX2: return avx2;
    default: return scalar;
  }
}

/// Rows per thread chunk so that each chunk carries at least ~kMinChunkElems elements: below that
/// the hand-off to the pool costs more than the work.
inline constexpr int64_t kMinChunkElems = 16384;
inline int64_t row_grain(int64_t cols) { return cols >= kMinChunkElems ? 1 : kMinChunkElems / (cols > 0 ? cols : 1); }

}  // namespace oxyd::backend::cpu
