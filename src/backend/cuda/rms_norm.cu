// CUDA RMSNorm (see rms_norm.h). A row group of blockDim.x threads (32..1024) owns one row: pass
// one sums x² with 16-byte loads, a warp-shuffle + shared-memory reduction gives the row's
// scale, pass two re-reads x (now in L1/L2) and writes y. Short rows pack several per block.
#include "backend/cuda/rms_norm.h"

#include "backend/cuda/cuda_check.cuh"
#include "backend/cuda/kernel_utils.cuh"

#include <type_traits>

namespace oxyd::backend::cuda {
namespace {

// x, y [rows, n]; w [n] or nullptr. y may alias x, hence no __restrict__ on them.
template <typename T, int VEC>
__global__ void __launch_bounds__(1024) rms_norm_kernel(const T* x, const float* __restrict__ w,
                                                        T* y, int64_t rows, int n, float eps) {
  __shared__ float scratch[kMaxRowsPerBlock * 32];
  using P = Pack<T, VEC>;
  const int64_t row = int64_t(blockIdx.x) * blockDim.y + threadIdx.y;
  const bool active = row < rows;
  const int num_packs = n / VEC;
  const P* xr = reinterpret_cast<const P*>(x + (active ? row : 0) * int64_t(n));
  P* yr = reinterpret_cast<P*>(y + (active ? row : 0) * int64_t(n));

  float sum_sq = 0.0f;
  if (active) {
    for (int p = threadIdx.x; p < num_packs; p += blockDim.x) {
      const P v = xr[p];
#pragma unroll
      for (int k = 0; k < VEC; ++k) {
        const float f = to_float(v.v[k]);
        sum_sq = fmaf(f, f, sum_sq);
      }
    }
  }
  sum_sq = row_group_sum(sum_sq, scratch);  // every thread of the block takes part
  if (!active) return;
  const float inv_rms = rsqrtf(sum_sq / float(n) + eps);

  for (int p = threadIdx.x; p < num_packs; p += blockDim.x) {
    const P v = xr[p];
    float wv[VEC];
    if (w) {
      load_floats<VEC>(w + p * VEC, wv);
    } else {
#pragma unroll
      for (int k = 0; k < VEC; ++k) wv[k] = 1.0f;
    }
    P out;
#pragma unroll
    for (int k = 0; k < VEC; ++k) out.v[k] = from_float<T>(to_float(v.v[k]) * inv_rms * wv[k]);
    yr[p] = out;
  }
}

// Fused add: pass one writes h = x + r (rounded to T) into r and sums h²; pass two re-reads the
// same packs of r (this thread's own writes) and writes y.
template <typename T, int VEC>
__global__ void __launch_bounds__(1024) add_rms_norm_kernel(const T* x, T* __restrict__ res,
                                                            const float* __restrict__ w, T* y,
                                                            int64_t rows, int n, float eps) {
  __shared__ float scratch[kMaxRowsPerBlock * 32];
  using P = Pack<T, VEC>;
  const int64_t row = int64_t(blockIdx.x) * blockDim.y + threadIdx.y;
  const bool active = row < rows;
  const int num_packs = n / VEC;
  const int64_t base = (active ? row : 0) * int64_t(n);
  const P* xr = reinterpret_cast<const P*>(x + base);
  P* rr = reinterpret_cast<P*>(res + base);
  P* yr = reinterpret_cast<P*>(y + base);

  float sum_sq = 0.0f;
  if (active) {
    for (int p = threadIdx.x; p < num_packs; p += blockDim.x) {
      const P a = xr[p], b = rr[p];
      P h;
#pragma unroll
      for (int k = 0; k < VEC; ++k) {
        h.v[k] = from_float<T>(to_float(a.v[k]) + to_float(b.v[k]));
        const float f = to_float(h.v[k]);
        sum_sq = fmaf(f, f, sum_sq);
      }
      rr[p] = h;
    }
  }
  sum_sq = row_group_sum(sum_sq, scratch);
  if (!active) return;
  const float inv_rms = rsqrtf(sum_sq / float(n) + eps);
  for (int p = threadIdx.x; p < num_packs; p += blockDim.x) {
    const P h = rr[p];
    float wv[VEC];
    if (w) {
      load_floats<VEC>(w + p * VEC, wv);
    } else {
#pragma unroll
      for (int k = 0; k < VEC; ++k) wv[k] = 1.0f;
    }
    P out;
#pragma unroll
    for (int k = 0; k < VEC; ++k) out.v[k] = from_float<T>(to_float(h.v[k]) * inv_rms * wv[k]);
    yr[p] = out;
  }
}

template <typename T, int VEC>
void launch(const Tensor& x, const float* w, float eps, const Tensor& y, cudaStream_t stream) {
  const int64_t rows = x.rows();
  const int n = int(x.cols());
  const RowGroups rg = row_groups(rows, n / VEC);
  rms_norm_kernel<T, VEC><<<rg.grid, rg.block, 0, stream>>>(x.ptr<const T>(), w, y.ptr<T>(), rows, n, eps);
  OXYD_CUDA_CHECK_LAUNCH();
}

}  // namespace

void rms_norm(const Tensor& x, const Tensor* weight, float eps, const Tensor& y,
              const Stream& stream) {
  require_device(x, "rms_norm", "x");
  require_device(y, "rms_norm", "y");
  require_dtype(y, x.dtype, "rms_norm", "y");
  OXYD_CHECK(x.cols() <= INT32_MAX, "rms_norm: row length must fit in int32");
  const float* w = nullptr;
  if (weight) {
    require_device(*weight, "rms_norm", "weight");
    require_dtype(*weight, DType::F32, "rms_norm", "weight");
    w = weight->ptr<const float>();
  }
  if (x.numel() == 0) return;
  dispatch_float(x.dtype, "rms_norm", [&](auto tag) {
    using T = decltype(tag);
    constexpr int kVec = kVec16<T>;
    const bool vec_ok = x.cols() % kVec == 0 && aligned16(x.data) && aligned16(y.data) &&
                        (w == nullptr || aligned16(w));
    if (vec_ok) launch<T, kVec>(x, w, eps, y, stream.handle());
    else launch<T, 1>(x, w, eps, y, stream.handle());
  });
}

void add_rms_norm(const Tensor& x, const Tensor& residual, const Tensor* weight, float eps,
                  const Tensor& y, const Stream& stream) {
  const char* op = "add_rms_norm";
  require_device(x, op, "x");
  require_device(residual, op, "residual");
  require_device(y, op, "y");
  require_dtype(residual, x.dtype, op, "residual");
  require_dtype(y, x.dtype, op, "y");
  OXYD_CHECK(x.cols() <= INT32_MAX, "add_rms_norm: row length must fit in int32");
  if (residual.numel() != x.numel() || y.numel() != x.numel() || residual.cols() != x.cols())
    throw Error(ErrorCode::INVALID_ARGUMENT, "cuda add_rms_norm: x " + x.shape_str() + ", residual " +
                                                 residual.shape_str() + ", y " + y.shape_str() +
                                                 " must have one shape");
  if (y.data == residual.data && y.numel() > 0)
    throw Error(ErrorCode::INVALID_ARGUMENT, "cuda add_rms_norm: y must not alias residual");
  const float* w = nullptr;
  if (weight) {
    require_device(*weight, op, "weight");
    require_dtype(*weight, DType::F32, op, "weight");
    w = weight->ptr<const float>();
  }
  if (x.numel() == 0) return;
  dispatch_float(x.dtype, op, [&](auto tag) {
    using T = decltype(tag);
    constexpr int kVec = kVec16<T>;
    const int64_t rows = x.rows();
    const int n = int(x.cols());
    const bool vec_ok = n % kVec == 0 && aligned16(x.data) && aligned16(y.data) &&
                        aligned16(residual.data) && (w == nullptr || aligned16(w));
    auto go = [&](auto vec) {
      constexpr int V = decltype(vec)::value;
      const RowGroups rg = row_groups(rows, n / V);
      add_rms_norm_kernel<T, V><<<rg.grid, rg.block, 0, stream.handle()>>>(
          x.ptr<const T>(), residual.ptr<T>(), w, y.ptr<T>(), rows, n, eps);
      OXYD_CUDA_CHECK_LAUNCH();
    };
    if (vec_ok) go(std::integral_constant<int, kVec>{});
    else go(std::integral_constant<int, 1>{});
  });
}

}  // namespace oxyd::backend::cuda
