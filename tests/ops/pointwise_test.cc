// Softmax, activations, GLUs and elementwise ops: backend::cpu (each ISA forced, through
// ops/) against backend::reference on widths that exercise every vector tail, inputs spanning
// the saturating ranges; the reference itself against constants from Python's math module.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "backend/reference/activation.h"
#include "backend/reference/elementwise.h"
#include "backend/reference/softmax.h"
#include "core/error.h"
#include "op_test_util.h"
#include "ops/activation.h"
#include "ops/elementwise.h"
#include "ops/softmax.h"

namespace oxyd::test {
namespace {

TEST(Clamp, MatchesTheDefinitionInPlace) {
  HostTensor x(DType::F32, {3, 50});
  fill_uniform(x, -3.0f, 3.0f, 11);
  std::vector<float> want(x.f(), x.f() + x.n());
  for (float& v : want) v = v > 1.25f ? 1.25f : (v < -1.25f ? -1.25f : v);
  ops::clamp(x.t, 1.25f, x.t);
  for (int64_t i = 0; i < x.n(); ++i) EXPECT_EQ(x.f()[i], want[i]) << i;
  EXPECT_THROW(ops::clamp(x.t, 0.0f, x.t), Error);
}

// ops::argmax_rows (greedy sampling where the logits are) against sample/'s rule, spelled out:
// the lowest id of the largest value among the first `cols`, NaN never the largest, 0 for a row
// of NaN; -inf rows give their first id.
TEST(ArgmaxRows, LowestIdOfTheLargestAmongTheFirstCols) {
  const float nan = std::nanf(""), inf = INFINITY;
  const std::vector<std::vector<float>> rows = {
      {1, 3, 3, 2, 9},        // cols 4: the 9 is past them → id 1 (the first of the tied 3s)
      {nan, -1, nan, -1, 0},  // NaN skipped, tie → 1
      {nan, nan, nan, nan, 5},
      {-inf, -inf, -inf, -inf, 1},
      {-5, -4, -3, 7, 7}};
  HostTensor x(DType::F32, {5, 5}), ids(DType::I32, {5});
  for (size_t r = 0; r < rows.size(); ++r)
    for (size_t c = 0; c < 5; ++c) x.f()[r * 5 + c] = rows[r][c];
  ops::argmax_rows(x.t, 4, ids.t);
  const int32_t* got = static_cast<const int32_t*>(ids.t.data);
  EXPECT_EQ(std::vector<int32_t>(got, got + 5), (std::vector<int32_t>{1, 1, 0, 0, 3}));
  ops::argmax_rows(x.t, 5, ids.t);
  EXPECT_EQ(std::vector<int32_t>(got, got + 5), (std::vector<int32_t>{4, 4, 4, 4, 3}));
  EXPECT_THROW(ops::argmax_rows(x.t, 6, ids.t), Error);
  EXPECT_THROW(ops::argmax_rows(x.t, 0, ids.t), Error);
}

using backend::Activation;
const Tolerance kTol = tolerance(DType::F32);
const Activation kActs[] = {Activation::SILU, Activation::GELU_ERF, Activation::GELU_TANH, Activation::SIGMOID};
const int64_t kWidths[] = {1, 5, 16, 31, 257, 5000};

float ref_act(Activation act, float v) {
  HostTensor x(DType::F32, {1}), y(DType::F32, {1});
  x.f()[0] = v;
  backend::reference::activation(act, x.t, y.t);
  return y.f()[0];
}

TEST(ActivationReference, KnownValues) {
  // Values from Python's math module (erf, tanh, exp in float64), typed in by hand.
  EXPECT_NEAR(ref_act(Activation::SILU, 1.0f), 0.7310585786300049, 1e-7);
  EXPECT_NEAR(ref_act(Activation::SILU, -2.0f), -0.2384058440442351, 1e-7);
  EXPECT_NEAR(ref_act(Activation::GELU_ERF, 1.0f), 0.8413447460685429, 1e-7);
  EXPECT_NEAR(ref_act(Activation::GELU_ERF, -1.5f), -0.10021080190328713, 1e-7);
  EXPECT_NEAR(ref_act(Activation::GELU_TANH, 1.0f), 0.8411919906082768, 1e-7);
  EXPECT_NEAR(ref_act(Activation::GELU_TANH, -1.5f), -0.10042842301976707, 1e-7);
  EXPECT_NEAR(ref_act(Activation::SIGMOID, 1.0f), 0.7310585786300049, 1e-7);
  EXPECT_NEAR(ref_act(Activation::SIGMOID, -2.0f), 0.11920292202211755, 1e-7);
}

TEST(SoftmaxReference, KnownValues) {
  HostTensor x(DType::F32, {1, 3}), y(DType::F32, {1, 3});
  x.f()[0] = 1, x.f()[1] = 2, x.f()[2] = 3;
  backend::reference::softmax(x.t, 2.0f, y.t);  // softmax(2, 4, 6)
  const double e = std::exp(1.0), z = 1 + e * e + e * e * e * e;
  EXPECT_NEAR(y.f()[0], 1 / z, 1e-7);
  EXPECT_NEAR(y.f()[2], e * e * e * e / z, 1e-7);
}

class PointwiseTest : public IsaTest {};

TEST_P(PointwiseTest, Softmax) {
  for (int64_t n : kWidths) {
    for (float scale : {1.0f, 0.125f, 30.0f}) {
      HostTensor x(DType::F32, {7, n}), want(x.t), got(x.t);
      fill_uniform(x, -10, 10, uint32_t(n));
      if (n > 1) x.f()[0] = -INFINITY;  // a masked logit must get exactly 0
      backend::reference::softmax(x.t, scale, want.t);
      ops::softmax(x.t, got.t, scale);
      expect_close(got.f(), want.f(), want.n(), kTol, "softmax n=" + std::to_string(n));
      if (n > 1) {
        EXPECT_EQ(got.f()[0], 0.0f);
      }
    }
  }
}

TEST_P(PointwiseTest, Activations) {
  for (Activation act : kActs) {
    for (int64_t n : kWidths) {
      HostTensor x(DType::F32, {3, n}), want(x.t), got(x.t);
      fill_uniform(x, -12, 12, uint32_t(n + int(act)));
      if (n > 2) x.f()[0] = -100.0f, x.f()[1] = 100.0f;
      backend::reference::activation(act, x.t, want.t);
      ops::activation(act, x.t, got.t);
      expect_close(got.f(), want.f(), want.n(), kTol, "activation " + std::to_string(int(act)) + " n=" + std::to_string(n));
    }
  }
}

TEST_P(PointwiseTest, GluTwoTensorsAndFused) {
  for (Activation act : kActs) {
    for (int64_t ff : kWidths) {
      const int64_t rows = 4;
      HostTensor gate(DType::F32, {rows, ff}), up(gate.t), fused(DType::F32, {rows, 2 * ff});
      fill_uniform(gate, -8, 8, uint32_t(ff)), fill_uniform(up, -3, 3, uint32_t(ff + 1));
      for (int64_t r = 0; r < rows; ++r) {
        std::copy(gate.f() + r * ff, gate.f() + (r + 1) * ff, fused.f() + r * 2 * ff);
        std::copy(up.f() + r * ff, up.f() + (r + 1) * ff, fused.f() + r * 2 * ff + ff);
      }
      HostTensor want(gate.t), want_fused(gate.t), got(gate.t);
      backend::reference::glu(act, gate.t, up.t, want.t);
      backend::reference::glu_fused(act, fused.t, want_fused.t);
      expect_close(want_fused.f(), want.f(), want.n(), {0, 0}, "reference fused == two-tensor");
      ops::glu(act, gate.t, up.t, got.t);
      expect_close(got.f(), want.f(), want.n(), kTol, "glu ff=" + std::to_string(ff));
      ops::glu_fused(act, fused.t, got.t);
      expect_close(got.f(), want.f(), want.n(), kTol, "glu_fused ff=" + std::to_string(ff));
      ops::glu(act, gate.t, up.t, up.t);  // in place over up
      expect_close(up.f(), want.f(), want.n(), kTol, "glu in place");
    }
  }
}

TEST(ActivationReference, GluOaiKnownValues) {
  // (u + 1)·g·σ(1.702·g) with g = min(gate, 7), u = clamp(up, ±7); values from Python's math.
  HostTensor g(DType::F32, {3}), u(DType::F32, {3}), y(DType::F32, {3});
  const float gs[] = {1.0f, 9.0f, -2.0f}, us[] = {0.5f, -9.0f, 8.0f};
  std::copy(gs, gs + 3, g.f()), std::copy(us, us + 3, u.f());
  backend::reference::glu_oai(g.t, u.t, 1.702f, 7.0f, y.t);
  EXPECT_NEAR(y.f()[0], 1.268693648899232, 1e-6);    // 1.5 · 1 · σ(1.702)
  EXPECT_NEAR(y.f()[1], -41.99971876981991, 2e-5);   // (−7 + 1) · 7 · σ(11.914)
  EXPECT_NEAR(y.f()[2], -0.5147310148463349, 1e-6);  // (7 + 1) · (−2) · σ(−3.404)
}

TEST_P(PointwiseTest, GluOai) {
  for (int64_t ff : kWidths) {
    HostTensor gate(DType::F32, {3, ff}), up(gate.t), want(gate.t), got(gate.t);
    fill_uniform(gate, -12, 12, uint32_t(ff)), fill_uniform(up, -12, 12, uint32_t(ff + 5));
    backend::reference::glu_oai(gate.t, up.t, 1.702f, 7.0f, want.t);
    ops::glu_oai(gate.t, up.t, 1.702f, 7.0f, got.t);
    expect_close(got.f(), want.f(), want.n(), kTol, "glu_oai ff=" + std::to_string(ff));
  }
}

TEST_P(PointwiseTest, AddMulBroadcastScaleSoftcap) {
  for (int64_t n : kWidths) {
    const int64_t rows = 5;
    HostTensor a(DType::F32, {rows, n}), b(a.t), v(DType::F32, {n}), want(a.t), got(a.t);
    fill_uniform(a, -50, 50, uint32_t(n)), fill_uniform(b, -2, 2, 7), fill_uniform(v, -2, 2, 8);
    const std::string w = " n=" + std::to_string(n);
    backend::reference::add(a.t, b.t, want.t), ops::add(a.t, b.t, got.t);
    expect_close(got.f(), want.f(), want.n(), kTol, "add" + w);
    backend::reference::add(a.t, v.t, want.t), ops::add(a.t, v.t, got.t);
    expect_close(got.f(), want.f(), want.n(), kTol, "add broadcast" + w);
    backend::reference::mul(a.t, b.t, want.t), ops::mul(a.t, b.t, got.t);
    expect_close(got.f(), want.f(), want.n(), kTol, "mul" + w);
    backend::reference::mul(a.t, v.t, want.t), ops::mul(a.t, v.t, got.t);
    expect_close(got.f(), want.f(), want.n(), kTol, "mul broadcast" + w);
    backend::reference::scale(a.t, 0.37f, want.t), ops::scale(a.t, 0.37f, got.t);
    expect_close(got.f(), want.f(), want.n(), kTol, "scale" + w);
    for (float cap : {30.0f, 50.0f, 1.0f}) {
      backend::reference::softcap(a.t, cap, want.t), ops::softcap(a.t, cap, got.t);
      expect_close(got.f(), want.f(), want.n(), {1e-5 * cap, 1e-5}, "softcap" + w);
    }
    backend::reference::mul(a.t, v.t, want.t);
    ops::mul(a.t, v.t, a.t);  // in place, broadcast
    expect_close(a.f(), want.f(), want.n(), kTol, "mul broadcast in place" + w);
    if (n > 1) {  // a column [rows, 1]: each row scaled by its own value, in place too
      HostTensor c(DType::F32, {rows, 1});
      fill_uniform(c, -2, 2, 9);
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t i = 0; i < n; ++i) want.f()[r * n + i] = a.f()[r * n + i] * c.f()[r];
      ops::mul(a.t, c.t, got.t);
      expect_close(got.f(), want.f(), want.n(), kTol, "mul column" + w);
      backend::reference::mul(a.t, c.t, got.t);
      expect_close(got.f(), want.f(), want.n(), kTol, "reference mul column" + w);
      ops::mul(a.t, c.t, a.t);
      expect_close(a.f(), want.f(), want.n(), kTol, "mul column in place" + w);
      EXPECT_THROW(ops::add(a.t, c.t, a.t), Error) << "add takes no column" << w;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Cpu, PointwiseTest, testing::ValuesIn(isas_to_test()), isa_param_name);

}  // namespace
}  // namespace oxyd::test
