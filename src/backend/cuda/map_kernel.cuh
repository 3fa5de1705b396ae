// The one elementwise kernel behind elementwise.cu and activation.cu: y[r, c] = op(a[r, c],
// b[r, c]) over a [rows, cols] grid where a and b have their own row strides (0 = one row
// broadcast over all rows; 2·cols = the halves of a fused gate_up). Ops are small functors on
// floats; storage is F32, BF16 or F16, 16 bytes per access when every pointer and stride allows.
#pragma once

#include <algorithm>

#include "backend/cuda/cuda_check.cuh"
#include "backend/cuda/kernel_utils.cuh"

namespace oxyd::backend::cuda {

/// Operands of one map launch; strides in elements. b == nullptr for a unary op.
template <typename T> struct MapArgs {
  const T* a = nullptr;
  int64_t a_stride = 0;
  const T* b = nullptr;
  int64_t b_stride = 0;
  T* y = nullptr;  // [rows, cols], contiguous; may alias a or b element for element
  int64_t rows = 0, cols = 0;
};

constexpr int kMapThreads = 256;

// blockIdx.y walks rows (grid-stride), blockIdx.x·blockDim.x + threadIdx.x walks packs of a row.
template <typename T, int VEC, typename Op>
__global__ void __launch_bounds__(kMapThreads) map_kernel(MapArgs<T> args, Op op) {
  using P = Pack<T, VEC>;
  const int64_t num_packs = args.cols / VEC;
  for (int64_t r = blockIdx.y; r < args.rows; r += gridDim.y) {
    const P* a = reinterpret_cast<const P*>(args.a + r * args.a_stride);
    const P* b = reinterpret_cast<const P*>(args.b + r * args.b_stride);
    P* y = reinterpret_cast<P*>(args.y + r * args.cols);
    for (int64_t p = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; p < num_packs;
         p += int64_t(gridDim.x) * blockDim.x) {
      const P va = a[p];
      P vb;
      if constexpr (Op::kBinary) vb = b[p];
      P out;
#pragma unroll
      for (int k = 0; k < VEC; ++k) {
        const float fb = Op::kBinary ? to_float(vb.v[k]) : 0.0f;
        out.v[k] = from_float<T>(op(to_float(va.v[k]), fb));
      }
      y[p] = out;
    }
  }
}

/// Launches `op` over args on `stream`. Fully contiguous operands run as one long row.
template <typename T, typename Op> void launch_map(MapArgs<T> args, Op op, cudaStream_t stream) {
  if (args.rows == 0 || args.cols == 0) return;
  const bool flat = args.a_stride == args.cols && (!Op::kBinary || args.b_stride == args.cols);
  if (flat) {
    args.cols *= args.rows;
    args.a_stride = args.b_stride = args.cols;
    args.rows = 1;
  }
  constexpr int kVec = kVec16<T>;
  const bool vec_ok = args.cols % kVec == 0 && args.a_stride % kVec == 0 &&
                      args.b_stride % kVec == 0 && aligned16(args.a) && aligned16(args.y) &&
                      (!Op::kBinary || aligned16(args.b));
  const int vec = vec_ok ? kVec : 1;
  const int64_t num_packs = args.cols / vec;
  // Enough blocks to fill any current GPU several times over; the loops cover the rest.
  const int64_t blocks_x = std::min<int64_t>(ceil_div(num_packs, kMapThreads), 1 << 16);
  const int64_t blocks_y = std::min<int64_t>(args.rows, std::max<int64_t>(1, 4096 / blocks_x));
  const dim3 grid(unsigned(blocks_x), unsigned(std::min<int64_t>(blocks_y, 65535)));
  if (vec_ok) map_kernel<T, kVec, Op><<<grid, kMapThreads, 0, stream>>>(args, op);
  else map_kernel<T, 1, Op><<<grid, kMapThreads, 0, stream>>>(args, op);
  OXYD_CUDA_CHECK_LAUNCH();
}

/// Checks the operands of a map op and calls f(T{}) with the storage type of y.
template <typename F>
void dispatch_map(const char* op, const Tensor& y, std::initializer_list<const Tensor*> inputs, F&& f) {
  require_device(y, op, "y");
  for (const Tensor* t : inputs) {
    require_device(*t, op, "input");
    require_dtype(*t, y.dtype, op, "input");
  }
  dispatch_float(y.dtype, op, f);
}

}  // namespace oxyd::backend::cuda
