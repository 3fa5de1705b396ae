// Internal interface between the matmul driver (driver.cc), the selection table (select.cc) and
// the kernel files. A kernel optionally prepares each
// activation row once (e.g. quantizes it to its own Q8 layout), then computes tiles of y.
#pragma once

#include <cstdint>

#include "backend/cpu/scratch_slots.h"
#include "core/dtype.h"
#include "core/thread_scratch.h"

namespace oxyd::backend::cpu {

/// One tile of y: y[i, j] for i < m, j < n (w, y already offset to the tile's first column).
struct TileArgs {
  DType wtype;
  int64_t k;
  const uint8_t* w;    // [n, k] rows in wtype, w_stride bytes apart
  int64_t w_stride;
  int64_t n;
  const uint8_t* a;    // [m] prepared activation rows, a_stride bytes apart (f32 x if no prepare)
  int64_t a_stride;
  int64_t m;
  float* y;            // [m, n] with row stride y_stride (elements)
  int64_t y_stride;
  ThreadScratch* scratch;  // the running pool thread's (tile slots only, scratch_slots.h)
};

struct MatmulKernel {
  /// Bytes of one prepared activation row; null when the tile reads the f32 rows of x directly.
  int64_t (*act_row_bytes)(int64_t k) = nullptr;
  void (*prepare)(const float* x, int64_t k, uint8_t* out) = nullptr;
  /// Alternative to the per-row pair: one buffer for all m rows in a layout of the kernel's own
  /// (t.a then points at it; t.a_stride is 0). prepare_all is called once per pool thread with
  /// (part, num_parts) and fills its share.
  int64_t (*act_bytes_all)(int64_t m, int64_t k) = nullptr;
  void (*prepare_all)(const float* x, int64_t m, int64_t k, uint8_t* out, int part, int num_parts) = nullptr;
  void (*tile)(const TileArgs& t) = nullptr;
};

// The entry points of the kernel files outside AVX-512 (those are in kernels_avx512.h). Each
// returns an empty MatmulKernel (tile == nullptr) for a dtype it does not serve; which one runs
// for a weight is decided by the table in select.cc.
MatmulKernel generic_scalar_kernel(DType t);  // scalar.cc: every format
MatmulKernel generic_avx2_kernel(DType t);    // generic_avx2.cc: every format
MatmulKernel avx2_rowdot_kernel(DType t);     // rowdot_avx2.cc: Q4_0 Q8_0 Q4_K Q6_K
MatmulKernel avx2_float_kernel(DType t);      // float_avx2.cc: F32 F16 BF16
MatmulKernel avx2_lowbit_kernel(DType t);     // lowbit_rowdot_avx2.cc: Q2_K Q3_K MXFP4
/// packed_avx2.cc: weights packed in PackLayout::AVX2 (pack.h); empty for other dtypes.
MatmulKernel avx2_packed_kernel(DType t);

}  // namespace oxyd::backend::cpu
