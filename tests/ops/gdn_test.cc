// Gated DeltaNet ops against transformers' own torch functions (tests/data/gdn, made by
// tools/gen_gdn_goldens.py from transformers 5.25 modeling_qwen3_5.py): the causal conv with its
// state (causal_conv1d_update), the gating lines of Qwen3_5GatedDeltaNet, the delta rule in both
// forms (torch_recurrent_gated_delta_rule / torch_chunk_gated_delta_rule, 150 tokens = 2 full
// chunks of 64 and a partial one, non-zero initial state), Qwen3_5RMSNormGated as rms_norm + glu,
// and a whole Qwen3_5GatedDeltaNet layer composed from the ops. Then the engine's uses: a prompt
// split into prefill chunks across and inside the chunk size, then decode steps, equals the whole;
// requests of one batch keep to their own state slots.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "backend/cpu/gated_delta_net.h"
#include "backend/reference/gated_delta_net.h"
#include "op_test_util.h"
#include "ops/activation.h"
#include "ops/gated_delta_net.h"
#include "ops/matmul.h"
#include "ops/rms_norm.h"

namespace oxyd::test {
namespace {

struct Goldens {
  nlohmann::json meta;
  std::vector<float> data;
  std::vector<int64_t> shape(const std::string& n) const { return meta["arrays"].at(n)["shape"]; }
  // A copy of array n with the given shape (its element count must match).
  HostTensor get(const std::string& n, std::initializer_list<int64_t> dims) const {
    HostTensor h(DType::F32, dims);
    const int64_t off = meta["arrays"].at(n)["offset"];
    int64_t count = 1;
    for (int64_t d : shape(n)) count *= d;
    EXPECT_EQ(count, h.n()) << n;
    std::copy_n(data.data() + off, h.n(), h.f());
    return h;
  }
};

const Goldens& goldens() {
  static const Goldens g = [] {
    Goldens g;
    const std::string dir = std::string(OXYD_SOURCE_DIR) + "/tests/data/gdn/";
    std::ifstream j(dir + "gdn_goldens.json");
    g.meta = nlohmann::json::parse(j);
    std::ifstream b(dir + "gdn_goldens.bin", std::ios::binary | std::ios::ate);
    g.data.resize(size_t(b.tellg()) / 4);
    b.seekg(0);
    b.read(reinterpret_cast<char*>(g.data.data()), std::streamsize(g.data.size() * 4));
    return g;
  }();
  return g;
}

HostTensor i32s(std::vector<int32_t> v) {
  HostTensor h(DType::I32, {int64_t(v.size())});
  std::copy(v.begin(), v.end(), h.i());
  return h;
}

// torch conv state [C, K−1] → ours [1, K−1, C] (and back).
HostTensor conv_state_ours(const HostTensor& torch_state, int64_t C, int64_t K) {
  HostTensor s(DType::F32, {1, K - 1, C});
  for (int64_t c = 0; c < C; ++c)
    for (int64_t i = 0; i < K - 1; ++i) s.f()[i * C + c] = torch_state.f()[c * (K - 1) + i];
  return s;
}

// [T, Hk, dk] q, [T, Hk, dk] k, [T, Hv, dv] v → one qkv [T, 2·Hk·dk + Hv·dv] row per token.
HostTensor pack_qkv(const HostTensor& q, const HostTensor& k, const HostTensor& v) {
  const int64_t T = q.t.dim(0), nq = q.n() / T, nv = v.n() / T;
  HostTensor h(DType::F32, {T, 2 * nq + nv});
  for (int64_t t = 0; t < T; ++t) {
    std::copy_n(q.f() + t * nq, nq, h.f() + t * (2 * nq + nv));
    std::copy_n(k.f() + t * nq, nq, h.f() + t * (2 * nq + nv) + nq);
    std::copy_n(v.f() + t * nv, nv, h.f() + t * (2 * nq + nv) + 2 * nq);
  }
  return h;
}

// Rows [r0, r0 + n) of a [T, ...] tensor as a view.
Tensor rows(const HostTensor& h, int64_t r0, int64_t n) {
  Tensor t = h.t;
  t.data = h.f() + r0 * (h.n() / h.t.dim(0));
  t.shape[0] = n;
  return t;
}

constexpr Tolerance kTol{2e-5, 2e-4};  // float32 vs torch float32, different summation order

TEST(GdnConv, MatchesTorchCausalConv1dUpdate) {
  const Goldens& g = goldens();
  for (const std::string name : {"conv_prefill", "conv_decode"}) {
    const auto xs = g.shape(name + "_x");
    const int64_t T = xs[0], C = xs[1], K = g.shape(name + "_weight")[1];
    HostTensor x = g.get(name + "_x", {T, C}), w = g.get(name + "_weight", {C, K});
    HostTensor want_y = g.get(name + "_y", {T, C});
    HostTensor want_state = conv_state_ours(g.get(name + "_state_out", {C, K - 1}), C, K);
    HostTensor qsl = i32s({0, int32_t(T)}), slot = i32s({0});
    for (int variant = 0; variant < 2; ++variant) {
      HostTensor st = conv_state_ours(g.get(name + "_state_in", {C, K - 1}), C, K), y(DType::F32, {T, C});
      if (variant == 0) backend::reference::causal_conv1d(x.t, w.t, st.t, qsl.t, slot.t, y.t);
      else ops::causal_conv1d(x.t, w.t, st.t, qsl.t, slot.t, y.t);
      const std::string what = name + (variant ? " cpu" : " reference");
      expect_close(y.f(), want_y.f(), y.n(), kTol, what + " y");
      expect_close(st.f(), want_state.f(), st.n(), kTol, what + " state");
    }
  }
}

// The prompt in pieces (shorter than K − 1 too), then the same rows from the whole call.
TEST(GdnConv, ChunkedPrefillAndOtherRequestsKeepTheirState) {
  const Goldens& g = goldens();
  const int64_t T = g.shape("conv_prefill_x")[0], C = g.shape("conv_prefill_x")[1], K = 4;
  HostTensor x = g.get("conv_prefill_x", {T, C}), w = g.get("conv_prefill_weight", {C, K});
  HostTensor want = g.get("conv_prefill_y", {T, C});
  HostTensor dx = g.get("conv_decode_x", {1, C}), dwant = g.get("conv_decode_y", {1, C});
  // slot 2: the prefill request; slot 0: the decode golden's request (its own weights differ, so
  // it runs in its own call below, interleaved with the prefill pieces to share the state array).
  HostTensor st(DType::F32, {3, K - 1, C});
  HostTensor s_pre = conv_state_ours(g.get("conv_prefill_state_in", {C, K - 1}), C, K);
  HostTensor s_dec = conv_state_ours(g.get("conv_decode_state_in", {C, K - 1}), C, K);
  std::copy_n(s_pre.f(), s_pre.n(), st.f() + 2 * (K - 1) * C);
  std::copy_n(s_dec.f(), s_dec.n(), st.f());
  int64_t done = 0;
  for (int64_t n : {int64_t(2), int64_t(1), int64_t(20), T - 23}) {
    HostTensor y(DType::F32, {n, C}), qsl = i32s({0, int32_t(n)}), slot = i32s({2});
    ops::causal_conv1d(rows(x, done, n), w.t, st.t, qsl.t, slot.t, y.t);
    expect_close(y.f(), want.f() + done * C, y.n(), kTol, "piece at " + std::to_string(done));
    done += n;
    if (done == 3) {  // the other request, in the middle of this one's prefill
      HostTensor dy(DType::F32, {1, C}), q1 = i32s({0, 1}), s0 = i32s({0});
      ops::causal_conv1d(dx.t, g.get("conv_decode_weight", {C, K}).t, st.t, q1.t, s0.t, dy.t);
      expect_close(dy.f(), dwant.f(), C, kTol, "other request");
    }
  }
  // Two requests in one call: rows [0, 5) → slot 1 (zero state), rows [5, 12) → slot 0.
  HostTensor st2(DType::F32, {2, K - 1, C}), y(DType::F32, {12, C}), ref_st(st2.t), ref_y(y.t);
  fill_uniform(st2, -1, 1, 3);
  std::copy_n(st2.f(), st2.n(), ref_st.f());
  HostTensor qsl = i32s({0, 5, 12}), slots = i32s({1, 0});
  backend::reference::causal_conv1d(rows(x, 0, 12), w.t, ref_st.t, qsl.t, slots.t, ref_y.t);
  ops::causal_conv1d(rows(x, 0, 12), w.t, st2.t, qsl.t, slots.t, y.t);
  expect_close(y.f(), ref_y.f(), y.n(), kTol, "two requests");
  expect_close(st2.f(), ref_st.f(), st2.n(), kTol, "two requests' states");
}

TEST(GdnGating, MatchesQwen35Formulas) {
  const Goldens& g = goldens();
  const int64_t T = g.shape("gating_a")[0], H = g.shape("gating_a")[1];
  HostTensor a = g.get("gating_a", {T, H}), b = g.get("gating_b", {T, H});
  HostTensor A_log = g.get("gating_A_log", {H}), dt = g.get("gating_dt_bias", {H});
  HostTensor want_g = g.get("gating_g", {T, H}), want_b = g.get("gating_beta", {T, H});
  HostTensor gg(a.t), bb(a.t);
  ops::gdn_gating(a.t, b.t, A_log.t, dt.t, gg.t, bb.t);
  expect_close(gg.f(), want_g.f(), gg.n(), kTol, "cpu g");
  expect_close(bb.f(), want_b.f(), bb.n(), kTol, "cpu beta");
  backend::reference::gdn_gating(a.t, b.t, A_log.t, dt.t, gg.t, bb.t);
  expect_close(gg.f(), want_g.f(), gg.n(), kTol, "reference g");
  expect_close(bb.f(), want_b.f(), bb.n(), kTol, "reference beta");
}

struct DeltaCase {
  int64_t T, Hk, Hv, dk, dv;
  HostTensor qkv, g, beta, state_in, rec_out, rec_state, chunk_out, chunk_state;
};

// prefix "": the small case (dk 32, dv 16, T 150); "wide_": real head widths (dk 128, dv 80, T 72),
// where the CPU kernels run their full register blocks and gemm tiles.
DeltaCase delta_case(const std::string& p = "") {
  const Goldens& gd = goldens();
  const auto qs = gd.shape(p + "delta_q"), vs = gd.shape(p + "delta_v");
  DeltaCase c;
  c.T = qs[0], c.Hk = qs[1], c.dk = qs[2], c.Hv = vs[1], c.dv = vs[2];
  c.qkv = pack_qkv(gd.get(p + "delta_q", {c.T, c.Hk, c.dk}), gd.get(p + "delta_k", {c.T, c.Hk, c.dk}),
                   gd.get(p + "delta_v", {c.T, c.Hv, c.dv}));
  c.g = gd.get(p + "delta_g", {c.T, c.Hv});
  c.beta = gd.get(p + "delta_beta", {c.T, c.Hv});
  c.state_in = gd.get(p + "delta_state_in", {1, c.Hv, c.dk, c.dv});
  c.rec_out = gd.get(p + "rec_out", {c.T, c.Hv, c.dv});
  c.rec_state = gd.get(p + "rec_state", {1, c.Hv, c.dk, c.dv});
  c.chunk_out = gd.get(p + "chunk_out", {c.T, c.Hv, c.dv});
  c.chunk_state = gd.get(p + "chunk_state", {1, c.Hv, c.dk, c.dv});
  return c;
}

using DeltaFn = void (*)(const Tensor&, int64_t, const Tensor&, const Tensor&, const Tensor&, const Tensor&,
                         const Tensor&, const Tensor&);

TEST(GdnDeltaRule, EachFormMatchesItsTorchFunction) {
  for (const std::string prefix : {"", "wide_"}) {
  SCOPED_TRACE(prefix.empty() ? "small case" : "wide case");
  DeltaCase c = delta_case(prefix);
  HostTensor qsl = i32s({0, int32_t(c.T)}), slot = i32s({0});
  const struct {
    const char* name;
    DeltaFn fn;
    const HostTensor *want_out, *want_state;
  } forms[] = {
      {"reference (recurrent)", backend::reference::gated_delta_rule, &c.rec_out, &c.rec_state},
      {"cpu recurrent", backend::cpu::gated_delta_rule_recurrent, &c.rec_out, &c.rec_state},
      {"cpu chunked", backend::cpu::gated_delta_rule_chunked, &c.chunk_out, &c.chunk_state},
      {"cpu chunked vs torch recurrent", backend::cpu::gated_delta_rule_chunked, &c.rec_out, &c.rec_state},
      {"ops (auto: chunked form, T >= 32)", ops::gated_delta_rule, &c.rec_out, &c.rec_state},
  };
  for (backend::cpu::Isa isa : isas_to_test())
  for (const auto& f : forms) {
    backend::cpu::set_isa_override(isa);
    HostTensor st = copy_of(c.state_in), out(DType::F32, {c.T, c.Hv, c.dv});
    f.fn(c.qkv.t, c.Hk, c.g.t, c.beta.t, st.t, qsl.t, slot.t, out.t);
    expect_close(out.f(), f.want_out->f(), out.n(), kTol, std::string(f.name) + " out");
    double d = 0, ds = 0;
    for (int64_t i = 0; i < out.n(); ++i) d = std::max(d, std::fabs(double(out.f()[i]) - f.want_out->f()[i]));
    for (int64_t i = 0; i < st.n(); ++i) ds = std::max(ds, std::fabs(double(st.f()[i]) - f.want_state->f()[i]));
    std::printf("[ DIFF    ] %s%s %s: max |Δout| %.3g, max |Δstate| %.3g\n", prefix.c_str(),
                backend::cpu::isa_name(isa), f.name, d, ds);
    expect_close(st.f(), f.want_state->f(), st.n(), kTol, std::string(f.name) + " state");
    backend::cpu::set_isa_override(std::nullopt);
  }
  // transformers' two forms agree with each other to float32 rounding (the point of both).
  expect_close(c.chunk_out.f(), c.rec_out.f(), c.rec_out.n(), kTol, "torch chunked vs torch recurrent");
  }
}

// The engine's use: prefill chunks (inside and across the 32-token chunk, and below the
// recurrent threshold), then decode steps one token at a time, sharing calls with another request.
TEST(GdnDeltaRule, PiecesAndDecodeStepsEqualTheWhole) {
  DeltaCase c = delta_case();
  const int64_t row = c.Hv * c.dv;
  HostTensor st(DType::F32, {2, c.Hv, c.dk, c.dv});
  std::copy_n(c.state_in.f(), c.state_in.n(), st.f() + c.state_in.n());  // slot 1
  int64_t done = 0;
  std::vector<int64_t> pieces = {5, 40, 64, 30};
  while (done + (pieces.empty() ? 1 : pieces.front()) <= c.T) {
    const int64_t n = pieces.empty() ? 1 : pieces.front();
    if (!pieces.empty()) pieces.erase(pieces.begin());
    // batch: 3 tokens of another request (slot 0: tokens 0..2 of the same inputs), then this piece
    const int64_t m = 3, W = c.qkv.t.dim(1);
    HostTensor qkv(DType::F32, {m + n, W}), g(DType::F32, {m + n, c.Hv}), b(g.t), out(DType::F32, {m + n, c.Hv, c.dv});
    std::copy_n(c.qkv.f(), m * W, qkv.f());
    std::copy_n(c.qkv.f() + done * W, n * W, qkv.f() + m * W);
    std::copy_n(c.g.f(), m * c.Hv, g.f());
    std::copy_n(c.g.f() + done * c.Hv, n * c.Hv, g.f() + m * c.Hv);
    std::copy_n(c.beta.f(), m * c.Hv, b.f());
    std::copy_n(c.beta.f() + done * c.Hv, n * c.Hv, b.f() + m * c.Hv);
    std::fill_n(st.f(), c.state_in.n(), 0.0f);  // slot 0: a new request each step
    HostTensor qsl = i32s({0, int32_t(m), int32_t(m + n)}), slots = i32s({0, 1});
    ops::gated_delta_rule(qkv.t, c.Hk, g.t, b.t, st.t, qsl.t, slots.t, out.t);
    expect_close(out.f() + m * row, c.rec_out.f() + done * row, n * row, kTol,
                 "tokens [" + std::to_string(done) + ", " + std::to_string(done + n) + ")");
    done += n;
  }
  ASSERT_EQ(done, c.T);
  expect_close(st.f() + c.state_in.n(), c.rec_state.f(), c.rec_state.n(), kTol, "final state");
}

TEST(GdnNorm, RmsNormThenSiluGateIsQwen35RMSNormGated) {
  const Goldens& g = goldens();
  const int64_t N = g.shape("norm_x")[0], D = g.shape("norm_x")[1];
  HostTensor x = g.get("norm_x", {N, D}), z = g.get("norm_gate", {N, D}), w = g.get("norm_weight", {D});
  HostTensor want = g.get("norm_y", {N, D}), y(x.t);
  ops::rms_norm(x.t, &w.t, 1e-6f, y.t);
  ops::glu(backend::Activation::SILU, z.t, y.t, y.t);
  expect_close(y.f(), want.f(), y.n(), kTol, "gated norm");
}

// Qwen3_5GatedDeltaNet.forward (no cache) as the model layer will compose it.
TEST(GdnLayer, OpsComposeToTheTransformersLayer) {
  const Goldens& g = goldens();
  const auto& lc = g.meta["layer_config"];
  const int64_t H = lc["hidden_size"], Hk = lc["linear_num_key_heads"], Hv = lc["linear_num_value_heads"];
  const int64_t dk = lc["linear_key_head_dim"], dv = lc["linear_value_head_dim"], K = lc["linear_conv_kernel_dim"];
  const int64_t T = g.shape("layer_h")[0], conv = 2 * Hk * dk + Hv * dv;
  HostTensor h = g.get("layer_h", {T, H}), want = g.get("layer_y", {T, H});
  HostTensor w_qkv = g.get("layer_in_proj_qkv_weight", {conv, H}), w_z = g.get("layer_in_proj_z_weight", {Hv * dv, H});
  HostTensor w_b = g.get("layer_in_proj_b_weight", {Hv, H}), w_a = g.get("layer_in_proj_a_weight", {Hv, H});
  HostTensor w_conv = g.get("layer_conv1d_weight", {conv, K}), w_out = g.get("layer_out_proj_weight", {H, Hv * dv});
  HostTensor A_log = g.get("layer_A_log", {Hv}), dt = g.get("layer_dt_bias", {Hv}), w_norm = g.get("layer_norm_weight", {dv});
  HostTensor mixed(DType::F32, {T, conv}), qkv(mixed.t), z(DType::F32, {T, Hv * dv}), a(DType::F32, {T, Hv}), b(a.t);
  ops::matmul(h.t, w_qkv.t, mixed.t);
  ops::matmul(h.t, w_z.t, z.t);
  ops::matmul(h.t, w_a.t, a.t);
  ops::matmul(h.t, w_b.t, b.t);
  HostTensor conv_state(DType::F32, {1, K - 1, conv}), state(DType::F32, {1, Hv, dk, dv});
  std::fill_n(conv_state.f(), conv_state.n(), 0.0f);  // a new request's slots start at zero
  std::fill_n(state.f(), state.n(), 0.0f);
  HostTensor qsl = i32s({0, int32_t(T)}), slot = i32s({0});
  ops::causal_conv1d(mixed.t, w_conv.t, conv_state.t, qsl.t, slot.t, qkv.t);
  ops::gdn_gating(a.t, b.t, A_log.t, dt.t, a.t, b.t);
  HostTensor core(DType::F32, {T, Hv, dv});
  ops::gated_delta_rule(qkv.t, Hk, a.t, b.t, state.t, qsl.t, slot.t, core.t);
  Tensor core2 = core.t, z2 = z.t;
  core2.ndim = z2.ndim = 2;
  core2.shape = z2.shape = {T * Hv, dv};
  ops::rms_norm(core2, &w_norm.t, float(lc["rms_norm_eps"].get<double>()), core2);
  ops::glu(backend::Activation::SILU, z2, core2, core2);
  HostTensor y(DType::F32, {T, H});
  Tensor flat = core.t;
  flat.ndim = 2;
  flat.shape = {T, Hv * dv};
  ops::matmul(flat, w_out.t, y.t);
  expect_close(y.f(), want.f(), y.n(), Tolerance{1e-4, 1e-3}, "Qwen3_5GatedDeltaNet layer");
}

TEST(GdnOps, RejectBadShapesAndSlots) {
  HostTensor x(DType::F32, {4, 8}), y(x.t), w(DType::F32, {8, 4}), st(DType::F32, {2, 3, 8});
  HostTensor qsl = i32s({0, 4}), slot = i32s({2}), dup = i32s({0, 0}), qsl2 = i32s({0, 2, 4});
  EXPECT_THROW(ops::causal_conv1d(x.t, w.t, st.t, qsl.t, slot.t, y.t), Error);   // slot out of range
  EXPECT_THROW(ops::causal_conv1d(x.t, w.t, st.t, qsl2.t, dup.t, y.t), Error);   // slot used twice
  HostTensor ok = i32s({1});
  EXPECT_THROW(ops::causal_conv1d(x.t, w.t, st.t, qsl.t, ok.t, x.t), Error);     // y aliases x
  HostTensor qkv(DType::F32, {4, 2 * 2 * 8 + 3 * 4}), g(DType::F32, {4, 3}), out(DType::F32, {4, 3, 4});
  HostTensor s(DType::F32, {1, 3, 8, 4});
  HostTensor z = i32s({0});
  EXPECT_THROW(ops::gated_delta_rule(qkv.t, 2, g.t, g.t, s.t, qsl.t, z.t, out.t), Error);  // 3 % 2 != 0
}

}  // namespace
}  // namespace oxyd::test
