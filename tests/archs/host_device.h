// HostDevice: a backend registered for Device::CUDA whose memory is host memory and whose ops are
// the CPU backend's, so a CPU machine runs everything a GPU run does outside the kernels (uploads,
// per-step metadata, device tensors everywhere, copies back). It counts the host copies and
// reports the memory_info a test sets. It cannot see a host read of device memory (both are host
// memory here): the real check of that is the GPU run (tests/cuda_model).
#pragma once

#include <cstdlib>
#include <cstring>

#include "backend/backend.h"
#include "backend/cpu/backend.h"
#include "core/error.h"

namespace oxyd::model::test {

class HostDevice final : public backend::Backend {
 public:
  int64_t uploads = 0, downloads = 0;
  MemoryInfo memory{};  // what memory_info() reports (the engine's device plan reads it)

  Device device() const override { return Device::CUDA; }
  std::string_view name() const override { return "host-device"; }
  void matmul(const Tensor& x, const Tensor& w, const Tensor& y) override { cpu().matmul(x, w, y); }
  void get_rows(const Tensor& t, const Tensor& ids, const Tensor& out) override { cpu().get_rows(t, ids, out); }
  void rms_norm(const Tensor& x, const Tensor* w, float eps, const Tensor& y) override { cpu().rms_norm(x, w, eps, y); }
  void layer_norm(const Tensor& x, const Tensor* w, const Tensor* b, float eps, const Tensor& y) override {
    cpu().layer_norm(x, w, b, eps, y);
  }
  void rope(const Tensor& x, const Tensor& pos, const Tensor& inv, const Tensor* ff, backend::RopeStyle s, float af,
            const Tensor& y) override {
    cpu().rope(x, pos, inv, ff, s, af, y);
  }
  void attn_temperature(const Tensor& x, const Tensor& pos, float beta, int64_t fl, const Tensor& y) override {
    cpu().attn_temperature(x, pos, beta, fl, y);
  }
  void causal_conv1d(const Tensor& x, const Tensor& w, const Tensor& st, const Tensor& qsl, const Tensor& sl,
                     const Tensor& y) override {
    cpu().causal_conv1d(x, w, st, qsl, sl, y);
  }
  void gdn_gating(const Tensor& a, const Tensor& b, const Tensor& al, const Tensor& dt, const Tensor& g,
                  const Tensor& be) override {
    cpu().gdn_gating(a, b, al, dt, g, be);
  }
  void gated_delta_rule(const Tensor& qkv, int64_t hk, const Tensor& g, const Tensor& be, const Tensor& st,
                        const Tensor& qsl, const Tensor& sl, const Tensor& out) override {
    cpu().gated_delta_rule(qkv, hk, g, be, st, qsl, sl, out);
  }
  void softmax(const Tensor& x, float s, const Tensor& y) override { cpu().softmax(x, s, y); }
  void activation(backend::Activation a, const Tensor& x, const Tensor& y) override { cpu().activation(a, x, y); }
  void glu(backend::Activation a, const Tensor& g, const Tensor& u, const Tensor& y) override { cpu().glu(a, g, u, y); }
  void glu_fused(backend::Activation a, const Tensor& gu, const Tensor& y) override { cpu().glu_fused(a, gu, y); }
  void glu_oai(const Tensor& g, const Tensor& u, float al, float li, const Tensor& y) override {
    cpu().glu_oai(g, u, al, li, y);
  }
  void add(const Tensor& a, const Tensor& b, const Tensor& y) override { cpu().add(a, b, y); }
  void mul(const Tensor& a, const Tensor& b, const Tensor& y) override { cpu().mul(a, b, y); }
  void scale(const Tensor& x, float s, const Tensor& y) override { cpu().scale(x, s, y); }
  void softcap(const Tensor& x, float c, const Tensor& y) override { cpu().softcap(x, c, y); }
  void clamp(const Tensor& x, float l, const Tensor& y) override { cpu().clamp(x, l, y); }
  void paged_attention(const backend::AttentionParams& p) override { cpu().paged_attention(p); }
  void reshape_and_cache(const Tensor& k, const Tensor& v, const Tensor& kc, const Tensor& vc, const Tensor& sm,
                         KvFormat f) override {
    cpu().reshape_and_cache(k, v, kc, vc, sm, f);
  }
  void moe_route(const Tensor& l, const backend::RouterParams& p, const Tensor& ids, const Tensor& w) override {
    cpu().moe_route(l, p, ids, w);
  }
  void moe_combine(const Tensor& e, const Tensor& r, const Tensor& w, const Tensor& y) override {
    cpu().moe_combine(e, r, w, y);
  }
  void moe_group(const Tensor& ids, const Tensor& o, const Tensor& g, const Tensor& r) override {
    cpu().moe_group(ids, o, g, r);
  }
  void zero(const Tensor& y) override { cpu().zero(y); }
  void copy_to_host(const Tensor& x, void* dst) override {
    ++downloads;
    if (x.nbytes() > 0) std::memcpy(dst, x.data, size_t(x.nbytes()));
  }
  void copy_from_host(const void* src, const Tensor& y) override {
    ++uploads;
    if (y.nbytes() > 0) std::memcpy(y.data, src, size_t(y.nbytes()));
  }
  MemoryInfo memory_info() const override { return memory; }
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
  void raw_release(void* data, void*, size_t) noexcept override { std::free(data); }

 private:
  static backend::Backend& cpu() { return backend::cpu::cpu_backend(); }
};

}  // namespace oxyd::model::test
