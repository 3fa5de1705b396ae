// CUDA LayerNorm (see layer_norm.h). Row groups as in rms_norm.cu; three sweeps over the row
// (sum, centred sum of squares, write), the last two from L1/L2. The centred second pass avoids
// the cancellation of E[x²] − E[x]² on rows with a large mean.
#include "backend/cuda/layer_norm.h"

#include "backend/cuda/cuda_check.cuh"
#include "backend/cuda/kernel_utils.cuh"

namespace oxyd::backend::cuda {
namespace {

// x, y [rows, n]; w, b [n] or nullptr. y may alias x.
template <typename T, int VEC>
__global__ void __launch_bounds__(1024) layer_norm_kernel(const T* x, const float* __restrict__ w,
                                                          const float* __restrict__ b, T* y,
                                                          int64_t rows, int n, float eps) {
  __shared__ float scratch[kMaxRowsPerBlock * 32];
  using P = Pack<T, VEC>;
  const int64_t row = int64_t(blockIdx.x) * blockDim.y + threadIdx.y;
  const bool active = row < rows;
  const int num_packs = n / VEC;
  const P* xr = reinterpret_cast<const P*>(x + (active ? row : 0) * int64_t(n));
  P* yr = reinterpret_cast<P*>(y + (active ? row : 0) * int64_t(n));

  float sum = 0.0f;
  if (active) {
    for (int p = threadIdx.x; p < num_packs; p += blockDim.x) {
      const P v = xr[p];
#pragma unroll
      for (int k = 0; k < VEC; ++k) sum += to_float(v.v[k]);
    }
  }
  const float mean = row_group_sum(sum, scratch) / float(n);
  float sum_sq = 0.0f;
  if (active) {
    for (int p = threadIdx.x; p < num_packs; p += blockDim.x) {
      const P v = xr[p];
#pragma unroll
      for (int k = 0; k < VEC; ++k) {
        const float d = to_float(v.v[k]) - mean;
        sum_sq = fmaf(d, d, sum_sq);
      }
    }
  }
  sum_sq = row_group_sum(sum_sq, scratch);  // every thread of the block takes part
  if (!active) return;
  const float inv_std = rsqrtf(sum_sq / float(n) + eps);

  for (int p = threadIdx.x; p < num_packs; p += blockDim.x) {
    const P v = xr[p];
    float wv[VEC], bv[VEC];
    if (w) load_floats<VEC>(w + p * VEC, wv);
    if (b) load_floats<VEC>(b + p * VEC, bv);
    P out;
#pragma unroll
    for (int k = 0; k < VEC; ++k) {
      float r = (to_float(v.v[k]) - mean) * inv_std;
      if (w) r *= wv[k];
      if (b) r += bv[k];
      out.v[k] = from_float<T>(r);
    }
    yr[p] = out;
  }
}

template <typename T, int VEC>
void launch(const Tensor& x, const float* w, const float* b, float eps, const Tensor& y,
            cudaStream_t stream) {
  const int64_t rows = x.rows();
  const int n = int(x.cols());
  const RowGroups rg = row_groups(rows, n / VEC);
  layer_norm_kernel<T, VEC><<<rg.grid, rg.block, 0, stream>>>(x.ptr<const T>(), w, b, y.ptr<T>(),
                                                              rows, n, eps);
  OXYD_CUDA_CHECK_LAUNCH();
}

const float* optional_f32(const Tensor* t, const char* name) {
  if (!t) return nullptr;
  require_device(*t, "layer_norm", name);
  require_dtype(*t, DType::F32, "layer_norm", name);
  return t->ptr<const float>();
}

}  // namespace

void layer_norm(const Tensor& x, const Tensor* weight, const Tensor* bias, float eps,
                const Tensor& y, const Stream& stream) {
  require_device(x, "layer_norm", "x");
  require_device(y, "layer_norm", "y");
  require_dtype(y, x.dtype, "layer_norm", "y");
  OXYD_CHECK(x.cols() <= INT32_MAX, "layer_norm: row length must fit in int32");
  const float* w = optional_f32(weight, "weight");
  const float* b = optional_f32(bias, "bias");
  if (x.numel() == 0) return;
  dispatch_float(x.dtype, "layer_norm", [&](auto tag) {
    using T = decltype(tag);
    constexpr int kVec = kVec16<T>;
    const bool vec_ok = x.cols() % kVec == 0 && aligned16(x.data) && aligned16(y.data) &&
                        (w == nullptr || aligned16(w)) && (b == nullptr || aligned16(b));
    if (vec_ok) launch<T, kVec>(x, w, b, eps, y, stream.handle());
    else launch<T, 1>(x, w, b, eps, y, stream.handle());
  });
}

}  // namespace oxyd::backend::cuda
