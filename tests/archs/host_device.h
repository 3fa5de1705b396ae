// HostDevice: a backend registered for Device::CUDA whose memory is host memory and whose ops are
// the CPU backend's, so a CPU machine runs everything a GPU run does outside the kernels (uploads,
// per-step metadata, device tensors everywhere, copies back). It counts the host copies and
// reports the memory_info a test sets. It cannot see a host read of device memory (both are host
// memory here): the real check of that is the GPU run (tests/cuda_model).
// With `graphs` set it emulates step graphs (backend.h graph_*) as a CUDA stream capture behaves:
// while capturing, each op is recorded as a closure over its arguments and not run; a replay runs
// the closures again (on whatever the memory then holds); a host copy inside a capture throws, as
// a synchronizing copy fails a CUDA capture. Every free moves graph_memory_epoch.
#pragma once

#include <cstdlib>
#include <cstring>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "backend/backend.h"
#include "backend/cpu/backend.h"
#include "core/error.h"

namespace oxyd::model::test {

class HostDevice final : public backend::Backend {
 public:
  int64_t uploads = 0, downloads = 0, download_bytes = 0;
  MemoryInfo memory{};  // what memory_info() reports (the engine's device plan reads it)

  Device device() const override { return Device::CUDA; }
  std::string_view name() const override { return "host-device"; }
  void matmul(const Tensor& x, const Tensor& w, const Tensor& y) override { run([=] { cpu().matmul(x, w, y); }); }
  void get_rows(const Tensor& t, const Tensor& ids, const Tensor& out) override { run([=] { cpu().get_rows(t, ids, out); }); }
  void rms_norm(const Tensor& x, const Tensor* w, float eps, const Tensor& y) override {
    const std::optional<Tensor> wc = w ? std::optional<Tensor>(*w) : std::nullopt;  // kernels take values
    run([=] { cpu().rms_norm(x, wc ? &*wc : nullptr, eps, y); });
  }
  void layer_norm(const Tensor& x, const Tensor* w, const Tensor* b, float eps, const Tensor& y) override {
    const std::optional<Tensor> wc = w ? std::optional<Tensor>(*w) : std::nullopt;
    const std::optional<Tensor> bc = b ? std::optional<Tensor>(*b) : std::nullopt;
    run([=] { cpu().layer_norm(x, wc ? &*wc : nullptr, bc ? &*bc : nullptr, eps, y); });
  }
  void rope(const Tensor& x, const Tensor& pos, const Tensor& inv, const Tensor* ff, backend::RopeStyle s, float af,
            const Tensor& y) override {
    const std::optional<Tensor> fc = ff ? std::optional<Tensor>(*ff) : std::nullopt;
    run([=] { cpu().rope(x, pos, inv, fc ? &*fc : nullptr, s, af, y); });
  }
  void attn_temperature(const Tensor& x, const Tensor& pos, float beta, int64_t fl, const Tensor& y) override {
    run([=] { cpu().attn_temperature(x, pos, beta, fl, y); });
  }
  void causal_conv1d(const Tensor& x, const Tensor& w, const Tensor& st, const Tensor& qsl, const Tensor& sl,
                     const Tensor& y) override {
    run([=] { cpu().causal_conv1d(x, w, st, qsl, sl, y); });
  }
  void gdn_gating(const Tensor& a, const Tensor& b, const Tensor& al, const Tensor& dt, const Tensor& g,
                  const Tensor& be) override {
    run([=] { cpu().gdn_gating(a, b, al, dt, g, be); });
  }
  void gated_delta_rule(const Tensor& qkv, int64_t hk, const Tensor& g, const Tensor& be, const Tensor& st,
                        const Tensor& qsl, const Tensor& sl, const Tensor& out) override {
    run([=] { cpu().gated_delta_rule(qkv, hk, g, be, st, qsl, sl, out); });
  }
  void softmax(const Tensor& x, float s, const Tensor& y) override { run([=] { cpu().softmax(x, s, y); }); }
  void activation(backend::Activation a, const Tensor& x, const Tensor& y) override { run([=] { cpu().activation(a, x, y); }); }
  void glu(backend::Activation a, const Tensor& g, const Tensor& u, const Tensor& y) override { run([=] { cpu().glu(a, g, u, y); }); }
  void glu_fused(backend::Activation a, const Tensor& gu, const Tensor& y) override { run([=] { cpu().glu_fused(a, gu, y); }); }
  void glu_oai(const Tensor& g, const Tensor& u, float al, float li, const Tensor& y) override {
    run([=] { cpu().glu_oai(g, u, al, li, y); });
  }
  void add(const Tensor& a, const Tensor& b, const Tensor& y) override { run([=] { cpu().add(a, b, y); }); }
  void mul(const Tensor& a, const Tensor& b, const Tensor& y) override { run([=] { cpu().mul(a, b, y); }); }
  void scale(const Tensor& x, float s, const Tensor& y) override { run([=] { cpu().scale(x, s, y); }); }
  void softcap(const Tensor& x, float c, const Tensor& y) override { run([=] { cpu().softcap(x, c, y); }); }
  void clamp(const Tensor& x, float l, const Tensor& y) override { run([=] { cpu().clamp(x, l, y); }); }
  void paged_attention(const backend::AttentionParams& p) override { run([=] { cpu().paged_attention(p); }); }
  void reshape_and_cache(const Tensor& k, const Tensor& v, const Tensor& kc, const Tensor& vc, const Tensor& sm,
                         KvFormat f) override {
    run([=] { cpu().reshape_and_cache(k, v, kc, vc, sm, f); });
  }
  void moe_route(const Tensor& l, const backend::RouterParams& p, const Tensor& ids, const Tensor& w) override {
    run([=] { cpu().moe_route(l, p, ids, w); });
  }
  void moe_combine(const Tensor& e, const Tensor& r, const Tensor& w, const Tensor& y) override {
    run([=] { cpu().moe_combine(e, r, w, y); });
  }
  void moe_group(const Tensor& ids, const Tensor& o, const Tensor& g, const Tensor& r) override {
    run([=] { cpu().moe_group(ids, o, g, r); });
  }
  void zero(const Tensor& y) override { run([=] { cpu().zero(y); }); }
  void argmax_rows(const Tensor& x, int64_t cols, const Tensor& ids) override {
    run([=] { cpu().argmax_rows(x, cols, ids); });  // on "device" memory: nothing crosses
  }
  void copy_to_host(const Tensor& x, void* dst) override {
    no_copy_while_capturing("copy_to_host");
    ++downloads;
    download_bytes += x.nbytes();
    if (x.nbytes() > 0) std::memcpy(dst, x.data, size_t(x.nbytes()));
  }
  void copy_from_host(const void* src, const Tensor& y) override {
    no_copy_while_capturing("copy_from_host");
    ++uploads;
    if (y.nbytes() > 0) std::memcpy(y.data, src, size_t(y.nbytes()));
  }
  MemoryInfo memory_info() const override { return memory; }

  bool graphs = false;  // emulate step graphs
  int64_t graph_captures = 0, graph_replays = 0, graph_failures = 0;
  bool graph_capture_begin() override {
    if (!graphs) return false;
    recording_.emplace();
    return true;
  }
  int64_t graph_capture_end() override {
    std::vector<std::function<void()>> ops = std::move(*recording_);
    recording_.reset();
    if (capture_failed_) {
      capture_failed_ = false;
      ++graph_failures;
      return -1;
    }
    ++graph_captures;
    recorded_.push_back(std::move(ops));
    return int64_t(recorded_.size()) - 1;
  }
  void graph_replay(int64_t id) override {
    ++graph_replays;
    for (const auto& op : recorded_.at(size_t(id))) op();
  }
  void graph_release(int64_t id) override { recorded_.at(size_t(id)).clear(); }
  uint64_t graph_memory_epoch() const override { return frees_; }
  bool has_weight_kernel(DType t) const override { return cpu().has_weight_kernel(t); }
  int64_t matmul_scratch_bytes(DType t, int64_t m, int64_t k) const override {
    return cpu().matmul_scratch_bytes(t, m, k);
  }

 protected:
  void* raw_allocate(size_t bytes, void** handle) override {
    void* p = std::aligned_alloc(256, (bytes + 255) / 256 * 256);
    if (!p) throw Error(ErrorCode::OUT_OF_MEMORY, "host-device: out of memory");
    return *handle = p;
  }
  void raw_release(void* data, void*, size_t) noexcept override {
    std::free(data);
    ++frees_;
  }

 private:
  template <class F> void run(F&& op) {
    if (recording_) recording_->push_back(std::forward<F>(op));
    else op();
  }
  void no_copy_while_capturing(const char* what) {
    if (!recording_) return;
    capture_failed_ = true;
    throw Error(ErrorCode::INTERNAL, std::string("host-device: ") + what + " inside a graph capture");
  }
  std::optional<std::vector<std::function<void()>>> recording_;
  std::vector<std::vector<std::function<void()>>> recorded_;
  bool capture_failed_ = false;
  uint64_t frees_ = 0;
  static backend::Backend& cpu() { return backend::cpu::cpu_backend(); }
};

}  // namespace oxyd::model::test
