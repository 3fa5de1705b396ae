// CUDA softmax (see softmax.h). Row groups as in rms_norm.cu: blockDim.x threads per row, short
// rows several per block. Each thread keeps a running (max m, sum s of exp(v − m)); pairs merge
// as m = max(m1, m2), s = s1·e^(m1−m) + s2·e^(m2−m), with -inf maxima contributing 0.
#include "backend/cuda/softmax.h"

#include <cmath>

#include "backend/cuda/cuda_check.cuh"
#include "backend/cuda/kernel_utils.cuh"

namespace oxyd::backend::cuda {
namespace {

struct MaxSum {
  float m, s;
};

__device__ __forceinline__ MaxSum merge(MaxSum a, MaxSum b) {
  const float m = fmaxf(a.m, b.m);
  if (m == -INFINITY) return {m, 0.0f};
  const float sa = a.m == -INFINITY ? 0.0f : a.s * expf(a.m - m);
  const float sb = b.m == -INFINITY ? 0.0f : b.s * expf(b.m - m);
  return {m, sa + sb};
}

__device__ __forceinline__ MaxSum warp_merge(MaxSum v) {
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) {
    const MaxSum o{__shfl_xor_sync(0xffffffffu, v.m, off), __shfl_xor_sync(0xffffffffu, v.s, off)};
    v = merge(v, o);
  }
  return v;
}

// x, y [rows, n]; y may alias x.
template <typename T, int VEC>
__global__ void __launch_bounds__(1024) softmax_kernel(const T* x, T* y, int64_t rows, int n,
                                                       float scale) {
  __shared__ MaxSum scratch[kMaxRowsPerBlock * 32];
  using P = Pack<T, VEC>;
  const int64_t row = int64_t(blockIdx.x) * blockDim.y + threadIdx.y;
  const bool active = row < rows;
  const int num_packs = n / VEC;
  const P* xr = reinterpret_cast<const P*>(x + (active ? row : 0) * int64_t(n));
  P* yr = reinterpret_cast<P*>(y + (active ? row : 0) * int64_t(n));

  MaxSum acc{-INFINITY, 0.0f};
  if (active) {
    for (int p = threadIdx.x; p < num_packs; p += blockDim.x) {
      const P v = xr[p];
      float f[VEC];
      float pack_max = -INFINITY;
#pragma unroll
      for (int k = 0; k < VEC; ++k) {
        f[k] = scale * to_float(v.v[k]);
        pack_max = fmaxf(pack_max, f[k]);
      }
      if (pack_max == -INFINITY) continue;
      if (pack_max > acc.m) {
        acc.s = acc.m == -INFINITY ? 0.0f : acc.s * expf(acc.m - pack_max);
        acc.m = pack_max;
      }
#pragma unroll
      for (int k = 0; k < VEC; ++k) acc.s += expf(f[k] - acc.m);
    }
  }
  acc = warp_merge(acc);
  if (blockDim.x > 32) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, num_warps = blockDim.x >> 5;
    MaxSum* s = scratch + threadIdx.y * 32;
    if (lane == 0) s[warp] = acc;
    __syncthreads();
    acc = lane < num_warps ? s[lane] : MaxSum{-INFINITY, 0.0f};
    acc = warp_merge(acc);
  }
  if (!active) return;
  const float inv_sum = 1.0f / acc.s;  // all -inf: m = -inf, s = 0 → NaN below, like the reference

  for (int p = threadIdx.x; p < num_packs; p += blockDim.x) {
    const P v = xr[p];
    P out;
#pragma unroll
    for (int k = 0; k < VEC; ++k)
      out.v[k] = from_float<T>(expf(scale * to_float(v.v[k]) - acc.m) * inv_sum);
    yr[p] = out;
  }
}

template <typename T, int VEC>
void launch(const Tensor& x, float scale, const Tensor& y, cudaStream_t stream) {
  const int64_t rows = x.rows();
  const int n = int(x.cols());
  const RowGroups rg = row_groups(rows, n / VEC);
  softmax_kernel<T, VEC><<<rg.grid, rg.block, 0, stream>>>(x.ptr<const T>(), y.ptr<T>(), rows, n, scale);
  OXYD_CUDA_CHECK_LAUNCH();
}

}  // namespace

void softmax(const Tensor& x, float scale, const Tensor& y, const Stream& stream) {
  require_device(x, "softmax", "x");
  require_device(y, "softmax", "y");
  require_dtype(y, x.dtype, "softmax", "y");
  OXYD_CHECK(x.cols() <= INT32_MAX, "softmax: row length must fit in int32");
  if (x.numel() == 0) return;
  dispatch_float(x.dtype, "softmax", [&](auto tag) {
    using T = decltype(tag);
    constexpr int kVec = kVec16<T>;
    if (x.cols() % kVec == 0 && aligned16(x.data) && aligned16(y.data))
      launch<T, kVec>(x, scale, y, stream.handle());
    else
      launch<T, 1>(x, scale, y, stream.handle());
  });
}

}  // namespace oxyd::backend::cuda
