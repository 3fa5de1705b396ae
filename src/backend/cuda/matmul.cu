// CUDA gemv and weight dequantization (see matmul.h). One warp per output column n: lane i
// decodes pieces i, i + 32, ... of weight row n (a warp's loads cover consecutive bytes of the
// row, so each byte comes from memory once) and multiplies them with the same columns of all m
// activation rows (x is small and stays in L1/L2). The m partial sums are reduced across the
// warp at the end. Dequantize: one thread per piece.
#include "backend/cuda/matmul.h"

#include <string>

#include "backend/cuda/cuda_check.cuh"
#include "backend/cuda/kernel_utils.cuh"
#include "backend/cuda/quant_decode.cuh"

namespace oxyd::backend::cuda {
namespace {

constexpr int kGemvWarps = 4;

template <class Dec, int M>
__global__ void __launch_bounds__(kGemvWarps * 32)
    gemv_kernel(const float* __restrict__ x, const uint8_t* __restrict__ w, float* __restrict__ y,
                int m, int n, int k, int64_t row_bytes) {
  constexpr int P = Dec::kPiece;
  const int col = int(blockIdx.x) * kGemvWarps + int(threadIdx.x >> 5);
  const int lane = int(threadIdx.x & 31);
  if (col >= n) return;
  const uint8_t* wr = w + int64_t(col) * row_bytes;
  const int pieces = k / P;
  float acc[M];
#pragma unroll
  for (int r = 0; r < M; ++r) acc[r] = 0.0f;
#pragma unroll 2  // two pieces' loads in flight per lane
  for (int p = lane; p < pieces; p += 32) {
    float wv[P];
    Dec::decode(wr, p, wv);
#pragma unroll
    for (int r = 0; r < M; ++r) {
      if (r < m) {
        const float4* xr = reinterpret_cast<const float4*>(x + int64_t(r) * k + int64_t(p) * P);
        float s = 0.0f;
#pragma unroll
        for (int q = 0; q < P / 4; ++q) {
          const float4 v = __ldg(xr + q);
          s = fmaf(wv[4 * q], v.x, s);
          s = fmaf(wv[4 * q + 1], v.y, s);
          s = fmaf(wv[4 * q + 2], v.z, s);
          s = fmaf(wv[4 * q + 3], v.w, s);
        }
        acc[r] += s;
      }
    }
  }
#pragma unroll
  for (int r = 0; r < M; ++r) {
    const float s = warp_sum(acc[r]);
    if (lane == 0 && r < m) y[int64_t(r) * n + col] = s;
  }
}

template <class Dec, typename T>
__global__ void dequantize_kernel(const uint8_t* __restrict__ w, T* __restrict__ out, int64_t rows,
                                  int k, int64_t row_bytes) {
  constexpr int P = Dec::kPiece;
  const int pieces = k / P;
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= rows * pieces) return;
  const int64_t r = i / pieces;
  const int p = int(i % pieces);
  float v[P];
  Dec::decode(w + r * row_bytes, p, v);
  T* o = out + r * k + int64_t(p) * P;
#pragma unroll
  for (int j = 0; j < P; ++j) o[j] = from_float<T>(v[j]);
}

void check_weight(const Tensor& w, const char* op) {
  require_device(w, op, "w");
  if (!gemv_supports(w.dtype))
    throw Error(ErrorCode::UNSUPPORTED, std::string("cuda ") + op + ": weight dtype " +
                                            std::string(dtype_traits(w.dtype).name) +
                                            " not supported (F16, BF16, Q8_0, Q4_0, Q4_K, Q5_K, "
                                            "Q6_K, MXFP4)");
  if (w.ndim != 2 || w.cols() % 8 != 0 || w.cols() % dtype_block_elems(w.dtype) != 0 ||
      w.cols() > INT32_MAX || w.rows() > INT32_MAX)
    throw Error(ErrorCode::INVALID_ARGUMENT,
                std::string("cuda ") + op + ": weight " + w.shape_str() +
                    " must be 2-D with k a multiple of 8 and of the block size");
  if (!aligned16(w.data))
    throw Error(ErrorCode::INVALID_ARGUMENT, std::string("cuda ") + op + ": weight must be 16-byte aligned");
}

}  // namespace

bool gemv_supports(DType t) {
  return dispatch_weight(t, [](auto) {});
}

void gemv(const Tensor& x, const Tensor& w, const Tensor& y, const Stream& stream) {
  check_weight(w, "gemv");
  require_device(x, "gemv", "x");
  require_device(y, "gemv", "y");
  require_dtype(x, DType::F32, "gemv", "x");
  require_dtype(y, DType::F32, "gemv", "y");
  const int64_t m = x.rows(), k = x.cols(), n = w.rows();
  if (k != w.cols() || y.rows() != m || y.cols() != n || m > kGemvMaxRows)
    throw Error(ErrorCode::INVALID_ARGUMENT, "cuda gemv: x " + x.shape_str() + ", w " +
                                                 w.shape_str() + ", y " + y.shape_str() +
                                                 " do not make y = x·wᵀ with m ≤ 8");
  if (!aligned16(x.data))
    throw Error(ErrorCode::INVALID_ARGUMENT, "cuda gemv: x must be 16-byte aligned");
  if (m == 0 || n == 0) return;
  const dim3 grid(ceil_div(n, kGemvWarps)), block(kGemvWarps * 32);
  dispatch_weight(w.dtype, [&](auto dec) {
    using Dec = decltype(dec);
    const float* xp = x.ptr<const float>();
    const uint8_t* wp = w.ptr<const uint8_t>();
    float* yp = y.ptr<float>();
    const int mi = int(m), ni = int(n), ki = int(k);
    const int64_t rb = w.row_bytes();
    if (m == 1) gemv_kernel<Dec, 1><<<grid, block, 0, stream.handle()>>>(xp, wp, yp, mi, ni, ki, rb);
    else if (m == 2) gemv_kernel<Dec, 2><<<grid, block, 0, stream.handle()>>>(xp, wp, yp, mi, ni, ki, rb);
    else if (m <= 4) gemv_kernel<Dec, 4><<<grid, block, 0, stream.handle()>>>(xp, wp, yp, mi, ni, ki, rb);
    else gemv_kernel<Dec, 8><<<grid, block, 0, stream.handle()>>>(xp, wp, yp, mi, ni, ki, rb);
    OXYD_CUDA_CHECK_LAUNCH();
  });
}

void dequantize(const Tensor& w, const Tensor& out, const Stream& stream) {
  check_weight(w, "dequantize");
  require_device(out, "dequantize", "out");
  if (out.rows() != w.rows() || out.cols() != w.cols())
    throw Error(ErrorCode::INVALID_ARGUMENT, "cuda dequantize: out " + out.shape_str() +
                                                 " must have the shape of w " + w.shape_str());
  if (w.numel() == 0) return;
  dispatch_weight(w.dtype, [&](auto dec) {
    using Dec = decltype(dec);
    dispatch_float(out.dtype, "dequantize", [&](auto tag) {
      using T = decltype(tag);
      const int64_t total = w.rows() * (w.cols() / Dec::kPiece);
      dequantize_kernel<Dec, T><<<ceil_div(total, 256), 256, 0, stream.handle()>>>(
          w.ptr<const uint8_t>(), out.ptr<T>(), w.rows(), int(w.cols()), w.row_bytes());
      OXYD_CUDA_CHECK_LAUNCH();
    });
  });
}

}  // namespace oxyd::backend::cuda
