// Device helpers shared by the CUDA kernels: float <-> storage-type conversion (F32, BF16, F16),
// 16-byte vector packs, warp and block reductions, and the host-side dtype dispatch. Kept small
// and non-generic on purpose: every kernel is instantiated for at most these three types.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <string>

#include "core/tensor.h"

namespace oxyd::backend::cuda {

__device__ __forceinline__ float to_float(float v) { return v; }
__device__ __forceinline__ float to_float(__nv_bfloat16 v) { return __bfloat162float(v); }
__device__ __forceinline__ float to_float(__half v) { return __half2float(v); }

template <typename T> __device__ __forceinline__ T from_float(float v);
template <> __device__ __forceinline__ float from_float<float>(float v) { return v; }
template <> __device__ __forceinline__ __nv_bfloat16 from_float<__nv_bfloat16>(float v) {
  return __float2bfloat16_rn(v);
}
template <> __device__ __forceinline__ __half from_float<__half>(float v) {
  return __float2half_rn(v);
}

/// N elements of T loaded or stored as one aligned access (N·sizeof(T) = 16 gives LDG.128).
template <typename T, int N> struct alignas(sizeof(T) * N) Pack {
  T v[N];
};

/// Elements of T per 16-byte access.
template <typename T> inline constexpr int kVec16 = 16 / int(sizeof(T));

/// Loads N consecutive floats; p must be 16-byte aligned when N is a multiple of 4.
template <int N> __device__ __forceinline__ void load_floats(const float* p, float (&out)[N]) {
  if constexpr (N % 4 == 0) {
#pragma unroll
    for (int q = 0; q < N / 4; ++q) {
      const float4 v = reinterpret_cast<const float4*>(p)[q];
      out[4 * q] = v.x, out[4 * q + 1] = v.y, out[4 * q + 2] = v.z, out[4 * q + 3] = v.w;
    }
  } else {
#pragma unroll
    for (int k = 0; k < N; ++k) out[k] = p[k];
  }
}

/// The largest i in [0, count) with starts[i] ≤ v, for non-decreasing starts with starts[0] ≤ v:
/// the request owning flat token v (starts = query_start_loc), the expert owning grouped row v
/// (starts = MoE offsets); empty entries (equal starts) are passed over.
__device__ __forceinline__ int owner_of(const int32_t* starts, int count, int v) {
  int lo = 0, hi = count;
  while (hi - lo > 1) {
    const int mid = (lo + hi) / 2;
    if (starts[mid] <= v) lo = mid;
    else hi = mid;
  }
  return lo;
}

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) v += __shfl_xor_sync(0xffffffffu, v, off);
  return v;
}

__device__ __forceinline__ float warp_max(float v) {
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, off));
  return v;
}

/// Sum over the threads of one row group: threadIdx.x in [0, blockDim.x), blockDim.x a multiple
/// of 32 and ≤ 1024; rows of a 2-D block (threadIdx.y) reduce independently. `scratch` needs
/// 32 floats per row group. Every thread of the group gets the result.
__device__ __forceinline__ float row_group_sum(float v, float* scratch) {
  v = warp_sum(v);
  if (blockDim.x == 32) return v;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, num_warps = blockDim.x >> 5;
  float* s = scratch + threadIdx.y * 32;
  __syncthreads();  // scratch may still be read by a previous reduction
  if (lane == 0) s[warp] = v;
  __syncthreads();
  v = lane < num_warps ? s[lane] : 0.0f;
  return warp_sum(v);
}

/// Row-group layout shared by the row kernels (rms_norm, layer_norm, softmax): blockDim.x
/// threads own one row (one per 16-byte pack, 32..1024), rows shorter than 128 packs share a
/// block (blockDim.y rows, at most kMaxRowsPerBlock), grid.x covers the rows.
constexpr int kMaxRowsPerBlock = 4;
struct RowGroups {
  dim3 grid, block;
};
inline RowGroups row_groups(int64_t rows, int num_packs) {
  const int threads_per_row = num_packs >= 1024 ? 1024 : std::max(32, (num_packs + 31) / 32 * 32);
  const int rows_per_block =
      threads_per_row >= 128 ? 1 : std::min(kMaxRowsPerBlock, 128 / threads_per_row);
  return {dim3(unsigned((rows + rows_per_block - 1) / rows_per_block)),
          dim3(unsigned(threads_per_row), unsigned(rows_per_block))};
}

/// Host-side: the storage type of a float activation dtype.
template <typename F> void dispatch_float(DType dtype, const char* op, F&& f) {
  switch (dtype) {
    case DType::F32: f(float{}); break;
    case DType::BF16: f(__nv_bfloat16{}); break;
    case DType::F16: f(__half{}); break;
    default:
      throw Error(ErrorCode::UNSUPPORTED, std::string("cuda ") + op + ": dtype " +
                                              std::string(dtype_traits(dtype).name) +
                                              " not supported (expected F32, BF16 or F16)");
  }
}

/// Host-side: throws INVALID_ARGUMENT unless `t` is a CUDA tensor with data. Ops trust ops/ for
/// shapes; this only guards against handing host memory to a kernel.
inline void require_device(const Tensor& t, const char* op, const char* name) {
  if (t.device != Device::CUDA || (t.data == nullptr && t.numel() > 0))
    throw Error(ErrorCode::INVALID_ARGUMENT, std::string("cuda ") + op + ": tensor `" + name +
                                                 "` " + t.shape_str() +
                                                 " must be in CUDA device memory");
}

/// Host-side: throws INVALID_ARGUMENT unless `t` has dtype `want`.
inline void require_dtype(const Tensor& t, DType want, const char* op, const char* name) {
  if (t.dtype != want)
    throw Error(ErrorCode::INVALID_ARGUMENT,
                std::string("cuda ") + op + ": tensor `" + name + "` has dtype " +
                    std::string(dtype_traits(t.dtype).name) + ", expected " +
                    std::string(dtype_traits(want).name));
}

inline bool aligned16(const void* p) { return (reinterpret_cast<uintptr_t>(p) & 15u) == 0; }

inline unsigned ceil_div(int64_t a, int64_t b) { return unsigned((a + b - 1) / b); }

}  // namespace oxyd::backend::cuda
