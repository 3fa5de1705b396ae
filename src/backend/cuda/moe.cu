// CUDA MoE routing, grouping and combine (see moe.h). Routing is one thread per token: top_k ≤ E
// small scans of E logits, the reference's float64 weights; a router's cost is the matmul before it.
#include "backend/cuda/moe.h"

#include "backend/cuda/cuda_check.cuh"
#include "backend/cuda/kernel_utils.cuh"

namespace oxyd::backend::cuda {
namespace {

constexpr int kMaxExperts = 1024;
constexpr int kMaxTopK = 32;

// The router's flags (RouterParams without its tensor).
struct RouteFlags {
  RouterScoring scoring;
  bool norm_topk_prob, softmax_after_topk;
};

__global__ void route_kernel(const float* __restrict__ logits, int32_t* __restrict__ ids,
                             float* __restrict__ weights, int64_t T, int E, int k, RouteFlags p,
                             const float* __restrict__ expert_scale) {
  const int64_t t = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t >= T) return;
  const float* l = logits + t * E;
  int32_t* id = ids + t * k;
  uint32_t taken[kMaxExperts / 32] = {};
  for (int j = 0; j < k; ++j) {  // the j-th best: largest logit, lowest index among equals
    int best = -1;
    for (int e = 0; e < E; ++e)
      if (!(taken[e >> 5] >> (e & 31) & 1u) && (best < 0 || l[e] > l[best])) best = e;
    taken[best >> 5] |= 1u << (best & 31);
    id[j] = best;
  }
  double w[kMaxTopK];
  const double top = double(l[id[0]]);
  if (p.softmax_after_topk) {
    double sum = 0;
    for (int j = 0; j < k; ++j) sum += w[j] = exp(double(l[id[j]]) - top);
    for (int j = 0; j < k; ++j) w[j] /= sum;
  } else if (p.scoring == RouterScoring::SIGMOID) {
    for (int j = 0; j < k; ++j) w[j] = 1.0 / (1.0 + exp(-double(l[id[j]])));
  } else {
    double sum = 0;
    for (int e = 0; e < E; ++e) sum += exp(double(l[e]) - top);
    for (int j = 0; j < k; ++j) w[j] = exp(double(l[id[j]]) - top) / sum;
  }
  if (p.norm_topk_prob && !p.softmax_after_topk) {
    double sum = 0;
    for (int j = 0; j < k; ++j) sum += w[j];
    for (int j = 0; j < k; ++j) w[j] /= sum;
  }
  for (int j = 0; j < k; ++j) weights[t * k + j] = float(w[j]) * (expert_scale ? expert_scale[id[j]] : 1.0f);
}

// One block of 1024 threads: counts per expert (shared atomics), an exclusive scan by thread 0,
// then each expert's thread walks the pairs in order and places its own: tokens stay ascending.
__global__ void __launch_bounds__(1024) group_kernel(const int32_t* __restrict__ ids, int64_t N, int k, int E,
                                                     int32_t* __restrict__ offsets, int32_t* __restrict__ gather,
                                                     int32_t* __restrict__ rows) {
  __shared__ int32_t count[kMaxExperts + 1];
  for (int e = threadIdx.x; e <= E; e += blockDim.x) count[e] = 0;
  __syncthreads();
  for (int64_t i = threadIdx.x; i < N; i += blockDim.x) atomicAdd(&count[ids[i] + 1], 1);
  __syncthreads();
  if (threadIdx.x == 0)
    for (int e = 0; e < E; ++e) count[e + 1] += count[e];
  __syncthreads();
  for (int e = threadIdx.x; e <= E; e += blockDim.x) offsets[e] = count[e];
  for (int e = threadIdx.x; e < E; e += blockDim.x) {
    int32_t at = count[e];
    for (int64_t i = 0; i < N; ++i)
      if (ids[i] == e) {
        gather[at] = int32_t(i / k);
        rows[i] = at++;
      }
  }
}

__global__ void combine_kernel(const float* __restrict__ src, const int32_t* __restrict__ rows,
                               const float* __restrict__ weights, float* __restrict__ y, int64_t H, int k) {
  const int64_t t = blockIdx.y;
  const int32_t* r = rows + t * k;
  const float* w = weights + t * k;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < H; i += int64_t(gridDim.x) * blockDim.x) {
    float acc = w[0] * src[int64_t(r[0]) * H + i];
    for (int j = 1; j < k; ++j) acc += w[j] * src[int64_t(r[j]) * H + i];
    y[t * H + i] = acc;
  }
}

void require_all(const char* op, std::initializer_list<const Tensor*> ts) {
  for (const Tensor* t : ts) require_device(*t, op, "operand");
}

}  // namespace

void moe_route(const Tensor& logits, const RouterParams& p, const Tensor& ids, const Tensor& weights,
               const Stream& stream) {
  require_all("moe_route", {&logits, &ids, &weights});
  if (p.expert_scale.data) require_device(p.expert_scale, "moe_route", "expert_scale");
  const int64_t T = logits.dim(0), E = logits.dim(1);
  if (E > kMaxExperts || p.top_k > kMaxTopK)
    throw Error(ErrorCode::UNSUPPORTED, "cuda moe_route: at most " + std::to_string(kMaxExperts) + " experts and top_k " +
                                            std::to_string(kMaxTopK) + ", got " + std::to_string(E) + " and " +
                                            std::to_string(p.top_k));
  if (T == 0) return;
  route_kernel<<<ceil_div(T, 128), 128, 0, stream.handle()>>>(logits.ptr<const float>(), ids.ptr<int32_t>(),
                                                              weights.ptr<float>(), T, int(E), p.top_k,
                                                              RouteFlags{p.scoring, p.norm_topk_prob, p.softmax_after_topk},
                                                              p.expert_scale.data ? p.expert_scale.ptr<const float>() : nullptr);
  OXYD_CUDA_CHECK_LAUNCH();
}

void moe_combine(const Tensor& expert_out, const Tensor& rows, const Tensor& weights, const Tensor& y,
                 const Stream& stream) {
  require_all("moe_combine", {&expert_out, &rows, &weights, &y});
  const int64_t T = y.dim(0), H = y.dim(1), k = rows.dim(1);
  for (int64_t t0 = 0; t0 < T; t0 += 65535) {
    const int64_t n = std::min<int64_t>(65535, T - t0);
    const dim3 grid(std::min<unsigned>(ceil_div(H, 256), 16u), unsigned(n));
    combine_kernel<<<grid, 256, 0, stream.handle()>>>(expert_out.ptr<const float>(), rows.ptr<const int32_t>() + t0 * k,
                                                      weights.ptr<const float>() + t0 * k, y.ptr<float>() + t0 * H,
                                                      H, int(k));
    OXYD_CUDA_CHECK_LAUNCH();
  }
}

void moe_group(const Tensor& ids, const Tensor& offsets, const Tensor& gather, const Tensor& rows,
               const Stream& stream) {
  require_all("moe_group", {&ids, &offsets, &gather, &rows});
  const int64_t N = ids.numel(), k = ids.dim(1), E = offsets.dim(0) - 1;
  if (E > kMaxExperts)
    throw Error(ErrorCode::UNSUPPORTED, "cuda moe_group: at most " + std::to_string(kMaxExperts) + " experts");
  group_kernel<<<1, 1024, 0, stream.handle()>>>(ids.ptr<const int32_t>(), N, int(k), int(E), offsets.ptr<int32_t>(),
                                                gather.ptr<int32_t>(), rows.ptr<int32_t>());
  OXYD_CUDA_CHECK_LAUNCH();
}

}  // namespace oxyd::backend::cuda
