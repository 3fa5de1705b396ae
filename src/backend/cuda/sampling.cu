// Device sampling (see sampling.h). One CTA of 1024 threads per row. The radix select finds the
// largest key v whose weight W(v) = Σ over kept tokens with key ≥ v reaches a target: per pass,
// a 256-bin float64 histogram of the tokens that match the digits chosen so far (lanes of a warp
// that hit one bin add their weights first, so a bin sees one atomic per warp), then thread 0
// walks the bins from the top. Counting (top_k) uses weight 1.
#include "backend/cuda/sampling.h"

#include <cmath>

#include "backend/cuda/cuda_check.cuh"
#include "backend/cuda/kernel_utils.cuh"

namespace oxyd::backend::cuda {
namespace {

constexpr int kThreads = 1024;

// Order-preserving key of a float: larger float, larger key (-0 just below +0).
__device__ __forceinline__ uint32_t float_key(float f) {
  const uint32_t u = __float_as_uint(f);
  return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}

__device__ float block_max(float v, float* sh) {
  v = warp_max(v);
  __syncthreads();
  if ((threadIdx.x & 31) == 0) sh[threadIdx.x >> 5] = v;
  __syncthreads();
  const unsigned lane = threadIdx.x & 31;
  v = lane < blockDim.x / 32 ? sh[lane] : -INFINITY;
  return warp_max(v);  // every warp reduces the same values
}

__device__ __forceinline__ double warp_sum_d(double v) {
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) v += __shfl_xor_sync(0xffffffffu, v, off);
  return v;
}

__device__ double block_sum_d(double v, double* sh) {
  v = warp_sum_d(v);
  __syncthreads();
  if ((threadIdx.x & 31) == 0) sh[threadIdx.x >> 5] = v;
  __syncthreads();
  const unsigned lane = threadIdx.x & 31;
  v = lane < blockDim.x / 32 ? sh[lane] : 0.0;
  return warp_sum_d(v);
}

struct SelectShared {
  double hist[256];
  unsigned count[256];  // tokens per bin: a bin is chosen only when it holds one
  double red[32];
  float redf[32];
  uint32_t prefix;
  double above;
  int total;     // tokens tied at the drawn key
  float tied_c;  // their (equal) c
};

// Row state shared by the passes: c_i = x_i / t, kept iff key ≥ lo_key and (min_p off or
// exp(c − mx) ≥ min_p).
struct Row {
  const float* x;
  int n;
  float t, mx;
  uint32_t lo_key;
  float min_p;
  __device__ float c(int i) const { return x[i] / t; }
  __device__ bool kept(uint32_t key, float c) const {
    return key >= lo_key && (min_p <= 0.0f || exp(double(c) - double(mx)) >= double(min_p));
  }
  __device__ double mass(float c) const { return exp(double(c) - double(mx)); }
};

// Largest key v with W(v) ≥ target (strict: > target); sh.above ends as W(keys > v).
template <bool kCount>
__device__ uint32_t radix_select(const Row& row, double target, bool strict, SelectShared& sh) {
  const int lane = int(threadIdx.x & 31);
  if (threadIdx.x == 0) sh.prefix = 0, sh.above = 0.0;
  for (int shift = 24; shift >= 0; shift -= 8) {
    for (int b = int(threadIdx.x); b < 256; b += blockDim.x) sh.hist[b] = 0.0, sh.count[b] = 0u;
    __syncthreads();
    const uint32_t prefix = sh.prefix;
    const uint32_t hi_mask = shift == 24 ? 0u : (0xFFFFFFFFu << (shift + 8));
    const int rounds = (row.n + blockDim.x - 1) / blockDim.x;
    for (int it = 0; it < rounds; ++it) {
      const int i = it * int(blockDim.x) + int(threadIdx.x);
      int bin = 256;  // none
      double w = 0.0;
      if (i < row.n) {
        const float c = row.c(i);
        const uint32_t key = float_key(c);
        if ((key & hi_mask) == prefix && row.kept(key, c)) {
          bin = int((key >> shift) & 255u);
          w = kCount ? 1.0 : row.mass(c);
        }
      }
      // Lanes with the same bin add up first; the lowest of them does the atomic.
      const unsigned peers = __match_any_sync(0xffffffffu, bin);
      double sum = 0.0;
      for (unsigned m = peers; m; m &= m - 1) sum += __shfl_sync(peers, w, __ffs(m) - 1);
      if (bin < 256 && lane == __ffs(peers) - 1) {
        atomicAdd(&sh.hist[bin], sum);
        atomicAdd(&sh.count[bin], unsigned(__popc(peers)));
      }
    }
    __syncthreads();
    if (threadIdx.x == 0) {
      double cum = sh.above;
      int digit = -1;
      for (int b = 255; b >= 0; --b) {
        const double next = cum + sh.hist[b];
        if (sh.count[b] > 0u && (strict ? next > target : next >= target)) {
          digit = b;
          break;
        }
        cum = next;
      }
      if (digit < 0) {  // rounding left the target unreached: the smallest key with weight
        cum = sh.above;
        digit = 0;
        for (int b = 255; b >= 0; --b)
          if (sh.count[b] > 0u) digit = b;
        for (int b = 255; b > digit; --b) cum += sh.hist[b];
      }
      sh.prefix = prefix | (uint32_t(digit) << shift);
      sh.above = cum;
    }
    __syncthreads();
  }
  return sh.prefix;
}

// Argmax (lowest id among equal maxima) over the row; every thread gets it.
__device__ int block_argmax(const float* x, int n, float* shv, int* shi) {
  float best = -INFINITY;
  int best_i = n;  // sentinel above every id
  for (int i = int(threadIdx.x); i < n; i += blockDim.x) {
    const float v = x[i];
    if (v > best || (v == best && best_i == n)) best = v, best_i = i;  // NaN never taken
  }
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) {
    const float ov = __shfl_xor_sync(0xffffffffu, best, off);
    const int oi = __shfl_xor_sync(0xffffffffu, best_i, off);
    if (ov > best || (ov == best && oi < best_i) || best_i == n) best = ov, best_i = oi;
  }
  __syncthreads();
  if ((threadIdx.x & 31) == 0) shv[threadIdx.x >> 5] = best, shi[threadIdx.x >> 5] = best_i;
  __syncthreads();
  if (threadIdx.x < 32) {
    const int nw = int(blockDim.x >> 5);
    best = threadIdx.x < nw ? shv[threadIdx.x] : -INFINITY;
    best_i = threadIdx.x < nw ? shi[threadIdx.x] : n;
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) {
      const float ov = __shfl_xor_sync(0xffffffffu, best, off);
      const int oi = __shfl_xor_sync(0xffffffffu, best_i, off);
      if (oi != n && (ov > best || (ov == best && oi < best_i) || best_i == n)) best = ov, best_i = oi;
    }
    if (threadIdx.x == 0) shi[0] = best_i;
  }
  __syncthreads();
  const int r = shi[0];
  __syncthreads();
  return r < n ? r : 0;
}

__global__ void __launch_bounds__(kThreads) argmax_kernel(const float* __restrict__ logits, int n,
                                                          int64_t stride, int32_t* __restrict__ ids) {
  __shared__ float shv[32];
  __shared__ int shi[32];
  const int id = block_argmax(logits + int64_t(blockIdx.x) * stride, n, shv, shi);
  if (threadIdx.x == 0) ids[blockIdx.x] = id;
}

__global__ void __launch_bounds__(kThreads)
    sample_kernel(const float* __restrict__ logits, int n, const float* __restrict__ temperature,
                  const int32_t* __restrict__ top_k, const float* __restrict__ top_p,
                  const float* __restrict__ min_p, const float* __restrict__ uniform,
                  int32_t* __restrict__ ids) {
  __shared__ SelectShared sh;
  __shared__ int shi[32];
  __shared__ int64_t scan[kThreads / 32];
  const int r = int(blockIdx.x);
  const float* x = logits + int64_t(r) * n;
  const float t = temperature[r];
  if (t < 1e-5f) {
    const int id = block_argmax(x, n, sh.redf, shi);
    if (threadIdx.x == 0) ids[r] = id;
    return;
  }
  Row row{x, n, t, 0.0f, 0u, 0.0f};
  float mx = -INFINITY;
  for (int i = int(threadIdx.x); i < n; i += blockDim.x) mx = fmaxf(mx, row.c(i));
  row.mx = block_max(mx, sh.redf);

  const int k = top_k[r];
  if (k > 0 && k < n) row.lo_key = radix_select<true>(row, double(k), false, sh);
  const float p = top_p[r];
  if (p < 1.0f) {
    double z = 0.0;
    for (int i = int(threadIdx.x); i < n; i += blockDim.x) {
      const float c = row.c(i);
      if (row.kept(float_key(c), c)) z += row.mass(c);
    }
    z = block_sum_d(z, sh.red);
    row.lo_key = radix_select<false>(row, double(fmaxf(p, 0.0f)) * z, false, sh);
  }
  row.min_p = min_p[r];
  double z = 0.0;
  for (int i = int(threadIdx.x); i < n; i += blockDim.x) {
    const float c = row.c(i);
    if (row.kept(float_key(c), c)) z += row.mass(c);
  }
  z = block_sum_d(z, sh.red);
  const double target = double(uniform[r]) * z;
  const uint32_t v = radix_select<false>(row, target, true, sh);
  const double above = sh.above;

  // Among the kept tokens with key v (ascending id), the j-th: its cumulative mass passes target.
  // Threads own contiguous id ranges here, so an exclusive scan of their counts orders the run.
  const int chunk = (n + int(blockDim.x) - 1) / int(blockDim.x);
  const int i0 = min(n, int(threadIdx.x) * chunk), i1 = min(n, i0 + chunk);
  int count = 0;
  float cv = 0.0f;
  for (int i = i0; i < i1; ++i) {
    const float c = row.c(i);
    const uint32_t key = float_key(c);
    if (key == v && row.kept(key, c)) ++count, cv = c;
  }
  // Block-wide exclusive scan of count (warp inclusive scan, then the warp totals).
  const int lane = int(threadIdx.x & 31), warp = int(threadIdx.x >> 5);
  int inc = count;
#pragma unroll
  for (int off = 1; off < 32; off <<= 1) {
    const int o = __shfl_up_sync(0xffffffffu, inc, off);
    if (lane >= off) inc += o;
  }
  if (lane == 31) scan[warp] = inc;
  __syncthreads();
  if (threadIdx.x == 0) {
    int64_t s = 0;
    for (int w = 0; w < int(blockDim.x >> 5); ++w) {
      const int64_t tmp = scan[w];
      scan[w] = s;
      s += tmp;
    }
    sh.total = int(s);
  }
  if (count > 0) sh.tied_c = cv;  // any owner: every tied token has the same c
  __syncthreads();
  const int total = sh.total;
  int j = 0;
  if (total > 1) {
    const double e = row.mass(sh.tied_c);
    const double resid = target - above;
    j = e > 0.0 ? int(fmin(floor(resid / e), double(total - 1))) : 0;
    j = max(j, 0);
  }
  const int before = int(scan[warp]) + inc - count;
  if (total == 0) {  // no token carries key v (cannot happen short of NaN logits): greedy
    const int id = block_argmax(x, n, sh.redf, shi);
    if (threadIdx.x == 0) ids[r] = id;
    return;
  }
  if (count > 0 && j >= before && j < before + count) {
    int seen = before;
    for (int i = i0; i < i1; ++i) {
      const float c = row.c(i);
      const uint32_t key = float_key(c);
      if (key == v && row.kept(key, c)) {
        if (seen == j) {
          ids[r] = i;
          break;
        }
        ++seen;
      }
    }
  }
}

__global__ void __launch_bounds__(kThreads) log_softmax_kernel(const float* x, float* y, int n) {
  __shared__ float shf[32];
  __shared__ double shd[32];
  const float* xr = x + int64_t(blockIdx.x) * n;
  float* yr = y + int64_t(blockIdx.x) * n;
  float mx = -INFINITY;
  for (int i = int(threadIdx.x); i < n; i += blockDim.x) mx = fmaxf(mx, xr[i]);
  mx = block_max(mx, shf);
  double z = 0.0;
  for (int i = int(threadIdx.x); i < n; i += blockDim.x) z += double(expf(xr[i] - mx));
  z = block_sum_d(z, shd);
  const float lse = mx + float(log(z));
  __syncthreads();  // y may alias x: every read of x is done
  for (int i = int(threadIdx.x); i < n; i += blockDim.x) yr[i] = xr[i] - lse;
}

void check_rows(const Tensor& t, int64_t rows, DType dt, const char* op, const char* name) {
  require_device(t, op, name);
  require_dtype(t, dt, op, name);
  if (t.numel() != rows)
    throw Error(ErrorCode::INVALID_ARGUMENT, std::string("cuda ") + op + ": `" + name + "` " +
                                                 t.shape_str() + " must hold one value per row (" +
                                                 std::to_string(rows) + ")");
}

}  // namespace

void sample(const Tensor& logits, const Tensor& temperature, const Tensor& top_k,
            const Tensor& top_p, const Tensor& min_p, const Tensor& uniform, const Tensor& ids,
            const Stream& stream) {
  const char* op = "sample";
  require_device(logits, op, "logits");
  require_dtype(logits, DType::F32, op, "logits");
  const int64_t rows = logits.rows(), n = logits.cols();
  check_rows(temperature, rows, DType::F32, op, "temperature");
  check_rows(top_k, rows, DType::I32, op, "top_k");
  check_rows(top_p, rows, DType::F32, op, "top_p");
  check_rows(min_p, rows, DType::F32, op, "min_p");
  check_rows(uniform, rows, DType::F32, op, "uniform");
  check_rows(ids, rows, DType::I32, op, "ids");
  if (n <= 0 || n > INT32_MAX)
    throw Error(ErrorCode::INVALID_ARGUMENT, "cuda sample: vocabulary size " + std::to_string(n));
  if (rows == 0) return;
  sample_kernel<<<unsigned(rows), kThreads, 0, stream.handle()>>>(
      logits.ptr<const float>(), int(n), temperature.ptr<const float>(), top_k.ptr<const int32_t>(),
      top_p.ptr<const float>(), min_p.ptr<const float>(), uniform.ptr<const float>(),
      ids.ptr<int32_t>());
  OXYD_CUDA_CHECK_LAUNCH();
}

void argmax(const Tensor& logits, const Tensor& ids, const Stream& stream, int64_t cols) {
  require_device(logits, "argmax", "logits");
  require_dtype(logits, DType::F32, "argmax", "logits");
  const int64_t rows = logits.rows(), stride = logits.cols(), n = cols > 0 ? cols : stride;
  check_rows(ids, rows, DType::I32, "argmax", "ids");
  if (n <= 0 || n > INT32_MAX || n > stride)
    throw Error(ErrorCode::INVALID_ARGUMENT, "cuda argmax: " + std::to_string(n) + " ids of a row of " +
                                                 std::to_string(stride));
  if (rows == 0) return;
  argmax_kernel<<<unsigned(rows), kThreads, 0, stream.handle()>>>(logits.ptr<const float>(), int(n), stride,
                                                                  ids.ptr<int32_t>());
  OXYD_CUDA_CHECK_LAUNCH();
}

void log_softmax(const Tensor& x, const Tensor& y, const Stream& stream) {
  require_device(x, "log_softmax", "x");
  require_device(y, "log_softmax", "y");
  require_dtype(x, DType::F32, "log_softmax", "x");
  require_dtype(y, DType::F32, "log_softmax", "y");
  const int64_t rows = x.rows(), n = x.cols();
  if (y.numel() != x.numel() || y.cols() != n)
    throw Error(ErrorCode::INVALID_ARGUMENT, "cuda log_softmax: y " + y.shape_str() +
                                                 " must have the shape of x " + x.shape_str());
  if (rows == 0 || n == 0) return;
  log_softmax_kernel<<<unsigned(rows), kThreads, 0, stream.handle()>>>(x.ptr<const float>(),
                                                                       y.ptr<float>(), int(n));
  OXYD_CUDA_CHECK_LAUNCH();
}

}  // namespace oxyd::backend::cuda
