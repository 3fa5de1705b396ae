// The device seam (backend/backend.h, ops/dispatch.h): ops reach the backend registered for their
// tensors' device with the arguments they were given; a device without one is UNSUPPORTED with a
// message naming op and device; the CPU backend gives exactly what backend::cpu gives.
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "backend/cpu/activation.h"
#include "backend/cpu/attention.h"
#include "backend/cpu/backend.h"
#include "backend/cpu/elementwise.h"
#include "backend/cpu/layer_norm.h"
#include "backend/cpu/matmul.h"
#include "backend/cpu/rms_norm.h"
#include "backend/cpu/rope.h"
#include "backend/cpu/softmax.h"
#include "core/error.h"
#include "op_test_util.h"
#include "ops/activation.h"
#include "ops/attention.h"
#include "ops/dispatch.h"
#include "ops/elementwise.h"
#include "ops/embedding.h"
#include "ops/matmul.h"
#include "ops/rms_norm.h"
#include "ops/rope.h"
#include "ops/gated_delta_net.h"
#include "ops/softmax.h"

namespace oxyd::test {
namespace {

using backend::Activation;
using backend::AttentionParams;
using backend::RopeStyle;

// Records the op it received and the data pointers / scalars of its arguments.
class FakeCuda final : public backend::Backend {
 public:
  std::string op;
  std::vector<const void*> ptrs;
  std::vector<double> scalars;
  void* last_dst = nullptr;

  Device device() const override { return Device::CUDA; }
  std::string_view name() const override { return "fake-cuda"; }
  void matmul(const Tensor& x, const Tensor& w, const Tensor& y) override { got("matmul", {&x, &w, &y}); }
  void get_rows(const Tensor& t, const int32_t* ids, int64_t n, const Tensor& out) override {
    got("get_rows", {&t, &out}, {double(n)});
    ptrs.push_back(ids);
  }
  void rms_norm(const Tensor& x, const Tensor* w, float eps, const Tensor& y) override { got("rms_norm", {&x, w, &y}, {eps}); }
  void layer_norm(const Tensor& x, const Tensor* w, const Tensor* b, float eps, const Tensor& y) override {
    got("layer_norm", {&x, w, b, &y}, {eps});
  }
  void rope(const Tensor& x, const Tensor& pos, const Tensor& inv, const Tensor* ff, RopeStyle s, float af,
            const Tensor& y) override {
    got("rope", {&x, &pos, &inv, ff, &y}, {double(int(s)), af});
  }
  void attn_temperature(const Tensor& x, const Tensor& pos, float beta, int64_t floor, const Tensor& y) override {
    got("attn_temperature", {&x, &pos, &y}, {beta, double(floor)});
  }
  void causal_conv1d(const Tensor& x, const Tensor& w, const Tensor& st, const Tensor& qsl, const Tensor& sl,
                     const Tensor& y) override {
    got("causal_conv1d", {&x, &w, &st, &qsl, &sl, &y});
  }
  void gdn_gating(const Tensor& a, const Tensor& b, const Tensor& al, const Tensor& dt, const Tensor& g,
                  const Tensor& be) override {
    got("gdn_gating", {&a, &b, &al, &dt, &g, &be});
  }
  void gated_delta_rule(const Tensor& qkv, int64_t hk, const Tensor& g, const Tensor& be, const Tensor& st,
                        const Tensor& qsl, const Tensor& sl, const Tensor& out) override {
    got("gated_delta_rule", {&qkv, &g, &be, &st, &qsl, &sl, &out}, {double(hk)});
  }
  void softmax(const Tensor& x, float s, const Tensor& y) override { got("softmax", {&x, &y}, {s}); }
  void activation(Activation a, const Tensor& x, const Tensor& y) override { got("activation", {&x, &y}, {double(int(a))}); }
  void glu(Activation a, const Tensor& g, const Tensor& u, const Tensor& y) override { got("glu", {&g, &u, &y}, {double(int(a))}); }
  void glu_fused(Activation a, const Tensor& gu, const Tensor& y) override { got("glu_fused", {&gu, &y}, {double(int(a))}); }
  void glu_oai(const Tensor& g, const Tensor& u, float al, float li, const Tensor& y) override {
    got("glu_oai", {&g, &u, &y}, {al, li});
  }
  void add(const Tensor& a, const Tensor& b, const Tensor& y) override { got("add", {&a, &b, &y}); }
  void mul(const Tensor& a, const Tensor& b, const Tensor& y) override { got("mul", {&a, &b, &y}); }
  void scale(const Tensor& x, float s, const Tensor& y) override { got("scale", {&x, &y}, {s}); }
  void softcap(const Tensor& x, float c, const Tensor& y) override { got("softcap", {&x, &y}, {c}); }
  void copy_to_host(const Tensor& x, void* dst) override { got("copy_to_host", {&x}); last_dst = dst; }
  void copy_from_host(const void* src, const Tensor& y) override {
    got("copy_from_host", {&y});
    ptrs.push_back(src);
  }
  void clamp(const Tensor& x, float l, const Tensor& y) override { got("clamp", {&x, &y}, {l}); }
  void paged_attention(const AttentionParams& p) override { got("paged_attention", {&p.q, &p.k_cache, &p.out}, {p.scale}); }
  void reshape_and_cache(const Tensor& k, const Tensor& v, const Tensor& kc, const Tensor& vc, const Tensor& sm,
                         KvFormat f) override {
    got("reshape_and_cache", {&k, &v, &kc, &vc, &sm}, {double(int(f))});
  }
  void moe_route(const Tensor& l, const backend::RouterParams& p, const Tensor& ids, const Tensor& w) override {
    got("moe_route", {&l, &ids, &w}, {double(p.top_k)});
  }
  void moe_combine(const Tensor& e, const Tensor& r, const Tensor& w, const Tensor& y) override {
    got("moe_combine", {&e, &r, &w, &y});
  }
  void moe_group(const Tensor& ids, const Tensor& o, const Tensor& g, const Tensor& r) override {
    got("moe_group", {&ids, &o, &g, &r});
  }
  void zero(const Tensor& y) override { got("zero", {&y}); }
  bool has_weight_kernel(DType t) const override { return t == DType::F32; }
  int64_t matmul_scratch_bytes(DType, int64_t m, int64_t k) const override { return m * k; }

 protected:
  void* raw_allocate(size_t bytes, void** handle) override { return *handle = new char[bytes]; }
  void raw_release(void*, void* handle, size_t) noexcept override { delete[] static_cast<char*>(handle); }

 private:
  void got(const char* name, std::initializer_list<const Tensor*> ts, std::initializer_list<double> s = {}) {
    op = name;
    ptrs.clear();
    for (const Tensor* t : ts) ptrs.push_back(t ? t->data : nullptr);
    scalars.assign(s);
  }
};

// Registers a FakeCuda for the test's lifetime.
struct FakeCudaScope {
  FakeCuda fake;
  FakeCudaScope() { backend::register_backend(fake); }
  ~FakeCudaScope() { backend::unregister_backend(fake); }
};

Tensor on_cuda(const HostTensor& h) {
  Tensor t = h.t;
  t.device = Device::CUDA;
  return t;
}

TEST(Dispatch, RegisteredDeviceReceivesTheOpWithItsArguments) {
  FakeCudaScope s;
  FakeCuda& f = s.fake;
  HostTensor x(DType::F32, {4, 8}), y(x.t), w(DType::F32, {8}), b(DType::F32, {8}), wm(DType::F32, {6, 8}),
      ym(DType::F32, {4, 6}), gu(DType::F32, {4, 16});
  const Tensor cx = on_cuda(x), cy = on_cuda(y), cw = on_cuda(w), cb = on_cuda(b);
  using P = std::vector<const void*>;
  ops::rms_norm(cx, &cw, 1e-5f, cy);
  EXPECT_EQ(f.op, "rms_norm");
  EXPECT_EQ(f.ptrs, (P{x.t.data, w.t.data, y.t.data}));
  EXPECT_FLOAT_EQ(float(f.scalars.at(0)), 1e-5f);
  ops::layer_norm(cx, &cw, nullptr, 1e-6f, cy);
  EXPECT_EQ(f.op, "layer_norm");
  EXPECT_EQ(f.ptrs, (P{x.t.data, w.t.data, nullptr, y.t.data}));
  ops::matmul(cx, on_cuda(wm), on_cuda(ym));
  EXPECT_EQ(f.op, "matmul");
  EXPECT_EQ(f.ptrs, (P{x.t.data, wm.t.data, ym.t.data}));
  const int32_t ids[2] = {1, 5};
  HostTensor rows(DType::F32, {2, 8});
  ops::embedding(on_cuda(wm), ids, 2, on_cuda(rows));
  EXPECT_EQ(f.op, "get_rows");
  EXPECT_EQ(f.ptrs, (P{wm.t.data, rows.t.data, ids}));
  ops::softmax(cx, cy, 0.5f);
  EXPECT_EQ(f.op, "softmax");
  EXPECT_EQ(f.scalars, std::vector<double>{0.5});
  ops::activation(Activation::GELU_TANH, cx, cy);
  EXPECT_EQ(f.op, "activation");
  EXPECT_EQ(f.scalars, std::vector<double>{double(int(Activation::GELU_TANH))});
  ops::glu(Activation::SILU, cx, cx, cy);
  EXPECT_EQ(f.op, "glu");
  ops::glu_fused(Activation::SILU, on_cuda(gu), cy);
  EXPECT_EQ(f.op, "glu_fused");
  EXPECT_EQ(f.ptrs, (P{gu.t.data, y.t.data}));
  ops::glu_oai(cx, cx, 1.702f, 7.0f, cy);
  EXPECT_EQ(f.op, "glu_oai");
  EXPECT_EQ(f.scalars, (std::vector<double>{1.702f, 7.0f}));
  ops::add(cx, cb, cy);
  EXPECT_EQ(f.op, "add");
  EXPECT_EQ(f.ptrs, (P{x.t.data, b.t.data, y.t.data}));
  ops::mul(cx, cx, cy);
  EXPECT_EQ(f.op, "mul");
  ops::scale(cx, 3.0f, cy);
  EXPECT_EQ(f.op, "scale");
  ops::softcap(cx, 30.0f, cy);
  EXPECT_EQ(f.op, "softcap");
  EXPECT_EQ(f.scalars, std::vector<double>{30.0});
  std::vector<float> host(size_t(x.t.numel()));
  ops::copy_to_host(cx, host.data());
  EXPECT_EQ(f.op, "copy_to_host");
  EXPECT_EQ(f.ptrs, (P{x.t.data}));
  EXPECT_EQ(f.last_dst, host.data());

  HostTensor q(DType::F32, {3, 2, 64}), pos(DType::I32, {3}), inv(DType::F32, {16});
  ops::rope(on_cuda(q), on_cuda(pos), on_cuda(inv), nullptr, RopeStyle::INTERLEAVED, 1.5f, on_cuda(q));
  EXPECT_EQ(f.op, "rope");
  EXPECT_EQ(f.ptrs, (P{q.t.data, pos.t.data, inv.t.data, nullptr, q.t.data}));
  EXPECT_EQ(f.scalars, (std::vector<double>{double(int(RopeStyle::INTERLEAVED)), 1.5}));
  ops::attn_temperature(on_cuda(q), on_cuda(pos), 0.25f, 16, on_cuda(q));
  EXPECT_EQ(f.op, "attn_temperature");
  EXPECT_EQ(f.ptrs, (P{q.t.data, pos.t.data, q.t.data}));
  EXPECT_EQ(f.scalars, (std::vector<double>{0.25, 16.0}));

  // Gated DeltaNet ops (request metadata is checked on the host: I32 host arrays here).
  HostTensor gx(DType::F32, {2, 8}), gy(gx.t), gw(DType::F32, {8, 4}), gcs(DType::F32, {1, 3, 8});
  HostTensor gqsl(DType::I32, {2}), gslot(DType::I32, {1});
  gqsl.i()[0] = 0, gqsl.i()[1] = 2, gslot.i()[0] = 0;
  ops::causal_conv1d(on_cuda(gx), on_cuda(gw), on_cuda(gcs), on_cuda(gqsl), on_cuda(gslot), on_cuda(gy));
  EXPECT_EQ(f.op, "causal_conv1d");
  EXPECT_EQ(f.ptrs, (P{gx.t.data, gw.t.data, gcs.t.data, gqsl.t.data, gslot.t.data, gy.t.data}));
  HostTensor ga(DType::F32, {2, 2}), gh(DType::F32, {2});
  ops::gdn_gating(on_cuda(ga), on_cuda(ga), on_cuda(gh), on_cuda(gh), on_cuda(ga), on_cuda(ga));
  EXPECT_EQ(f.op, "gdn_gating");
  HostTensor gqkv(DType::F32, {2, 2 * 1 * 4 + 2 * 4}), gout(DType::F32, {2, 2, 4}), gst(DType::F32, {1, 2, 4, 4});
  ops::gated_delta_rule(on_cuda(gqkv), 1, on_cuda(ga), on_cuda(ga), on_cuda(gst), on_cuda(gqsl), on_cuda(gslot),
                        on_cuda(gout));
  EXPECT_EQ(f.op, "gated_delta_rule");
  EXPECT_EQ(f.scalars, std::vector<double>{1.0});

  // Device metadata is not read on the host: only the backend sees it.
  HostTensor kv(DType::F32, {3, 2, 64}), cache(DType::F32, {2, 4, 2, 64}), slots(DType::I32, {3});
  ops::reshape_and_cache(on_cuda(kv), on_cuda(kv), on_cuda(cache), on_cuda(cache), on_cuda(slots), KvFormat::F32);
  EXPECT_EQ(f.op, "reshape_and_cache");
  EXPECT_EQ(f.ptrs, (P{kv.t.data, kv.t.data, cache.t.data, cache.t.data, slots.t.data}));
  HostTensor out(DType::F32, {3, 4, 64}), q4(out.t), qsl(DType::I32, {2}), lens(DType::I32, {1}), table(DType::I32, {1, 2});
  AttentionParams p;
  p.q = on_cuda(q4), p.k_cache = on_cuda(cache), p.v_cache = on_cuda(cache), p.query_start_loc = on_cuda(qsl);
  p.seq_lens = on_cuda(lens), p.block_table = on_cuda(table), p.out = on_cuda(out), p.scale = 0.125f;
  ops::paged_attention(p);
  EXPECT_EQ(f.op, "paged_attention");
  EXPECT_EQ(f.ptrs, (P{q4.t.data, cache.t.data, out.t.data}));

  // Memory and sizing come from the device's backend too.
  backend::Allocation a = ops::device_backend(Device::CUDA).allocate(100);
  EXPECT_EQ(a.size(), 100u);
  EXPECT_NE(a.data(), nullptr);
  EXPECT_EQ(backend::find_backend(Device::CUDA).matmul_scratch_bytes(DType::Q8_0, 3, 32), 96);
}

TEST(Dispatch, UnregisteredDeviceIsUnsupportedNamingOpAndDevice) {
  ASSERT_EQ(backend::registered_backend(Device::CUDA), nullptr);
  HostTensor x(DType::F32, {4, 8}), y(x.t), w(DType::F32, {6, 8}), ym(DType::F32, {4, 6});
  for (const auto& [op, fn] : std::vector<std::pair<std::string, std::function<void()>>>{
           {"ops::rms_norm", [&] { ops::rms_norm(on_cuda(x), nullptr, 1e-6f, on_cuda(y)); }},
           {"matmul", [&] { ops::matmul(on_cuda(x), on_cuda(w), on_cuda(ym)); }},
           {"ops::add", [&] { ops::add(on_cuda(x), on_cuda(x), on_cuda(y)); }}}) {
    try {
      fn();
      ADD_FAILURE() << op << ": no error";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::UNSUPPORTED) << e.what();
      const std::string msg = e.what();
      EXPECT_NE(msg.find(op + ": no backend registered for device CUDA"), std::string::npos) << msg;
    }
  }
  EXPECT_THROW(backend::find_backend(Device::CUDA), Error);
}

TEST(Dispatch, CpuBackendAllocatesAlignedHostMemory) {
  backend::Backend& cpu = ops::device_backend(Device::CPU);
  EXPECT_EQ(cpu.device(), Device::CPU);
  EXPECT_EQ(&backend::find_backend(Device::CPU), &cpu);
  backend::Allocation a = cpu.allocate(1000);
  ASSERT_NE(a.data(), nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a.data()) % 64, 0u);
  std::memset(a.data(), 7, a.size());
  backend::Allocation b = std::move(a);
  EXPECT_EQ(b.size(), 1000u);
  EXPECT_TRUE(a.empty());
  EXPECT_TRUE(cpu.allocate(0).empty());
  for (DType t : {DType::F32, DType::BF16, DType::Q8_0, DType::Q4_K})
    EXPECT_EQ(cpu.matmul_scratch_bytes(t, 7, 256), backend::cpu::matmul_scratch_bytes(t, 7, 256));
}

void expect_same(const HostTensor& a, const HostTensor& b, const char* what) {
  EXPECT_EQ(std::memcmp(a.buf.data(), b.buf.data(), size_t(a.t.nbytes())), 0) << what;
}

// Runs `via_backend` and `direct` on fresh outputs from the same inputs; they must agree bit for bit.
template <typename F, typename G>
void same_as_cpu(const HostTensor& like, F via_backend, G direct, const char* what) {
  HostTensor a(like.t), b(like.t);
  std::memset(a.buf.data(), 0, a.buf.size());
  std::memset(b.buf.data(), 0, b.buf.size());
  via_backend(a.t);
  direct(b.t);
  expect_same(a, b, what);
}

TEST(Dispatch, CpuBackendGivesWhatBackendCpuGives) {
  backend::Backend& be = ops::device_backend(Device::CPU);
  HostTensor x(DType::F32, {5, 64}), w(DType::F32, {64}), bias(DType::F32, {64}), wm(DType::F32, {24, 64}),
      ym(DType::F32, {5, 24}), gu(DType::F32, {5, 128}), h(DType::F32, {5, 64});
  fill_uniform(x, -2, 2, 1), fill_uniform(w, 0.5f, 1.5f, 2), fill_uniform(bias, -1, 1, 3);
  fill_uniform(wm, -1, 1, 4), fill_uniform(gu, -3, 3, 5);
  namespace cpu = backend::cpu;
  same_as_cpu(ym, [&](const Tensor& y) { be.matmul(x.t, wm.t, y); }, [&](const Tensor& y) { cpu::matmul(x.t, wm.t, y); }, "matmul");
  same_as_cpu(ym, [&](const Tensor& y) { ops::matmul(x.t, wm.t, y); }, [&](const Tensor& y) { cpu::matmul(x.t, wm.t, y); }, "ops::matmul");
  const int32_t ids[5] = {0, 3, 23, 3, 7};
  same_as_cpu(x, [&](const Tensor& o) { be.get_rows(wm.t, ids, 5, o); }, [&](const Tensor& o) { cpu::get_rows(wm.t, ids, 5, o); }, "get_rows");
  same_as_cpu(x, [&](const Tensor& y) { be.rms_norm(x.t, &w.t, 1e-6f, y); }, [&](const Tensor& y) { cpu::rms_norm(x.t, &w.t, 1e-6f, y); }, "rms_norm");
  same_as_cpu(x, [&](const Tensor& y) { be.layer_norm(x.t, &w.t, &bias.t, 1e-5f, y); },
              [&](const Tensor& y) { cpu::layer_norm(x.t, &w.t, &bias.t, 1e-5f, y); }, "layer_norm");
  same_as_cpu(x, [&](const Tensor& y) { be.softmax(x.t, 0.7f, y); }, [&](const Tensor& y) { cpu::softmax(x.t, 0.7f, y); }, "softmax");
  for (Activation act : {Activation::SILU, Activation::GELU_ERF, Activation::GELU_TANH}) {
    same_as_cpu(x, [&](const Tensor& y) { be.activation(act, x.t, y); }, [&](const Tensor& y) { cpu::activation(act, x.t, y); }, "activation");
    same_as_cpu(x, [&](const Tensor& y) { be.glu(act, x.t, h.t, y); }, [&](const Tensor& y) { cpu::glu(act, x.t, h.t, y); }, "glu");
    same_as_cpu(x, [&](const Tensor& y) { be.glu_fused(act, gu.t, y); }, [&](const Tensor& y) { cpu::glu_fused(act, gu.t, y); }, "glu_fused");
  }
  same_as_cpu(x, [&](const Tensor& y) { be.glu_oai(x.t, h.t, 1.702f, 7.0f, y); },
              [&](const Tensor& y) { cpu::glu_oai(x.t, h.t, 1.702f, 7.0f, y); }, "glu_oai");
  same_as_cpu(x, [&](const Tensor& y) { be.add(x.t, w.t, y); }, [&](const Tensor& y) { cpu::add(x.t, w.t, y); }, "add");
  same_as_cpu(x, [&](const Tensor& y) { be.mul(x.t, x.t, y); }, [&](const Tensor& y) { cpu::mul(x.t, x.t, y); }, "mul");
  same_as_cpu(x, [&](const Tensor& y) { be.scale(x.t, 1.3f, y); }, [&](const Tensor& y) { cpu::scale(x.t, 1.3f, y); }, "scale");
  same_as_cpu(x, [&](const Tensor& y) { be.softcap(x.t, 1.5f, y); }, [&](const Tensor& y) { cpu::softcap(x.t, 1.5f, y); }, "softcap");
  std::vector<float> back(size_t(x.t.numel()), -1.0f);
  ops::copy_to_host(x.t, back.data());
  EXPECT_EQ(std::memcmp(back.data(), x.t.data, size_t(x.t.nbytes())), 0) << "copy_to_host";

  HostTensor q(DType::F32, {3, 2, 64}), pos(DType::I32, {3}), inv(DType::F32, {16});
  fill_uniform(q, -1, 1, 6), fill_uniform(inv, 0.01f, 1, 7);
  for (int i = 0; i < 3; ++i) pos.i()[i] = 5 + 7 * i;
  same_as_cpu(q, [&](const Tensor& y) { be.rope(q.t, pos.t, inv.t, nullptr, RopeStyle::NEOX, 1.1f, y); },
              [&](const Tensor& y) { cpu::rope(q.t, pos.t, inv.t, nullptr, RopeStyle::NEOX, 1.1f, y); }, "rope");

  // One request of 3 tokens in a 2-block cache of block_size 4: write K/V, then attend.
  HostTensor kv(DType::F32, {3, 2, 64}), slots(DType::I32, {3}), qsl(DType::I32, {2}), lens(DType::I32, {1}),
      table(DType::I32, {1, 2}), qa(DType::F32, {3, 4, 64});
  fill_uniform(kv, -1, 1, 8), fill_uniform(qa, -1, 1, 9);
  slots.i()[0] = 4, slots.i()[1] = 5, slots.i()[2] = 6;  // block 1
  qsl.i()[0] = 0, qsl.i()[1] = 3, lens.i()[0] = 3, table.i()[0] = 1, table.i()[1] = 0;
  HostTensor kc(DType::F32, {2, 4, 2, 64}), vc(kc.t), kc2(kc.t), vc2(kc.t);
  for (const HostTensor* c : {&kc, &vc, &kc2, &vc2}) std::memset(c->buf.data(), 0, c->buf.size());
  be.reshape_and_cache(kv.t, kv.t, kc.t, vc.t, slots.t, KvFormat::F32);
  cpu::reshape_and_cache(kv.t, kv.t, kc2.t, vc2.t, slots.t, KvFormat::F32);
  expect_same(kc, kc2, "reshape_and_cache k"), expect_same(vc, vc2, "reshape_and_cache v");
  auto attend = [&](const Tensor& o, bool via_backend) {
    AttentionParams p;
    p.q = qa.t, p.k_cache = kc.t, p.v_cache = vc.t, p.query_start_loc = qsl.t, p.seq_lens = lens.t;
    p.block_table = table.t, p.out = o, p.scale = 0.125f;
    via_backend ? be.paged_attention(p) : cpu::paged_attention(p);
  };
  same_as_cpu(qa, [&](const Tensor& o) { attend(o, true); }, [&](const Tensor& o) { attend(o, false); }, "paged_attention");
}

}  // namespace
}  // namespace oxyd::test
