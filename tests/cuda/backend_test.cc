// CudaBackend (backend/cuda/backend.h) through the Backend interface, for the ops that have no
// kernel test of their own: get_rows (F32 and block-format tables), glu_oai, clamp,
// attn_temperature, the MoE bookkeeping, the Gated DeltaNet ops, zero and the host copies. The
// oracle is backend/reference on the same inputs in host memory (the grouped experts: the default
// per-expert loop).
#include <gtest/gtest.h>

#include <numeric>
#include <thread>

#include "backend/cuda/backend.h"
#include "backend/reference/activation.h"
#include "backend/reference/elementwise.h"
#include "backend/reference/gated_delta_net.h"
#include "backend/reference/get_rows.h"
#include "backend/reference/moe.h"
#include "backend/reference/rope.h"
#include "core/quant.h"
#include "cuda_test_util.h"

namespace oxyd::backend::cuda::test {
namespace {

#define OXYD_REQUIRE_CUDA_BACKEND()                                                       \
  OXYD_REQUIRE_CUDA();                                                                    \
  Backend& be = *register_cuda_backend();                                                 \
  ASSERT_EQ(&be, registered_backend(Device::CUDA));

// Device copies of host vectors, kept alive with the test.
struct Dev {
  std::vector<DeviceBuffer> bufs;
  Tensor f32(const std::vector<float>& v, std::initializer_list<int64_t> dims) {
    bufs.push_back(upload(DType::F32, v));
    return Tensor(DType::F32, bufs.back().data(), dims, Device::CUDA);
  }
  Tensor i32(const std::vector<int32_t>& v, std::initializer_list<int64_t> dims) {
    bufs.emplace_back(v.size() * 4 + 16);
    copy_to_device(bufs.back().data(), v.data(), v.size() * 4);
    return Tensor(DType::I32, bufs.back().data(), dims, Device::CUDA);
  }
  Tensor raw(DType t, const std::vector<uint8_t>& bytes, std::initializer_list<int64_t> dims) {
    bufs.emplace_back(bytes.size() + 16);
    copy_to_device(bufs.back().data(), bytes.data(), bytes.size());
    return Tensor(t, bufs.back().data(), dims, Device::CUDA);
  }
};

template <typename T> std::vector<T> host_of(Backend& be, const Tensor& t) {
  std::vector<T> v(size_t(t.numel()));
  be.copy_to_host(t, v.data());
  return v;
}

Tensor host(std::vector<float>& v, std::initializer_list<int64_t> dims) { return Tensor(DType::F32, v.data(), dims); }
Tensor host(std::vector<int32_t>& v, std::initializer_list<int64_t> dims) { return Tensor(DType::I32, v.data(), dims); }

TEST(CudaBackend, GetRowsOfF32AndBlockTables) {
  OXYD_REQUIRE_CUDA_BACKEND();
  const int64_t n = 37, dim = 256;
  std::vector<int32_t> ids{3, 0, 36, 3, 17, 9};
  std::vector<float> table = random_floats(size_t(n * dim), 1);
  for (DType t : {DType::F32, DType::F16, DType::BF16, DType::Q8_0, DType::Q4_0, DType::Q4_K, DType::Q5_K, DType::Q6_K}) {
    SCOPED_TRACE(std::string(dtype_traits(t).name));
    const int64_t rb = dtype_row_bytes(t, dim);
    std::vector<uint8_t> rows(size_t(n * rb));
    for (int64_t r = 0; r < n; ++r) quantize_row(t, table.data() + r * dim, rows.data() + r * rb, dim);
    Dev d;
    const Tensor tab = d.raw(t, rows, {n, dim});
    const Tensor out = d.f32(std::vector<float>(ids.size() * dim), {int64_t(ids.size()), dim});
    be.get_rows(tab, d.i32(ids, {int64_t(ids.size())}), out);
    std::vector<float> want(ids.size() * dim);
    reference::get_rows(Tensor(t, rows.data(), {n, dim}), ids.data(), int64_t(ids.size()), host(want, {int64_t(ids.size()), dim}));
    expect_close(host_of<float>(be, out), want, {0, 0}, "get_rows");  // the same decoder: bit-identical
  }
}

TEST(CudaBackend, GluOaiClampTemperature) {
  OXYD_REQUIRE_CUDA_BACKEND();
  const int64_t T = 5, H = 3, D = 64;
  std::vector<float> g = random_floats(size_t(T * H * D), 2, -12, 12), u = random_floats(size_t(T * H * D), 3, -12, 12);
  Dev d;
  const Tensor gd = d.f32(g, {T, H * D}), ud = d.f32(u, {T, H * D}), yd = d.f32(g, {T, H * D});
  std::vector<float> want(g.size());
  be.glu_oai(gd, ud, 1.702f, 7.0f, yd);
  reference::glu_oai(host(g, {T, H * D}), host(u, {T, H * D}), 1.702f, 7.0f, host(want, {T, H * D}));
  expect_close(host_of<float>(be, yd), want, tolerance_for(DType::F32, 1e-5), "glu_oai");
  be.clamp(gd, 4.5f, yd);
  reference::clamp(host(g, {T, H * D}), 4.5f, host(want, {T, H * D}));
  expect_close(host_of<float>(be, yd), want, {0, 0}, "clamp");
  std::vector<int32_t> pos{0, 1, 8191, 8192, 300000};
  const Tensor pd = d.i32(pos, {T});
  const Tensor xd = d.f32(g, {T, H, D}), od = d.f32(g, {T, H, D});
  be.attn_temperature(xd, pd, 0.1f, 8192, od);
  reference::attn_temperature(host(g, {T, H, D}), host(pos, {T}), 0.1f, 8192, host(want, {T, H, D}));
  expect_close(host_of<float>(be, od), want, tolerance_for(DType::F32), "attn_temperature");
}

TEST(CudaBackend, MoeRouteGroupCombine) {
  OXYD_REQUIRE_CUDA_BACKEND();
  const int64_t T = 19, E = 40, k = 4, H = 96;
  std::vector<float> logits = random_floats(size_t(T * E), 4, -3, 3);
  Dev d;
  const Tensor ld = d.f32(logits, {T, E});
  for (RouterParams p : {RouterParams{RouterScoring::SOFTMAX, int(k), true, false, Tensor{}},
                         RouterParams{RouterScoring::SIGMOID, int(k), false, false, Tensor{}},
                         RouterParams{RouterScoring::SOFTMAX, int(k), false, true, Tensor{}}}) {
    std::vector<int32_t> ids(size_t(T * k)), rows(ids.size()), gather(ids.size()), offsets(size_t(E + 1));
    std::vector<float> w(ids.size());
    const Tensor idd = d.i32(ids, {T, k}), wd = d.f32(w, {T, k});
    be.moe_route(ld, p, idd, wd);
    reference::moe_route(host(logits, {T, E}), p, host(ids, {T, k}), host(w, {T, k}));
    EXPECT_EQ(host_of<int32_t>(be, idd), ids);
    expect_close(host_of<float>(be, wd), w, tolerance_for(DType::F32, 1e-6), "moe_route weights");
    // Grouping: the CPU rule (backend/cpu/moe.cc), re-derived here: pairs by expert, tokens ascending.
    const Tensor od = d.i32(offsets, {E + 1}), gd = d.i32(gather, {T * k}), rd = d.i32(rows, {T, k});
    be.moe_group(idd, od, gd, rd);
    std::vector<int32_t> want_off(size_t(E + 1)), want_g, want_r(ids.size());
    for (int32_t e = 0; e < E; ++e) {
      want_off[size_t(e)] = int32_t(want_g.size());
      for (size_t i = 0; i < ids.size(); ++i)
        if (ids[i] == e) want_r[i] = int32_t(want_g.size()), want_g.push_back(int32_t(i / k));
    }
    want_off[size_t(E)] = int32_t(want_g.size());
    EXPECT_EQ(host_of<int32_t>(be, od), want_off);
    EXPECT_EQ(host_of<int32_t>(be, gd), want_g);
    EXPECT_EQ(host_of<int32_t>(be, rd), want_r);
    std::vector<float> eo = random_floats(size_t(T * k * H), 5), y(size_t(T * H));
    const Tensor eod = d.f32(eo, {T * k, H}), yd = d.f32(y, {T, H});
    be.moe_combine(eod, rd, wd, yd);
    reference::moe_combine(host(eo, {T * k, H}), host(want_r, {T, k}), host(w, {T, k}), host(y, {T, H}));
    expect_close(host_of<float>(be, yd), y, tolerance_for(DType::F32, 1e-5), "moe_combine");
  }
}

// The grouped expert gemvs (moe_experts.h) against the default per-expert loop on the same
// backend (Backend::moe_experts), which the CPU-compared model tests cover: experts with no
// rows, Q4_K, and MXFP4 with biases and gpt-oss's clamped SwiGLU. Both quantize each row's
// activations the same way; only summation order and a rare rounding of the GLU output differ.
TEST(CudaBackend, GroupedExpertsMatchThePerExpertLoop) {
  OXYD_REQUIRE_CUDA_BACKEND();
  const int64_t E = 6, H = 256, I = 512, N = 5;
  const std::vector<int32_t> offsets{0, 2, 2, 3, 5, 5, 5};
  for (DType t : {DType::Q4_K, DType::MXFP4}) {
    SCOPED_TRACE(std::string(dtype_traits(t).name));
    const bool oai = t == DType::MXFP4;
    Dev d;
    std::vector<ExpertWeights> ex(static_cast<size_t>(E));
    for (int64_t e = 0; e < E; ++e) {
      auto weight = [&](int64_t rows, int64_t cols, uint32_t seed) {
        const std::vector<float> f = random_floats(size_t(rows * cols), seed, -0.2f, 0.2f);
        const int64_t rb = dtype_row_bytes(t, cols);
        std::vector<uint8_t> b(size_t(rows * rb));
        for (int64_t r = 0; r < rows; ++r) quantize_row(t, f.data() + r * cols, b.data() + r * rb, cols);
        return d.raw(t, b, {rows, cols});
      };
      ex[size_t(e)].gate = weight(I, H, uint32_t(100 + e));
      ex[size_t(e)].up = weight(I, H, uint32_t(200 + e));
      ex[size_t(e)].down = weight(H, I, uint32_t(300 + e));
      if (oai) {
        ex[size_t(e)].gate_bias = d.f32(random_floats(size_t(I), uint32_t(400 + e)), {I});
        ex[size_t(e)].up_bias = d.f32(random_floats(size_t(I), uint32_t(500 + e)), {I});
        ex[size_t(e)].down_bias = d.f32(random_floats(size_t(H), uint32_t(600 + e)), {H});
      }
    }
    const std::vector<float> xs = random_floats(size_t(N * H), 7, -2, 2);
    auto run = [&](bool grouped) {
      MoeExpertsParams p;
      p.xs = d.f32(xs, {N, H});
      p.offsets = d.i32(offsets, {E + 1});
      p.experts = ex.data();
      p.act = Activation::SILU;
      if (oai) p.swiglu_limit = 7.0f, p.swiglu_alpha = 1.702f;
      p.gate = d.f32(std::vector<float>(size_t(N * I)), {N, I});
      p.up = d.f32(std::vector<float>(size_t(N * I)), {N, I});
      p.ys = d.f32(std::vector<float>(size_t(N * H)), {N, H});
      if (grouped) be.moe_experts(p);
      else be.Backend::moe_experts(p);
      return host_of<float>(be, p.ys);
    };
    const std::vector<float> got = run(true), want = run(false);
    float mx = 0;
    for (float v : want) mx = std::max(mx, std::fabs(v));
    ASSERT_GT(mx, 0.0f);
    expect_close(got, want, {2e-3 * mx, 0}, "grouped experts");
  }
}

// Two engine threads (two models served at once) each hold the step lock for a step, as the model
// runner does: their quantized gemvs, whose activations sit in the backend's one workspace, and
// copies never interleave, and each thread gets its single-thread result.
TEST(CudaBackend, StepsOfTwoThreadsDoNotInterleave) {
  OXYD_REQUIRE_CUDA_BACKEND();
  const int64_t n = 512, k = 2048;
  const std::vector<float> wf = random_floats(size_t(n * k), 21);
  const int64_t rb = dtype_row_bytes(DType::Q4_K, k);
  std::vector<uint8_t> wb(size_t(n * rb));
  for (int64_t r = 0; r < n; ++r) quantize_row(DType::Q4_K, wf.data() + r * k, wb.data() + r * rb, k);
  Dev d;
  const Tensor w = d.raw(DType::Q4_K, wb, {n, k});
  std::vector<std::vector<float>> want(2);
  std::vector<Tensor> xs, ys;
  for (int t = 0; t < 2; ++t) {
    xs.push_back(d.f32(random_floats(size_t(k), uint32_t(30 + t), -2, 2), {1, k}));
    ys.push_back(d.f32(std::vector<float>(size_t(n)), {1, n}));
    be.matmul(xs[size_t(t)], w, ys[size_t(t)]);
    want[size_t(t)] = host_of<float>(be, ys[size_t(t)]);
  }
  std::vector<int> bad(2, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) {
        const StepLock step(be);
        ASSERT_NE(be.step_mutex(), nullptr);
        be.matmul(xs[size_t(t)], w, ys[size_t(t)]);
        if (host_of<float>(be, ys[size_t(t)]) != want[size_t(t)]) ++bad[size_t(t)];
      }
    });
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(bad, (std::vector<int>{0, 0}));
}

TEST(CudaBackend, GatedDeltaNetOps) {
  OXYD_REQUIRE_CUDA_BACKEND();
  const int64_t Hk = 2, Hv = 4, dk = 32, dv = 48, K = 4, C = 2 * Hk * dk + Hv * dv, slots = 5;
  std::vector<int32_t> qsl{0, 7, 8, 20}, sl{3, 0, 4};
  const int64_t T = 20, R = 3;
  std::vector<float> x = random_floats(size_t(T * C), 6), wconv = random_floats(size_t(C * K), 7);
  std::vector<float> conv = random_floats(size_t(slots * (K - 1) * C), 8);
  Dev d;
  const Tensor xd = d.f32(x, {T, C}), wd = d.f32(wconv, {C, K}), cd = d.f32(conv, {slots, K - 1, C});
  const Tensor qd = d.i32(qsl, {R + 1}), sd = d.i32(sl, {R});
  std::vector<float> y(x.size());
  const Tensor yd = d.f32(y, {T, C});
  be.causal_conv1d(xd, wd, cd, qd, sd, yd);
  reference::causal_conv1d(host(x, {T, C}), host(wconv, {C, K}), host(conv, {slots, K - 1, C}), host(qsl, {R + 1}),
                           host(sl, {R}), host(y, {T, C}));
  expect_close(host_of<float>(be, yd), y, tolerance_for(DType::F32, 1e-5), "causal_conv1d");
  expect_close(host_of<float>(be, cd), conv, {0, 0}, "conv_state");
  std::vector<float> a = random_floats(size_t(T * Hv), 9, -3, 25), b = random_floats(size_t(T * Hv), 10),
                     al = random_floats(size_t(Hv), 11), dt = random_floats(size_t(Hv), 12), g(a.size()), beta(a.size());
  const Tensor ad = d.f32(a, {T, Hv}), bd = d.f32(b, {T, Hv}), ald = d.f32(al, {Hv}), dtd = d.f32(dt, {Hv});
  const Tensor gd = d.f32(g, {T, Hv}), betad = d.f32(beta, {T, Hv});
  be.gdn_gating(ad, bd, ald, dtd, gd, betad);
  reference::gdn_gating(host(a, {T, Hv}), host(b, {T, Hv}), host(al, {Hv}), host(dt, {Hv}), host(g, {T, Hv}),
                        host(beta, {T, Hv}));
  expect_close(host_of<float>(be, gd), g, tolerance_for(DType::F32, 1e-5), "gdn_gating g");
  expect_close(host_of<float>(be, betad), beta, tolerance_for(DType::F32, 1e-5), "gdn_gating beta");
  std::vector<float> state = random_floats(size_t(slots * Hv * dk * dv), 13, -0.1f, 0.1f), out(size_t(T * Hv * dv));
  // The rule on the reference's own conv output and gates, so only its arithmetic is compared.
  const Tensor qkvd = d.f32(y, {T, C}), gref = d.f32(g, {T, Hv}), bref = d.f32(beta, {T, Hv});
  const Tensor std_ = d.f32(state, {slots, Hv, dk, dv}), outd = d.f32(out, {T, Hv, dv});
  be.gated_delta_rule(qkvd, Hk, gref, bref, std_, qd, sd, outd);
  reference::gated_delta_rule(host(y, {T, C}), Hk, host(g, {T, Hv}), host(beta, {T, Hv}),
                              host(state, {slots, Hv, dk, dv}), host(qsl, {R + 1}), host(sl, {R}), host(out, {T, Hv, dv}));
  expect_close(host_of<float>(be, outd), out, {1e-5, 1e-4}, "gated_delta_rule out");
  expect_close(host_of<float>(be, std_), state, {1e-5, 1e-4}, "gated_delta_rule state");
}

TEST(CudaBackend, ZeroAndHostCopies) {
  OXYD_REQUIRE_CUDA_BACKEND();
  std::vector<float> v = random_floats(1000, 14), back(1000);
  Dev d;
  const Tensor t = d.f32(std::vector<float>(1000), {1000});
  be.copy_from_host(v.data(), t);
  be.copy_to_host(t, back.data());
  EXPECT_EQ(back, v);
  be.zero(t);
  EXPECT_EQ(host_of<float>(be, t), std::vector<float>(1000, 0.0f));
  EXPECT_GT(be.memory_info().total_bytes, 0);
  Allocation a = be.allocate(1 << 20);
  EXPECT_EQ(a.size(), size_t(1) << 20);
}

TEST(CudaBackend, QuantizedKvIsUnsupported) {
  OXYD_REQUIRE_CUDA_BACKEND();
  Dev d;
  const Tensor k = d.f32(std::vector<float>(64), {1, 1, 64});
  const Tensor cache = d.raw(DType::U8, std::vector<uint8_t>(1024), {2, 8, 1, 64});
  const Tensor slots = d.i32({0}, {1});
  EXPECT_THROW(be.reshape_and_cache(k, k, cache, cache, slots, KvFormat::Q4), Error);
}

}  // namespace
}  // namespace oxyd::backend::cuda::test
