// CudaBackend (see backend.h): each virtual checks what only this backend can (device memory,
// kernel limits) and queues the kernel of the same name on its stream. Every operand is device
// memory (model/step_upload.h uploads a step's host arrays, get_rows' ids included).
#include "backend/cuda/backend.h"

#include <cuda_runtime.h>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "backend/cuda/activation.h"
#include "backend/cuda/attention.h"
#include "backend/cuda/cuda_check.cuh"
#include "backend/cuda/device.h"
#include "backend/cuda/elementwise.h"
#include "backend/cuda/gated_delta_net.h"
#include "backend/cuda/gemm.h"
#include "backend/cuda/get_rows.h"
#include "backend/cuda/layer_norm.h"
#include "backend/cuda/matmul.h"
#include "backend/cuda/moe.h"
#include "backend/cuda/moe_experts.h"
#include "backend/cuda/rms_norm.h"
#include "backend/cuda/rope.h"
#include "backend/cuda/sampling.h"
#include "backend/cuda/softmax.h"
#include "backend/cuda/workspace.h"
#include "core/error.h"

namespace oxyd::backend::cuda {
namespace {

bool is_plain_kv(KvFormat f) { return !kv_format_quantized(f); }

[[noreturn]] void unsupported_kv(const char* op, KvFormat f) {
  throw Error(ErrorCode::UNSUPPORTED, std::string("cuda ") + op + ": the KV cache format " +
                                          std::string(kv_format_name(f)) +
                                          " (--kv-quant) has no CUDA kernel yet; use an F32, F16 or BF16 cache");
}

class CudaBackend final : public Backend {
 public:
  Device device() const override { return Device::CUDA; }
  std::string_view name() const override { return "cuda"; }

  void matmul(const Tensor& x, const Tensor& w, const Tensor& y) override {
    if (w.dtype == DType::F32) gemm().gemm_f32(x, w, y, stream());
    else gemm().matmul(x, w, y, stream());
  }
  void matmul_same_x(const Tensor& x, const MatmulOut* outs, int count) override {
    gemm().matmul_same_x(x, outs, count, stream());
  }
  void get_rows(const Tensor& table, const Tensor& ids, const Tensor& out) override {
    if (ids.numel() == 0) return;
    cuda::get_rows(table, ids.ptr<const int32_t>(), ids.numel(), out, stream());
  }
  void rms_norm(const Tensor& x, const Tensor* weight, float eps, const Tensor& y) override {
    cuda::rms_norm(x, weight, eps, y, stream());
  }
  void layer_norm(const Tensor& x, const Tensor* weight, const Tensor* bias, float eps, const Tensor& y) override {
    cuda::layer_norm(x, weight, bias, eps, y, stream());
  }
  void rope(const Tensor& x, const Tensor& positions, const Tensor& inv_freq, const Tensor* freq_factors,
            RopeStyle style, float attention_factor, const Tensor& y) override {
    cuda::rope(x, positions, inv_freq, freq_factors, style, attention_factor, y, stream());
  }
  void attn_temperature(const Tensor& x, const Tensor& positions, float beta, int64_t floor_scale,
                        const Tensor& y) override {
    cuda::attn_temperature(x, positions, beta, floor_scale, y, stream());
  }
  void causal_conv1d(const Tensor& x, const Tensor& weight, const Tensor& conv_state, const Tensor& query_start_loc,
                     const Tensor& state_slots, const Tensor& y) override {
    cuda::causal_conv1d(x, weight, conv_state, query_start_loc, state_slots, y, stream());
  }
  void gdn_gating(const Tensor& a, const Tensor& b, const Tensor& A_log, const Tensor& dt_bias, const Tensor& g,
                  const Tensor& beta) override {
    cuda::gdn_gating(a, b, A_log, dt_bias, g, beta, stream());
  }
  void gated_delta_rule(const Tensor& qkv, int64_t num_k_heads, const Tensor& g, const Tensor& beta,
                        const Tensor& state, const Tensor& query_start_loc, const Tensor& state_slots,
                        const Tensor& out) override {
    cuda::gated_delta_rule(qkv, num_k_heads, g, beta, state, query_start_loc, state_slots, out, stream());
  }
  void softmax(const Tensor& x, float scale, const Tensor& y) override { cuda::softmax(x, scale, y, stream()); }
  void activation(Activation act, const Tensor& x, const Tensor& y) override {
    cuda::activation(act, x, y, stream());
  }
  void glu(Activation act, const Tensor& gate, const Tensor& up, const Tensor& y) override {
    cuda::glu(act, gate, up, y, stream());
  }
  void glu_fused(Activation act, const Tensor& gate_up, const Tensor& y) override {
    cuda::glu_fused(act, gate_up, y, stream());
  }
  void glu_oai(const Tensor& gate, const Tensor& up, float alpha, float limit, const Tensor& y) override {
    cuda::glu_oai(gate, up, alpha, limit, y, stream());
  }
  void add(const Tensor& a, const Tensor& b, const Tensor& y) override { cuda::add(a, b, y, stream()); }
  void mul(const Tensor& a, const Tensor& b, const Tensor& y) override { cuda::mul(a, b, y, stream()); }
  void scale(const Tensor& x, float s, const Tensor& y) override { cuda::scale(x, s, y, stream()); }
  void softcap(const Tensor& x, float cap, const Tensor& y) override { cuda::softcap(x, cap, y, stream()); }
  void clamp(const Tensor& x, float limit, const Tensor& y) override { cuda::clamp(x, limit, y, stream()); }
  void paged_attention(const AttentionParams& p) override {
    if (!is_plain_kv(p.kv_format)) unsupported_kv("paged_attention", p.kv_format);
    cuda::paged_attention(p, attn_ws_, stream());
  }
  void reshape_and_cache(const Tensor& key, const Tensor& value, const Tensor& k_cache, const Tensor& v_cache,
                         const Tensor& slot_mapping, KvFormat kv_format) override {
    if (!is_plain_kv(kv_format)) unsupported_kv("reshape_and_cache", kv_format);
    cuda::reshape_and_cache(key, value, k_cache, v_cache, slot_mapping, stream());
  }
  void moe_route(const Tensor& logits, const RouterParams& p, const Tensor& ids, const Tensor& weights) override {
    cuda::moe_route(logits, p, ids, weights, stream());
  }
  void moe_combine(const Tensor& expert_out, const Tensor& rows, const Tensor& weights, const Tensor& y) override {
    cuda::moe_combine(expert_out, rows, weights, y, stream());
  }
  void moe_group(const Tensor& ids, const Tensor& offsets, const Tensor& gather, const Tensor& rows) override {
    cuda::moe_group(ids, offsets, gather, rows, stream());
  }
  // Decode-sized steps of integer-format experts: grouped gemvs, no host read (moe_experts.h).
  void moe_experts(const MoeExpertsParams& p) override {
    if (!moe_experts_grouped(p, expert_tables_, moe_ws_, stream())) Backend::moe_experts(p);
  }
  void argmax_rows(const Tensor& x, int64_t cols, const Tensor& ids) override {
    cuda::argmax(x, ids, stream(), cols);
  }
  void zero(const Tensor& y) override {
    if (y.nbytes() > 0) memset_async(y.data, 0, size_t(y.nbytes()), stream());
  }
  void copy_to_host(const Tensor& src, void* dst) override {
    if (src.nbytes() == 0) return;
    std::lock_guard<std::recursive_mutex> lock(step_mu_);  // not inside another thread's step
    copy_to_host_async(dst, src.data, size_t(src.nbytes()), stream());
    stream().synchronize();
  }
  void copy_from_host(const void* src, const Tensor& dst) override {
    if (dst.nbytes() == 0) return;
    std::lock_guard<std::recursive_mutex> lock(step_mu_);
    copy_to_device_async(dst.data, src, size_t(dst.nbytes()), stream());
    stream().synchronize();  // src may be freed or rewritten by the caller from now on
  }
  MemoryInfo memory_info() const override {
    size_t free_b = 0, total_b = 0;
    OXYD_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    return {int64_t(free_b), int64_t(total_b)};
  }

  // Step graphs: stream capture of the ops this thread queues (the step lock keeps other threads'
  // work out), an instantiated graph per id. Any refused call inside the capture fails it, and the caller runs
  // the step eagerly.
  bool graph_capture_begin() override {
    if (cudaStreamBeginCapture(stream().handle(), cudaStreamCaptureModeThreadLocal) == cudaSuccess) return true;
    (void)cudaGetLastError();
    return false;
  }
  int64_t graph_capture_end() override {
    cudaGraph_t g = nullptr;
    const cudaError_t err = cudaStreamEndCapture(stream().handle(), &g);
    if (err != cudaSuccess || !g) {
      (void)cudaGetLastError();
      if (g) (void)cudaGraphDestroy(g);
      return -1;
    }
    cudaGraphExec_t exec = nullptr;
    const cudaError_t ierr = cudaGraphInstantiate(&exec, g, 0);
    (void)cudaGraphDestroy(g);
    if (ierr != cudaSuccess) {
      (void)cudaGetLastError();
      return -1;
    }
    std::lock_guard<std::mutex> lock(graphs_mu_);
    for (size_t i = 0; i < graphs_.size(); ++i)
      if (!graphs_[i]) {
        graphs_[i] = exec;
        return int64_t(i);
      }
    graphs_.push_back(exec);
    return int64_t(graphs_.size()) - 1;
  }
  void graph_replay(int64_t id) override { OXYD_CUDA_CHECK(cudaGraphLaunch(graph(id), stream().handle())); }
  void graph_release(int64_t id) override {
    std::lock_guard<std::mutex> lock(graphs_mu_);
    if (id >= 0 && size_t(id) < graphs_.size() && graphs_[size_t(id)]) {
      (void)cudaGraphExecDestroy(graphs_[size_t(id)]);
      graphs_[size_t(id)] = nullptr;
    }
  }
  uint64_t graph_memory_epoch() const override { return device_free_epoch(); }
  std::recursive_mutex* step_mutex() override { return &step_mu_; }

  bool has_weight_kernel(DType t) const override { return t == DType::F32 || gemv_supports(t); }
  // Device scratch lives in this backend's workspaces, not in per-thread host scratch.
  int64_t matmul_scratch_bytes(DType, int64_t, int64_t) const override { return 0; }

 protected:
  void* raw_allocate(size_t bytes, void** handle) override {
    void* p = nullptr;
    const cudaError_t err = cudaMalloc(&p, bytes);
    if (err != cudaSuccess) {
      (void)cudaGetLastError();
      size_t free_b = 0, total_b = 0;
      (void)cudaMemGetInfo(&free_b, &total_b);
      throw Error(ErrorCode::OUT_OF_MEMORY, "cuda: cudaMalloc of " + std::to_string(bytes) + " bytes failed (" +
                                                cudaGetErrorString(err) + "); " + std::to_string(free_b) +
                                                " of " + std::to_string(total_b) + " bytes free");
    }
    *handle = nullptr;
    return p;
  }
  void raw_release(void* data, void*, size_t) noexcept override {
    (void)cudaFree(data);
    note_device_free();
  }

 private:
  // One stream, cuBLAS handle and workspace set for the process. Steps of models served at once
  // come from different engine threads: each runs whole under step_mu_ (step_mutex(), taken by
  // runner::ModelRunner and Transformer::embed), and host copies from any other thread (a model
  // loading) wait for it, so no step interleaves with another's kernels, shares its scratch, or
  // finds them in its graph capture.
  const Stream& stream() const { return stream_; }
  Gemm& gemm() {
    std::call_once(gemm_once_, [this] { gemm_ = std::make_unique<Gemm>(); });  // cuBLAS needs a device
    return *gemm_;
  }
  Stream stream_;
  std::once_flag gemm_once_;
  std::unique_ptr<Gemm> gemm_;
  Workspace attn_ws_, moe_ws_;
  ExpertTables expert_tables_;
  std::recursive_mutex step_mu_;
  cudaGraphExec_t graph(int64_t id) {
    std::lock_guard<std::mutex> lock(graphs_mu_);
    if (id < 0 || size_t(id) >= graphs_.size() || !graphs_[size_t(id)])
      throw Error(ErrorCode::INTERNAL, "cuda: no step graph " + std::to_string(id));
    return graphs_[size_t(id)];
  }
  std::mutex graphs_mu_;
  std::vector<cudaGraphExec_t> graphs_;  // by id, for every thread; released slots are null
};

}  // namespace

Backend* register_cuda_backend() {
  static Backend* b = []() -> Backend* {
    if (!cuda_available()) return nullptr;
    static CudaBackend backend;
    register_backend(backend);
    return &backend;
  }();
  return b;
}

}  // namespace oxyd::backend::cuda
