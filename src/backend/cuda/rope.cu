// CUDA RoPE (see rope.h). One block per token: its threads first fill a shared cos/sin table
// for the token's rot_dim/2 pairs, then walk all (head, pair) items; neighbouring threads touch
// neighbouring elements in both pairings, so loads coalesce. The pass-through tail is copied
// only when y does not alias x.
#include "backend/cuda/rope.h"

#include "backend/cuda/cuda_check.cuh"
#include "backend/cuda/kernel_utils.cuh"

namespace oxyd::backend::cuda {
namespace {

constexpr int kThreads = 256;

// x, y [num_tokens, num_heads, head_dim]; y may alias x.
template <typename T, bool kNeox>
__global__ void __launch_bounds__(kThreads) rope_kernel(
    const T* x, T* y, const int32_t* __restrict__ positions, const float* __restrict__ inv_freq,
    const float* __restrict__ freq_factors, int num_heads, int head_dim, int half,
    float attention_factor, bool copy_tail) {
  extern __shared__ float table[];  // [2, half]: cos then sin, both · attention_factor
  const int64_t t = blockIdx.x;
  const double pos = double(positions[t]);
  for (int i = threadIdx.x; i < half; i += blockDim.x) {
    double theta = pos * double(inv_freq[i]);
    if (freq_factors) theta /= double(freq_factors[i]);
    // Reduce to [-π, π] in float64: θ can reach 1e5+ rad, where a float angle is off by 1e-3.
    constexpr double kTwoPi = 6.283185307179586476925286766559;
    theta -= rint(theta * (1.0 / kTwoPi)) * kTwoPi;
    float s, c;
    sincosf(float(theta), &s, &c);
    table[i] = c * attention_factor;
    table[half + i] = s * attention_factor;
  }
  __syncthreads();

  const int64_t base = t * int64_t(num_heads) * head_dim;
  const int num_items = num_heads * half;
  for (int item = threadIdx.x; item < num_items; item += blockDim.x) {
    const int h = item / half, i = item - h * half;
    const int64_t off = base + int64_t(h) * head_dim;
    const int i0 = kNeox ? i : 2 * i;
    const int i1 = kNeox ? i + half : 2 * i + 1;
    const float x0 = to_float(x[off + i0]), x1 = to_float(x[off + i1]);
    const float c = table[i], s = table[half + i];
    y[off + i0] = from_float<T>(x0 * c - x1 * s);
    y[off + i1] = from_float<T>(x0 * s + x1 * c);
  }
  if (copy_tail) {
    const int tail = head_dim - 2 * half;
    const int num_tail = num_heads * tail;
    for (int item = threadIdx.x; item < num_tail; item += blockDim.x) {
      const int h = item / tail, j = 2 * half + (item - h * tail);
      y[base + int64_t(h) * head_dim + j] = x[base + int64_t(h) * head_dim + j];
    }
  }
}

// Llama 4's attention temperature: y[t, :] = x[t, :]·(1 + beta·log(1 + floor(pos_t / floor_scale))),
// the scale formed in float64 as the CPU backend does. One block row per token.
__global__ void attn_temperature_kernel(const float* x, float* y, const int32_t* __restrict__ positions,
                                        int64_t row, float beta, double floor_scale) {
  const int64_t t = blockIdx.y;
  const float s = float(1.0 + double(beta) * log(1.0 + floor(double(positions[t]) / floor_scale)));
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < row; i += int64_t(gridDim.x) * blockDim.x)
    y[t * row + i] = x[t * row + i] * s;
}

}  // namespace

void attn_temperature(const Tensor& x, const Tensor& positions, float beta, int64_t floor_scale,
                      const Tensor& y, const Stream& stream) {
  require_device(x, "attn_temperature", "x");
  require_device(y, "attn_temperature", "y");
  require_device(positions, "attn_temperature", "positions");
  require_dtype(x, DType::F32, "attn_temperature", "x");
  require_dtype(y, DType::F32, "attn_temperature", "y");
  const int64_t num_tokens = x.dim(0), row = x.numel() / std::max<int64_t>(num_tokens, 1);
  if (num_tokens == 0 || row == 0) return;
  OXYD_CHECK(num_tokens <= 65535, "attn_temperature: at most 65535 tokens per call");
  const dim3 grid(std::min<unsigned>(ceil_div(row, kThreads), 64u), unsigned(num_tokens));
  attn_temperature_kernel<<<grid, kThreads, 0, stream.handle()>>>(x.ptr<const float>(), y.ptr<float>(),
                                                                   positions.ptr<const int32_t>(), row, beta,
                                                                   double(floor_scale));
  OXYD_CUDA_CHECK_LAUNCH();
}

void rope(const Tensor& x, const Tensor& positions, const Tensor& inv_freq,
          const Tensor* freq_factors, RopeStyle style, float attention_factor, const Tensor& y,
          const Stream& stream) {
  require_device(x, "rope", "x");
  require_device(y, "rope", "y");
  require_device(positions, "rope", "positions");
  require_device(inv_freq, "rope", "inv_freq");
  require_dtype(y, x.dtype, "rope", "y");
  require_dtype(positions, DType::I32, "rope", "positions");
  require_dtype(inv_freq, DType::F32, "rope", "inv_freq");
  OXYD_CHECK(x.ndim == 3, "rope: x must be [num_tokens, num_heads, head_dim]");
  const int64_t num_tokens = x.dim(0), num_heads = x.dim(1), head_dim = x.dim(2);
  const int64_t half = inv_freq.numel();
  OXYD_CHECK(2 * half <= head_dim, "rope: rot_dim = 2·inv_freq.size() exceeds head_dim");
  OXYD_CHECK(num_heads * head_dim <= INT32_MAX, "rope: num_heads·head_dim must fit in int32");
  const float* ff = nullptr;
  if (freq_factors) {
    require_device(*freq_factors, "rope", "freq_factors");
    require_dtype(*freq_factors, DType::F32, "rope", "freq_factors");
    ff = freq_factors->ptr<const float>();
  }
  if (num_tokens == 0 || num_heads == 0) return;
  const bool copy_tail = x.data != y.data && 2 * half < head_dim;
  const size_t shared_bytes = size_t(2 * half) * sizeof(float);
  dispatch_float(x.dtype, "rope", [&](auto tag) {
    using T = decltype(tag);
    auto kernel = style == RopeStyle::NEOX ? rope_kernel<T, true> : rope_kernel<T, false>;
    kernel<<<unsigned(num_tokens), kThreads, shared_bytes, stream.handle()>>>(
        x.ptr<const T>(), y.ptr<T>(), positions.ptr<const int32_t>(), inv_freq.ptr<const float>(),
        ff, int(num_heads), int(head_dim), int(half), attention_factor, copy_tail);
    OXYD_CUDA_CHECK_LAUNCH();
  });
}

}  // namespace oxyd::backend::cuda
