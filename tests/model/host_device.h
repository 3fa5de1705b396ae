// A stand-in device for tests of the device seam: registered for Device::CUDA, its memory is host
// memory and every op runs the CPU backend's kernel on it, so a model whose tensors are tagged
// CUDA computes what the CPU computes. It counts the host↔device copies and allocations, which is
// what a test of "model/ never touches device memory on the host" checks.
#pragma once

#include <cstring>

#include "backend/backend.h"
#include "backend/cpu/backend.h"
#include "core/tensor.h"

namespace oxyd::test {

class HostDevice final : public backend::Backend {
 public:
  int copies_from_host = 0, copies_to_host = 0, allocations = 0;

  HostDevice() { backend::register_backend(*this); }
  ~HostDevice() override { backend::unregister_backend(*this); }

  Device device() const override { return Device::CUDA; }
  std::string_view name() const override { return "host-as-cuda"; }
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
  void attn_temperature(const Tensor& x, const Tensor& pos, float beta, int64_t floor, const Tensor& y) override {
    cpu().attn_temperature(x, pos, beta, floor, y);
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
  void moe_experts(const backend::MoeExpertsParams& p) override { cpu().moe_experts(p); }
  void zero(const Tensor& y) override { cpu().zero(y); }
  void copy_to_host(const Tensor& src, void* dst) override {
    ++copies_to_host;
    if (src.nbytes() > 0) std::memcpy(dst, src.data, size_t(src.nbytes()));
  }
  void copy_from_host(const void* src, const Tensor& dst) override {
    ++copies_from_host;
    if (dst.nbytes() > 0) std::memcpy(dst.data, src, size_t(dst.nbytes()));
  }
  bool has_weight_kernel(DType t) const override { return cpu().has_weight_kernel(t); }
  int64_t matmul_scratch_bytes(DType t, int64_t m, int64_t k) const override { return cpu().matmul_scratch_bytes(t, m, k); }

 protected:
  void* raw_allocate(size_t bytes, void** handle) override {
    ++allocations;
    auto* b = new Buffer(bytes);
    *handle = b;
    return b->data();
  }
  void raw_release(void*, void* handle, size_t) noexcept override { delete static_cast<Buffer*>(handle); }

 private:
  static backend::Backend& cpu() { return backend::cpu::cpu_backend(); }
};

}  // namespace oxyd::test
