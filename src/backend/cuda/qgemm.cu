// Tensor-core matmul of block-format weights decoded tile by tile (see qgemm.h).
#include "backend/cuda/qgemm.h"

#include <mma.h>

#include <algorithm>

#include "backend/cuda/cuda_check.cuh"
#include "backend/cuda/kernel_utils.cuh"
#include "backend/cuda/quant_decode.cuh"

namespace oxyd::backend::cuda {
namespace {

using namespace nvcuda;

constexpr int kBM = 64, kBN = 64, kBK = 64;  // tile: x rows, weight rows, k per step
constexpr int kLds = kBK + 8;                 // BF16 tile row stride (a multiple of 8: WMMA's rule)
constexpr int kLdc = kBN + 4;                 // float stride of the output tile
constexpr int kThreads = 128;                 // 4 warps, each a 32 × 32 quarter of the tile
constexpr int kSplitMinK = 256;               // no split takes fewer k than this

// part[z][r][c] (z = blockIdx.z, the K split) = Σ_{k in split z} x[r, k]·w[c, k] over the
// CTA's 64 × 64 tile, x and w rounded to BF16.
template <class Dec>
__global__ void __launch_bounds__(kThreads)
    qgemm_kernel(const float* __restrict__ x, const uint8_t* __restrict__ w, float* __restrict__ part, int m,
                 int n, int k, int64_t row_bytes, int k_per_split) {
  __shared__ __align__(32) __nv_bfloat16 xs[kBM][kLds];
  __shared__ __align__(32) __nv_bfloat16 wsm[kBN][kLds];
  __shared__ __align__(32) float cs[kBM][kLdc];
  const int n0 = int(blockIdx.x) * kBN, m0 = int(blockIdx.y) * kBM;
  const int kb = int(blockIdx.z) * k_per_split, ke = min(k, kb + k_per_split);
  const int tid = int(threadIdx.x), warp = tid >> 5;
  const int wm = (warp >> 1) * 32, wn = (warp & 1) * 32;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[2][2];
#pragma unroll
  for (int i = 0; i < 2; ++i)
#pragma unroll
    for (int j = 0; j < 2; ++j) wmma::fill_fragment(acc[i][j], 0.0f);

  for (int k0 = kb; k0 < ke; k0 += kBK) {
    // x: 64 rows × 64 columns, 32 consecutive floats per thread (zero past m or the split's end).
    {
      const int r = tid >> 1, c0 = (tid & 1) * 32, gr = m0 + r;
#pragma unroll
      for (int c = 0; c < 32; c += 4) {
        float4 v = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        if (gr < m && k0 + c0 + c < ke) v = *reinterpret_cast<const float4*>(x + int64_t(gr) * k + k0 + c0 + c);
        xs[r][c0 + c] = __float2bfloat16_rn(v.x);
        xs[r][c0 + c + 1] = __float2bfloat16_rn(v.y);
        xs[r][c0 + c + 2] = __float2bfloat16_rn(v.z);
        xs[r][c0 + c + 3] = __float2bfloat16_rn(v.w);
      }
    }
    // w: 64 rows × 8 chunks of 8 elements, 4 chunks per thread (rows past n reread row n - 1;
    // their columns are never written out).
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const int q = tid + kThreads * j, r = q >> 3, c8 = q & 7, col = k0 + 8 * c8;
      float v[8];
      if (col < ke) {
        Dec::decode8(w + int64_t(min(n0 + r, n - 1)) * row_bytes, col >> 3, v);
      } else {
#pragma unroll
        for (int i = 0; i < 8; ++i) v[i] = 0.0f;
      }
#pragma unroll
      for (int i = 0; i < 8; ++i) wsm[r][8 * c8 + i] = __float2bfloat16_rn(v[i]);
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < kBK; kk += 16) {
      wmma::fragment<wmma::matrix_a, 16, 16, 16, __nv_bfloat16, wmma::row_major> a[2];
      wmma::fragment<wmma::matrix_b, 16, 16, 16, __nv_bfloat16, wmma::col_major> b[2];
#pragma unroll
      for (int i = 0; i < 2; ++i) wmma::load_matrix_sync(a[i], &xs[wm + 16 * i][kk], kLds);
#pragma unroll
      for (int j = 0; j < 2; ++j) wmma::load_matrix_sync(b[j], &wsm[wn + 16 * j][kk], kLds);  // B[k][c] = w[c][k]
#pragma unroll
      for (int i = 0; i < 2; ++i)
#pragma unroll
        for (int j = 0; j < 2; ++j) wmma::mma_sync(acc[i][j], a[i], b[j], acc[i][j]);
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < 2; ++i)
#pragma unroll
    for (int j = 0; j < 2; ++j)
      wmma::store_matrix_sync(&cs[wm + 16 * i][wn + 16 * j], acc[i][j], kLdc, wmma::mem_row_major);
  __syncthreads();
  float* out = part + int64_t(blockIdx.z) * m * n;
  for (int e = tid; e < kBM * kBN; e += kThreads) {
    const int r = e / kBN, c = e % kBN;
    if (m0 + r < m && n0 + c < n) out[int64_t(m0 + r) * n + n0 + c] = cs[r][c];
  }
}

// y[i] = Σ_z part[z][i], z in order.
__global__ void sum_splits_kernel(const float* __restrict__ part, float* __restrict__ y, int64_t count, int splits) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= count) return;
  float s = part[i];
  for (int z = 1; z < splits; ++z) s += part[int64_t(z) * count + i];
  y[i] = s;
}

}  // namespace

bool qgemm_supports(DType t) { return t != DType::F16 && t != DType::BF16 && dispatch_weight(t, [](auto) {}); }

void qgemm(const Tensor& x, const Tensor& w, const Tensor& y, Workspace& ws, const Stream& stream) {
  const int64_t m = x.rows(), k = x.cols(), n = w.rows();
  if (m < 1 || m > kQgemmMaxRows || !qgemm_supports(w.dtype) || k % 32 != 0)
    throw Error(ErrorCode::INVALID_ARGUMENT, "cuda qgemm: x " + x.shape_str() + ", w " + w.shape_str() +
                                                 " (" + std::string(dtype_traits(w.dtype).name) +
                                                 "): needs 1 ≤ m ≤ 256, a block format and k % 32 == 0");
  if (n == 0) return;
  // K splits so that about 4 CTAs per SM run, each split a whole number of 64-wide steps.
  const int64_t tiles = ((n + kBN - 1) / kBN) * ((m + kBM - 1) / kBM);
  int64_t splits = std::clamp<int64_t>((4 * int64_t(sm_count()) + tiles - 1) / tiles, 1, std::max<int64_t>(1, k / kSplitMinK));
  const int64_t k_per_split = ((k + splits - 1) / splits + kBK - 1) / kBK * kBK;
  splits = (k + k_per_split - 1) / k_per_split;
  float* part = splits == 1 ? y.ptr<float>() : static_cast<float*>(ws.get(size_t(splits * m * n) * sizeof(float)));
  const dim3 grid{unsigned((n + kBN - 1) / kBN), unsigned((m + kBM - 1) / kBM), unsigned(splits)};
  dispatch_weight(w.dtype, [&](auto dec) {
    using Dec = decltype(dec);
    qgemm_kernel<Dec><<<grid, kThreads, 0, stream.handle()>>>(x.ptr<const float>(), w.ptr<const uint8_t>(), part,
                                                                int(m), int(n), int(k), w.row_bytes(),
                                                                int(k_per_split));
    OXYD_CUDA_CHECK_LAUNCH();
  });
  if (splits > 1) {
    sum_splits_kernel<<<ceil_div(m * n, 256), 256, 0, stream.handle()>>>(part, y.ptr<float>(), m * n, int(splits));
    OXYD_CUDA_CHECK_LAUNCH();
  }
}

}  // namespace oxyd::backend::cuda
