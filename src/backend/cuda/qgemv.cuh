// The integer gemv's thread-block body (qdot.cuh units), shared by matmul.cu's gemv and
// moe_experts.cu's grouped expert gemv. A block of up to kQgemvThreads threads owns R weight rows
// from col0: thread t takes units t, t + blockDim, ... (32 elements each, coalesced across the
// threads) and, per unit, loads the M activation rows' units once for all R rows, then adds each
// row's integer dot (dp4a) into its M sums; store_block_sums adds them up and writes y.
#pragma once

#include <algorithm>
#include <cstdint>

#include "backend/cuda/kernel_utils.cuh"
#include "backend/cuda/qdot.cuh"

namespace oxyd::backend::cuda {

inline constexpr int kQgemvThreads = 128;

/// Threads per block for rows of k elements: one unit each, in whole warps, at most kQgemvThreads.
inline int qgemv_threads(int64_t k) {
  const int64_t units = k / qdot::kUnit;
  return int(std::min<int64_t>(kQgemvThreads, std::max<int64_t>(32, (units + 31) / 32 * 32)));
}

/// The end of both gemvs (this one and matmul.cu's float gemv): each thread's acc[i][r] (weight
/// row col0 + i, activation row r) summed over the block's threads (blockDim.x a multiple of 32,
/// at most kQgemvThreads) and written to y[r, col0 + i] (row stride n) for r < m, col < n.
template <int M, int R>
__device__ __forceinline__ void store_block_sums(const float (&acc)[R][M], float* __restrict__ y, int m, int n,
                                                 int col0) {
  const int tid = int(threadIdx.x), lane = tid & 31, warp = tid >> 5;
  __shared__ float part[kQgemvThreads / 32][M * R];
#pragma unroll
  for (int r = 0; r < M; ++r)
#pragma unroll
    for (int i = 0; i < R; ++i) {
      const float s = warp_sum(acc[i][r]);
      if (lane == 0) part[warp][r * R + i] = s;
    }
  __syncthreads();
  if (tid < M * R) {
    const int r = tid / R, col = col0 + tid % R;
    if (r < m && col < n) {
      float s = 0.0f;
      for (int v = 0; v < int(blockDim.x) / 32; ++v) s += part[v][tid];
      y[int64_t(r) * n + col] = s;
    }
  }
}

template <class F, int M, int R>
__device__ __forceinline__ void qgemv_block(const int8_t* __restrict__ xq, const float* __restrict__ xd,
                                            const uint8_t* __restrict__ w, float* __restrict__ y, int m, int n,
                                            int k, int64_t row_bytes, int col0) {
  const int tid = int(threadIdx.x), threads = int(blockDim.x);
  const uint8_t* wr[R];
#pragma unroll
  for (int i = 0; i < R; ++i) wr[i] = w + int64_t(min(col0 + i, n - 1)) * row_bytes;  // tail: reread
  const int units = k / qdot::kUnit, xblocks = k / qdot::kXBlock;
  float acc[R][M];
#pragma unroll
  for (int i = 0; i < R; ++i)
#pragma unroll
    for (int r = 0; r < M; ++r) acc[i][r] = 0.0f;
#pragma unroll 2
  for (int u = tid; u < units; u += threads) {
    qdot::XUnit xu[M];
#pragma unroll
    for (int r = 0; r < M; ++r) {
      if (r < m) F::load_x(xq + int64_t(r) * k, xd + int64_t(r) * xblocks, u, xu[r]);
      else qdot::zero(xu[r]);
    }
#pragma unroll
    for (int i = 0; i < R; ++i) F::template dot<M>(wr[i], u, xu, acc[i]);
  }
  store_block_sums<M, R>(acc, y, m, n, col0);
}

}  // namespace oxyd::backend::cuda
