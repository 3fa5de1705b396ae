// RMSNorm and LayerNorm: backend::cpu (each ISA forced, through ops/) against
// backend::reference over awkward widths, with/without weight and bias, in place; and the
// reference against values worked out by hand.
#include <gtest/gtest.h>

#include "backend/reference/layer_norm.h"
#include "backend/reference/rms_norm.h"
#include "op_test_util.h"
#include "ops/rms_norm.h"

namespace oxyd::test {
namespace {

const int64_t kWidths[] = {1, 7, 16, 33, 100, 4096, 4099};

TEST(RmsNormReference, HandComputed) {
  HostTensor x(DType::F32, {1, 4}), w(DType::F32, {4}), y(DType::F32, {1, 4});
  const float xs[] = {1, 2, 3, 4}, ws[] = {1, 1, 2, 0.5f};
  std::copy(xs, xs + 4, x.f()), std::copy(ws, ws + 4, w.f());
  backend::reference::rms_norm(x.t, &w.t, 0.0f, y.t);
  const double inv = 1.0 / std::sqrt(30.0 / 4.0);  // mean of squares = 7.5
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(y.f()[i], xs[i] * ws[i] * inv, 1e-7);
}

TEST(LayerNormReference, HandComputed) {
  HostTensor x(DType::F32, {1, 4}), w(DType::F32, {4}), b(DType::F32, {4}), y(DType::F32, {1, 4});
  const float xs[] = {1, 2, 3, 4}, ws[] = {1, 2, 1, 1}, bs[] = {0, 0, 1, -1};
  std::copy(xs, xs + 4, x.f()), std::copy(ws, ws + 4, w.f()), std::copy(bs, bs + 4, b.f());
  backend::reference::layer_norm(x.t, &w.t, &b.t, 1e-5f, y.t);
  const double inv = 1.0 / std::sqrt(1.25 + 1e-5);  // mean 2.5, biased variance 1.25
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(y.f()[i], (xs[i] - 2.5) * inv * ws[i] + bs[i], 1e-6);
}

class NormTest : public IsaTest {};

TEST_P(NormTest, RmsNormMatchesReference) {
  for (int64_t n : kWidths) {
    for (int64_t rows : {int64_t(1), int64_t(3), int64_t(40)}) {
      for (bool with_weight : {true, false}) {
        HostTensor x(DType::F32, {rows, n}), w(DType::F32, {n}), want(DType::F32, {rows, n});
        fill_uniform(x, -3, 3, uint32_t(n * 31 + rows)), fill_uniform(w, -2, 2, uint32_t(n));
        const Tensor* wp = with_weight ? &w.t : nullptr;
        backend::reference::rms_norm(x.t, wp, 1e-6f, want.t);
        HostTensor got(x.t);
        ops::rms_norm(x.t, wp, 1e-6f, got.t);
        const std::string what = "rms_norm n=" + std::to_string(n) + " rows=" + std::to_string(rows);
        expect_close(got.f(), want.f(), want.n(), tolerance(DType::F32), what);
        ops::rms_norm(x.t, wp, 1e-6f, x.t);  // in place
        expect_close(x.f(), want.f(), want.n(), tolerance(DType::F32), what + " in place");
      }
    }
  }
}

TEST_P(NormTest, RmsNorm3DHeads) {  // q/k norm over head_dim of [tokens, heads, head_dim]
  HostTensor x(DType::F32, {5, 8, 128}), w(DType::F32, {128}), want(x.t), got(x.t);
  fill_uniform(x, -4, 4, 1), fill_uniform(w, 0, 2, 2);
  backend::reference::rms_norm(x.t, &w.t, 1e-6f, want.t);
  ops::rms_norm(x.t, &w.t, 1e-6f, got.t);
  expect_close(got.f(), want.f(), want.n(), tolerance(DType::F32), "rms_norm 3D");
}

TEST_P(NormTest, LayerNormMatchesReference) {
  for (int64_t n : kWidths) {
    for (int variant = 0; variant < 4; ++variant) {  // weight and/or bias
      const int64_t rows = 6;
      HostTensor x(DType::F32, {rows, n}), w(DType::F32, {n}), b(DType::F32, {n}), want(x.t), got(x.t);
      fill_uniform(x, -1, 5, uint32_t(n + variant)), fill_uniform(w, -2, 2, 3), fill_uniform(b, -1, 1, 4);
      const Tensor* wp = variant & 1 ? &w.t : nullptr;
      const Tensor* bp = variant & 2 ? &b.t : nullptr;
      backend::reference::layer_norm(x.t, wp, bp, 1e-5f, want.t);
      ops::layer_norm(x.t, wp, bp, 1e-5f, got.t);
      expect_close(got.f(), want.f(), want.n(), tolerance(DType::F32),
                   "layer_norm n=" + std::to_string(n) + " variant=" + std::to_string(variant));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Cpu, NormTest, testing::ValuesIn(isas_to_test()), isa_param_name);

}  // namespace
}  // namespace oxyd::test
