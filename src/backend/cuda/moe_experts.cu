// Grouped expert gemvs (see moe_experts.h).
#include "backend/cuda/moe_experts.h"

#include <cstdint>
#include <vector>

#include "backend/cuda/activation.h"
#include "backend/cuda/cuda_check.cuh"
#include "backend/cuda/kernel_utils.cuh"
#include "backend/cuda/matmul.h"
#include "backend/cuda/qdot.cuh"
#include "backend/cuda/qgemv.cuh"

namespace oxyd::backend::cuda {
namespace {

constexpr int kRowsPerBlock = 4;  // weight rows (output columns) per thread block

struct GroupedArgs {
  const int8_t* xq;  // [N, k] quantized rows and, from xd, their scales
  const float* xd;
  const void* const* w[2];  // per launch z: the experts' weight pointers [E]
  float* y[2];              // per z: [N, n]
  const int32_t* offsets;
  int E, n, k;
  int64_t row_bytes;
};

// Grid (ceil(n / R), N, Z): block (c, r, z) writes y[z][r, c·R .. c·R + R) with row r's expert.
template <class F>
__global__ void __launch_bounds__(kQgemvThreads) grouped_qgemv_kernel(GroupedArgs a) {
  const int r = int(blockIdx.y), z = int(blockIdx.z);
  const int e = owner_of(a.offsets, a.E, r);
  const uint8_t* w = static_cast<const uint8_t*>(a.w[z][e]);
  qgemv_block<F, 1, kRowsPerBlock>(a.xq + int64_t(r) * a.k, a.xd + int64_t(r) * (a.k / qdot::kXBlock), w,
                                   a.y[z] + int64_t(r) * a.n, 1, a.n, a.k, a.row_bytes,
                                   int(blockIdx.x) * kRowsPerBlock);
}

// y[r, :] += bias_e for grouped row r of expert e (no bias: nothing).
__global__ void expert_bias_kernel(float* __restrict__ y, int n, const void* const* bias,
                                   const int32_t* __restrict__ offsets, int E) {
  const int r = int(blockIdx.x);
  const float* b = static_cast<const float*>(bias[owner_of(offsets, E, r)]);
  if (!b) return;
  for (int c = int(threadIdx.x); c < n; c += int(blockDim.x)) y[int64_t(r) * n + c] += b[c];
}

// A weight the grouped gemv of format F reads: dtype, shape, and rows aligned as its loads need.
template <class F>
bool same_matrix(const Tensor& t, DType dtype, int64_t rows, int64_t cols) {
  return t.data && t.device == Device::CUDA && t.dtype == dtype && t.ndim == 2 && t.rows() == rows &&
         t.cols() == cols && reinterpret_cast<uintptr_t>(t.data) % F::kAlign == 0 &&
         dtype_row_bytes(dtype, cols) % F::kAlign == 0;
}

bool bias_ok(const Tensor& b, int64_t n) {
  return !b.data || (b.device == Device::CUDA && b.dtype == DType::F32 && b.numel() == n);
}

}  // namespace

const void* const* ExpertTables::get(const ExpertWeights* experts, int64_t E) {
  Entry& e = tables_[experts];
  if (e.first_gate != experts[0].gate.data || e.E != E) {
    std::vector<const void*> host(size_t(6 * E));
    for (int64_t i = 0; i < E; ++i) {
      const ExpertWeights& x = experts[i];
      const Tensor* parts[6] = {&x.gate, &x.up, &x.down, &x.gate_bias, &x.up_bias, &x.down_bias};
      for (int j = 0; j < 6; ++j) host[size_t(j * E + i)] = parts[j]->data;
    }
    e.table = DeviceBuffer(host.size() * sizeof(void*));
    copy_to_device(e.table.data(), host.data(), host.size() * sizeof(void*));
    e.first_gate = experts[0].gate.data;
    e.E = E;
  }
  return static_cast<const void* const*>(e.table.data());
}

bool moe_experts_grouped(const MoeExpertsParams& p, ExpertTables& tables, Workspace& ws, const Stream& stream) {
  const int64_t N = p.xs.rows(), H = p.xs.cols(), I = p.gate.cols(), E = p.offsets.numel() - 1;
  if (N < 1 || N > kGroupedExpertRows || E < 1 || p.xs.dtype != DType::F32) return false;
  const DType t = p.experts[0].gate.dtype;
  const int64_t block = dtype_block_elems(t);
  if (!gemv_is_integer(t) || H % block != 0 || I % block != 0) return false;
  bool biases = false, fits = true;
  qdot::dispatch(t, [&](auto fmt) {
    using F = decltype(fmt);
    for (int64_t e = 0; e < E && fits; ++e) {
      const ExpertWeights& x = p.experts[e];
      fits = same_matrix<F>(x.gate, t, I, H) && same_matrix<F>(x.up, t, I, H) && same_matrix<F>(x.down, t, H, I) &&
             bias_ok(x.gate_bias, I) && bias_ok(x.up_bias, I) && bias_ok(x.down_bias, H);
      biases = biases || x.gate_bias.data || x.up_bias.data || x.down_bias.data;
    }
  });
  if (!fits) return false;
  const void* const* tab = tables.get(p.experts, E);
  const void* const* gate_w = tab;
  const void* const* up_w = tab + E;
  const void* const* down_w = tab + 2 * E;
  const int32_t* offsets = p.offsets.ptr<const int32_t>();

  // x quantized for gate/up, then the GLU output for down, in one workspace.
  const size_t a_bytes = (quantized_x_bytes(N, H) + 255) / 256 * 256;
  int8_t* xa = static_cast<int8_t*>(ws.get(a_bytes + quantized_x_bytes(N, I)));
  int8_t* xb = xa + a_bytes;
  auto launch = [&](const int8_t* xq, int64_t k, const void* const* w0, const void* const* w1, float* y0,
                    float* y1, int64_t n, int z) {
    qdot::dispatch(t, [&](auto fmt) {
      using F = decltype(fmt);
      GroupedArgs a{xq, reinterpret_cast<const float*>(xq + quantized_x_offset(N, k)), {w0, w1}, {y0, y1},
                    offsets, int(E), int(n), int(k), dtype_row_bytes(t, k)};
      const dim3 grid{ceil_div(n, kRowsPerBlock), unsigned(N), unsigned(z)};
      grouped_qgemv_kernel<F><<<grid, qgemv_threads(k), 0, stream.handle()>>>(a);
      OXYD_CUDA_CHECK_LAUNCH();
    });
  };
  auto add_bias = [&](float* y, int64_t n, const void* const* bias) {
    expert_bias_kernel<<<unsigned(N), 128, 0, stream.handle()>>>(y, int(n), bias, offsets, int(E));
    OXYD_CUDA_CHECK_LAUNCH();
  };
  quantize_activations(p.xs, xa, stream);
  launch(xa, H, gate_w, up_w, p.gate.ptr<float>(), p.up.ptr<float>(), I, 2);
  if (biases) {
    add_bias(p.gate.ptr<float>(), I, tab + 3 * E);
    add_bias(p.up.ptr<float>(), I, tab + 4 * E);
  }
  if (p.swiglu_limit > 0) glu_oai(p.gate, p.up, p.swiglu_alpha, p.swiglu_limit, p.gate, stream);
  else glu(p.act, p.gate, p.up, p.gate, stream);
  quantize_activations(p.gate, xb, stream);
  launch(xb, I, down_w, down_w, p.ys.ptr<float>(), p.ys.ptr<float>(), H, 1);
  if (biases) add_bias(p.ys.ptr<float>(), H, tab + 5 * E);
  return true;
}

}  // namespace oxyd::backend::cuda
