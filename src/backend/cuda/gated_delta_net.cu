// CUDA Gated DeltaNet (see gated_delta_net.h), the per-token math of the CPU's recurrent_head:
// q, k L2-normalised (q also × dk^−½); u = β(v − e^g·Sᵀk); o = e^g·Sᵀq + u·(k·q); S ← e^g·S + k uᵀ.
#include "backend/cuda/gated_delta_net.h"

#include "backend/cuda/cuda_check.cuh"
#include "backend/cuda/kernel_utils.cuh"

namespace oxyd::backend::cuda {
namespace {

constexpr int kMaxConv = 8;

// One thread per (request, channel): the window lives in registers.
__global__ void conv_kernel(const float* __restrict__ x, const float* __restrict__ w, float* __restrict__ conv_state,
                            const int32_t* __restrict__ qsl, const int32_t* __restrict__ slots, float* __restrict__ y,
                            int64_t R, int64_t C, int K) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= R * C) return;
  const int64_t r = i / C, c = i % C;
  float win[kMaxConv];
  float* st = conv_state + int64_t(slots[r]) * (K - 1) * C;
  for (int j = 0; j < K - 1; ++j) win[j] = st[j * C + c];
  for (int64_t t = qsl[r]; t < qsl[r + 1]; ++t) {
    win[K - 1] = x[t * C + c];
    float s = 0;
    for (int j = 0; j < K; ++j) s += w[c * K + j] * win[j];
    y[t * C + c] = s / (1.0f + expf(-s));
    for (int j = 0; j < K - 1; ++j) win[j] = win[j + 1];
  }
  for (int j = 0; j < K - 1; ++j) st[j * C + c] = win[j];
}

__global__ void gating_kernel(const float* __restrict__ a, const float* __restrict__ b, const float* __restrict__ A_log,
                              const float* __restrict__ dt_bias, float* __restrict__ g, float* __restrict__ beta,
                              int64_t n, int64_t H) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const int64_t h = i % H;
  const float av = a[i] + dt_bias[h];
  const float sp = av > 20.0f ? av : log1pf(expf(av));
  g[i] = -expf(A_log[h]) * sp;
  beta[i] = 1.0f / (1.0f + expf(-b[i]));
}

// Block (request r = blockIdx.y, value head h = blockIdx.x); thread j < dv owns state column j.
// Shared: q, k of the current token (dk each) and the reduction scratch.
__global__ void delta_rule_kernel(const float* __restrict__ qkv, const float* __restrict__ g,
                                  const float* __restrict__ beta, float* __restrict__ state,
                                  const int32_t* __restrict__ qsl, const int32_t* __restrict__ slots,
                                  float* __restrict__ out, int Hk, int Hv, int dk, int dv, int64_t W) {
  extern __shared__ float sh[];  // q [dk], k [dk], scratch [32]
  float* q = sh;
  float* k = sh + dk;
  float* scratch = sh + 2 * dk;
  const int r = blockIdx.y, h = blockIdx.x, j = threadIdx.x;
  const int kh = h / (Hv / Hk);
  const int64_t key_dim = int64_t(Hk) * dk;
  float* S = state + (int64_t(slots[r]) * Hv + h) * int64_t(dk) * dv;
  for (int64_t t = qsl[r]; t < qsl[r + 1]; ++t) {
    const float* row = qkv + t * W;
    float qq = 0, kk = 0;
    for (int i = j; i < dk; i += blockDim.x) {
      const float qi = row[kh * dk + i], ki = row[key_dim + kh * dk + i];
      q[i] = qi, k[i] = ki;
      qq += qi * qi, kk += ki * ki;
    }
    qq = row_group_sum(qq, scratch);
    kk = row_group_sum(kk, scratch);
    const float qs = 1.0f / sqrtf(qq + 1e-6f) / sqrtf(float(dk)), ks = 1.0f / sqrtf(kk + 1e-6f);
    __syncthreads();  // q, k written
    const float decay = expf(g[t * Hv + h]), bt = beta[t * Hv + h];
    if (j < dv) {
      float u = 0, oq = 0, kq = 0;
      for (int i = 0; i < dk; ++i) {
        const float s = S[int64_t(i) * dv + j], ki = k[i] * ks, qi = q[i] * qs;
        u += s * ki, oq += s * qi, kq += ki * qi;
      }
      const float v = row[2 * key_dim + int64_t(h) * dv + j];
      u = bt * (v - decay * u);
      out[(t * Hv + h) * dv + j] = decay * oq + u * kq;
      for (int i = 0; i < dk; ++i) {
        float* s = S + int64_t(i) * dv + j;
        *s = decay * *s + k[i] * ks * u;
      }
    }
    __syncthreads();  // before the next token overwrites q, k
  }
}

void require_all(const char* op, std::initializer_list<const Tensor*> ts) {
  for (const Tensor* t : ts) require_device(*t, op, "operand");
}

}  // namespace

void causal_conv1d(const Tensor& x, const Tensor& weight, const Tensor& conv_state, const Tensor& query_start_loc,
                   const Tensor& state_slots, const Tensor& y, const Stream& stream) {
  require_all("causal_conv1d", {&x, &weight, &conv_state, &query_start_loc, &state_slots, &y});
  const int64_t C = x.dim(1), K = weight.dim(1), R = state_slots.dim(0);
  if (K > kMaxConv || K < 1)
    throw Error(ErrorCode::UNSUPPORTED, "cuda causal_conv1d: kernel size " + std::to_string(K) + " outside [1, 8]");
  if (R == 0 || C == 0) return;
  conv_kernel<<<ceil_div(R * C, 256), 256, 0, stream.handle()>>>(
      x.ptr<const float>(), weight.ptr<const float>(), conv_state.ptr<float>(), query_start_loc.ptr<const int32_t>(),
      state_slots.ptr<const int32_t>(), y.ptr<float>(), R, C, int(K));
  OXYD_CUDA_CHECK_LAUNCH();
}

void gdn_gating(const Tensor& a, const Tensor& b, const Tensor& A_log, const Tensor& dt_bias, const Tensor& g,
                const Tensor& beta, const Stream& stream) {
  require_all("gdn_gating", {&a, &b, &A_log, &dt_bias, &g, &beta});
  const int64_t n = a.numel(), H = a.dim(1);
  if (n == 0) return;
  gating_kernel<<<ceil_div(n, 256), 256, 0, stream.handle()>>>(a.ptr<const float>(), b.ptr<const float>(),
                                                               A_log.ptr<const float>(), dt_bias.ptr<const float>(),
                                                               g.ptr<float>(), beta.ptr<float>(), n, H);
  OXYD_CUDA_CHECK_LAUNCH();
}

void gated_delta_rule(const Tensor& qkv, int64_t num_k_heads, const Tensor& g, const Tensor& beta,
                      const Tensor& state, const Tensor& query_start_loc, const Tensor& state_slots,
                      const Tensor& out, const Stream& stream) {
  require_all("gated_delta_rule", {&qkv, &g, &beta, &state, &query_start_loc, &state_slots, &out});
  const int64_t Hv = out.dim(1), dv = out.dim(2), W = qkv.dim(1), R = state_slots.dim(0);
  const int64_t dk = (W - Hv * dv) / (2 * num_k_heads);
  if (dk > 1024 || dv > 1024 || Hv > 65535 || R > 65535)
    throw Error(ErrorCode::UNSUPPORTED, "cuda gated_delta_rule: dk, dv ≤ 1024 and at most 65535 heads / requests");
  if (R == 0 || Hv == 0) return;
  const int threads = int(std::max<int64_t>(32, (std::max(dv, dk) + 31) / 32 * 32));
  const size_t shared = size_t(2 * dk + 32) * sizeof(float);
  delta_rule_kernel<<<dim3(unsigned(Hv), unsigned(R)), threads, shared, stream.handle()>>>(
      qkv.ptr<const float>(), g.ptr<const float>(), beta.ptr<const float>(), state.ptr<float>(),
      query_start_loc.ptr<const int32_t>(), state_slots.ptr<const int32_t>(), out.ptr<float>(), int(num_k_heads),
      int(Hv), int(dk), int(dv), W);
  OXYD_CUDA_CHECK_LAUNCH();
}

}  // namespace oxyd::backend::cuda
