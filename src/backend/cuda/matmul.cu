// CUDA gemv and weight dequantization (see matmul.h).
//
// Float gemv (F16, BF16, MXFP4): a block of 128 threads owns R consecutive output columns (weight
// rows) and splits k among its threads in 8-element chunks: thread t takes chunks t, t + 128, ...
// of every one of its R rows. So a warp's load of one row covers 32 consecutive chunks and each
// lane has R independent weight loads per iteration (times the unroll) in flight. The chunk's 8
// activations of each of the m rows are loaded once (two float4) and used for all R rows; the
// weights are read evict-first so the activations stay in L1. Every weight byte is read from
// memory once for all m rows, the m·R sums stay in registers, and the warps' partial sums are
// added through shared memory. The integer gemv (below) has the same shape over 32-element units.
// Dequantize: one thread per piece.
#include "backend/cuda/matmul.h"

#include <algorithm>
#include <string>

#include "backend/cuda/cuda_check.cuh"
#include "backend/cuda/kernel_utils.cuh"
#include "backend/cuda/qdot.cuh"
#include "backend/cuda/qgemv.cuh"
#include "backend/cuda/quant_decode.cuh"

namespace oxyd::backend::cuda {
namespace {

constexpr int kGemvThreads = kQgemvThreads;  // store_block_sums sizes its scratch for it

/// R weight rows per block, U chunk iterations unrolled (loads in flight), for M activation rows.
template <class Dec, int M, int R, int U>
__global__ void __launch_bounds__(kGemvThreads)
    gemv_kernel(const float* __restrict__ x, const uint8_t* __restrict__ w, float* __restrict__ y,
                int m, int n, int k, int64_t row_bytes) {
  const int col0 = int(blockIdx.x) * R;
  const int tid = int(threadIdx.x);
  const uint8_t* wr[R];
#pragma unroll
  for (int i = 0; i < R; ++i) wr[i] = w + int64_t(min(col0 + i, n - 1)) * row_bytes;  // tail: reread
  const int chunks = k / 8;
  float acc[R][M];
#pragma unroll
  for (int i = 0; i < R; ++i)
#pragma unroll
    for (int r = 0; r < M; ++r) acc[i][r] = 0.0f;
#pragma unroll U
  for (int c = tid; c < chunks; c += kGemvThreads) {
    float xv[M][8];
#pragma unroll
    for (int r = 0; r < M; ++r) {
      if (r < m) {
        const float4* xr = reinterpret_cast<const float4*>(x + int64_t(r) * k + int64_t(c) * 8);
        const float4 a = __ldg(xr), b = __ldg(xr + 1);
        xv[r][0] = a.x, xv[r][1] = a.y, xv[r][2] = a.z, xv[r][3] = a.w;
        xv[r][4] = b.x, xv[r][5] = b.y, xv[r][6] = b.z, xv[r][7] = b.w;
      } else {
#pragma unroll
        for (int j = 0; j < 8; ++j) xv[r][j] = 0.0f;
      }
    }
#pragma unroll
    for (int i = 0; i < R; ++i) {
      float wv[8];
      Dec::decode8(wr[i], c, wv);
#pragma unroll
      for (int r = 0; r < M; ++r)
#pragma unroll
        for (int j = 0; j < 8; ++j) acc[i][r] = fmaf(wv[j], xv[r][j], acc[i][r]);
    }
  }
  store_block_sums<M, R>(acc, y, m, n, col0);
}

template <class Dec, int M, int R, int U>
void launch_gemv(const float* x, const uint8_t* w, float* y, int m, int n, int k, int64_t rb,
                 const Stream& stream) {
  gemv_kernel<Dec, M, R, U><<<ceil_div(n, R), kGemvThreads, 0, stream.handle()>>>(x, w, y, m, n, k, rb);
}

// Integer gemv (qdot.cuh, qgemv.cuh) for Q8_0, Q4_0, Q4_K, Q5_K, Q6_K, MXFP4. quantize_x_kernel:
// one warp per 32-element activation block (int8 values, one float scale).
__global__ void quantize_x_kernel(const float* __restrict__ x, int8_t* __restrict__ xq,
                                  float* __restrict__ xd, int64_t blocks) {
  const int64_t b = (int64_t(blockIdx.x) * blockDim.x + threadIdx.x) >> 5;  // the same for a warp
  const int lane = int(threadIdx.x & 31);
  if (b >= blocks) return;
  const float v = x[b * qdot::kXBlock + lane];
  const qdot::XScale sc = qdot::x_scale(warp_max(fabsf(v)));
  xq[b * qdot::kXBlock + lane] = int8_t(qdot::x_round(v, sc.id));
  if (lane == 0) xd[b] = sc.d;
}

template <class F, int M, int R>
__global__ void __launch_bounds__(kQgemvThreads)
    qgemv_kernel(const int8_t* __restrict__ xq, const float* __restrict__ xd, const uint8_t* __restrict__ w,
                 float* __restrict__ y, int m, int n, int k, int64_t row_bytes) {
  qgemv_block<F, M, R>(xq, xd, w, y, m, n, k, row_bytes, int(blockIdx.x) * R);
}

template <class F, int M, int R>
void launch_qgemv(const int8_t* xq, const float* xd, const uint8_t* w, float* y, int m, int n, int k,
                  int64_t rb, const Stream& stream) {
  qgemv_kernel<F, M, R><<<ceil_div(n, R), qgemv_threads(k), 0, stream.handle()>>>(xq, xd, w, y, m, n, k, rb);
}

// Output row r is w's row ids[r] (ids == nullptr: row r).
template <class Dec, typename T>
__global__ void dequantize_kernel(const uint8_t* __restrict__ w, T* __restrict__ out, int64_t rows,
                                  int k, int64_t row_bytes, const int32_t* __restrict__ ids) {
  constexpr int P = Dec::kPiece;
  const int pieces = k / P;
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= rows * pieces) return;
  const int64_t r = i / pieces;
  const int p = int(i % pieces);
  float v[P];
  Dec::decode(w + (ids ? int64_t(ids[r]) : r) * row_bytes, p, v);
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

size_t quantized_x_offset(int64_t m, int64_t k) { return size_t((m * k + 255) / 256 * 256); }

void quantize_activations(const Tensor& x, void* xq, const Stream& stream) {
  const int64_t m = x.rows(), k = x.cols();
  if (k % qdot::kXBlock != 0)
    throw Error(ErrorCode::INVALID_ARGUMENT, "cuda quantize_activations: k " + std::to_string(k) +
                                                 " is not a multiple of 32");
  const int64_t blocks = m * k / qdot::kXBlock;
  if (blocks == 0) return;
  int8_t* q = static_cast<int8_t*>(xq);
  quantize_x_kernel<<<ceil_div(blocks * 32, 256), 256, 0, stream.handle()>>>(
      x.ptr<const float>(), q, reinterpret_cast<float*>(q + quantized_x_offset(m, k)), blocks);
  OXYD_CUDA_CHECK_LAUNCH();
}

size_t quantized_x_bytes(int64_t m, int64_t k) {
  return quantized_x_offset(m, k) + size_t(m * k / qdot::kXBlock) * sizeof(float);
}

bool gemv_is_integer(DType t) {
  return qdot::dispatch(t, [](auto) {});
}

void gemv(const Tensor& x, const Tensor& w, const Tensor& y, Workspace& ws, const Stream& stream,
          const void* xq_ready) {
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
  const int mi = int(m), ni = int(n), ki = int(k);
  const int64_t rb = w.row_bytes();
  const uint8_t* wp = w.ptr<const uint8_t>();
  float* yp = y.ptr<float>();
  const bool integer = qdot::dispatch(w.dtype, [&](auto fmt) {
    using F = decltype(fmt);
    const void* xqv = xq_ready;
    if (!xqv) {
      void* q = ws.get(quantized_x_bytes(m, k));
      quantize_activations(x, q, stream);
      xqv = q;
    }
    const int8_t* xq = static_cast<const int8_t*>(xqv);
    const float* xd = reinterpret_cast<const float*>(xq + quantized_x_offset(m, k));
    if (m == 1) launch_qgemv<F, 1, 4>(xq, xd, wp, yp, mi, ni, ki, rb, stream);
    else if (m == 2) launch_qgemv<F, 2, 4>(xq, xd, wp, yp, mi, ni, ki, rb, stream);
    else if (m <= 4) launch_qgemv<F, 4, 4>(xq, xd, wp, yp, mi, ni, ki, rb, stream);
    else launch_qgemv<F, 8, 2>(xq, xd, wp, yp, mi, ni, ki, rb, stream);
    OXYD_CUDA_CHECK_LAUNCH();
  });
  if (integer) return;
  dispatch_weight(w.dtype, [&](auto dec) {
    using Dec = decltype(dec);
    const float* xp = x.ptr<const float>();
    // More activation rows: more weight rows per block so activation loads stay a small share.
    if (m == 1) launch_gemv<Dec, 1, 4, 2>(xp, wp, yp, mi, ni, ki, rb, stream);
    else if (m == 2) launch_gemv<Dec, 2, 4, 2>(xp, wp, yp, mi, ni, ki, rb, stream);
    else if (m <= 4) launch_gemv<Dec, 4, 8, 1>(xp, wp, yp, mi, ni, ki, rb, stream);
    else launch_gemv<Dec, 8, 8, 1>(xp, wp, yp, mi, ni, ki, rb, stream);
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
          w.ptr<const uint8_t>(), out.ptr<T>(), w.rows(), int(w.cols()), w.row_bytes(), nullptr);
      OXYD_CUDA_CHECK_LAUNCH();
    });
  });
}

void dequantize_rows(const Tensor& w, const int32_t* ids, int64_t num_ids, const Tensor& out,
                     const Stream& stream) {
  check_weight(w, "get_rows");
  require_device(out, "get_rows", "out");
  require_dtype(out, DType::F32, "get_rows", "out");
  if (out.rows() != num_ids || out.cols() != w.cols())
    throw Error(ErrorCode::INVALID_ARGUMENT, "cuda get_rows: out " + out.shape_str() + " must be [" +
                                                 std::to_string(num_ids) + ", " + std::to_string(w.cols()) + "]");
  if (num_ids == 0 || w.cols() == 0) return;
  dispatch_weight(w.dtype, [&](auto dec) {
    using Dec = decltype(dec);
    const int64_t total = num_ids * (w.cols() / Dec::kPiece);
    dequantize_kernel<Dec, float><<<ceil_div(total, 256), 256, 0, stream.handle()>>>(
        w.ptr<const uint8_t>(), out.ptr<float>(), num_ids, int(w.cols()), w.row_bytes(), ids);
    OXYD_CUDA_CHECK_LAUNCH();
  });
}

}  // namespace oxyd::backend::cuda
