// RoPE: backend::cpu (each ISA, through ops/) against backend::reference for every pairing,
// partial rotary width, frequency factors and attention factor; the reference against HF's
// formulation (q·cos + rotate_half(q)·sin with cos/sin of cat(freqs, freqs)) written here, and
// against properties of a rotation (norm kept, scores depend only on relative position).
#include <gtest/gtest.h>

#include "backend/reference/rope.h"
#include "op_test_util.h"
#include "ops/rope.h"

namespace oxyd::test {
namespace {

using backend::RopeStyle;

HostTensor default_inv_freq(int64_t rot_dim, double base) {
  HostTensor f(DType::F32, {rot_dim / 2});
  for (int64_t i = 0; i < rot_dim / 2; ++i) f.f()[i] = float(std::pow(base, -2.0 * double(i) / double(rot_dim)));
  return f;
}

HostTensor positions_of(std::vector<int32_t> v) {
  HostTensor p(DType::I32, {int64_t(v.size())});
  std::copy(v.begin(), v.end(), p.i());
  return p;
}

TEST(RopeReference, MatchesHfRotateHalfFormulation) {
  const int64_t T = 3, H = 2, D = 64, R = 48;  // partial: 48 of 64 dims rotated
  HostTensor x(DType::F32, {T, H, D}), y(x.t);
  fill_uniform(x, -1, 1, 5);
  HostTensor freq = default_inv_freq(R, 10000.0), pos = positions_of({0, 7, 1234});
  const float af = 1.1f;
  backend::reference::rope(x.t, pos.t, freq.t, nullptr, RopeStyle::NEOX, af, y.t);
  for (int64_t t = 0; t < T; ++t)
    for (int64_t h = 0; h < H; ++h) {
      const float* q = x.f() + (t * H + h) * D;
      const float* got = y.f() + (t * H + h) * D;
      for (int64_t d = 0; d < D; ++d) {
        double want = q[d];
        if (d < R) {
          const double ang = double(pos.i()[t]) * freq.f()[d % (R / 2)];  // emb = cat(freqs, freqs)
          const double rot_half = d < R / 2 ? -q[d + R / 2] : q[d - R / 2];
          want = q[d] * std::cos(ang) * af + rot_half * std::sin(ang) * af;
        }
        ASSERT_NEAR(got[d], want, 1e-6) << "t=" << t << " h=" << h << " d=" << d;
      }
    }
}

TEST(RopeReference, InterleavedIsNeoxOnPermutedDims) {
  const int64_t D = 32, half = 16;
  HostTensor x(DType::F32, {2, 1, D}), xp(x.t), y(x.t), yp(x.t);
  fill_uniform(x, -1, 1, 9);
  for (int64_t t = 0; t < 2; ++t)
    for (int64_t i = 0; i < half; ++i)  // pair (2i, 2i+1) → (i, i + half)
      xp.f()[t * D + i] = x.f()[t * D + 2 * i], xp.f()[t * D + half + i] = x.f()[t * D + 2 * i + 1];
  HostTensor freq = default_inv_freq(D, 500000.0), pos = positions_of({3, 999});
  backend::reference::rope(x.t, pos.t, freq.t, nullptr, RopeStyle::INTERLEAVED, 1.0f, y.t);
  backend::reference::rope(xp.t, pos.t, freq.t, nullptr, RopeStyle::NEOX, 1.0f, yp.t);
  for (int64_t t = 0; t < 2; ++t)
    for (int64_t i = 0; i < half; ++i) {
      EXPECT_FLOAT_EQ(y.f()[t * D + 2 * i], yp.f()[t * D + i]);
      EXPECT_FLOAT_EQ(y.f()[t * D + 2 * i + 1], yp.f()[t * D + half + i]);
    }
}

TEST(RopeReference, ScoresDependOnlyOnRelativePosition) {
  const int64_t D = 128;
  HostTensor q(DType::F32, {1, 1, D}), k(q.t);
  fill_uniform(q, -1, 1, 1), fill_uniform(k, -1, 1, 2);
  HostTensor freq = default_inv_freq(D, 10000.0), ff(DType::F32, {D / 2});
  fill_uniform(ff, 1, 8, 3);
  for (RopeStyle style : {RopeStyle::NEOX, RopeStyle::INTERLEAVED}) {
    double first = 0;
    for (int32_t base : {0, 17, 4000}) {
      HostTensor qr(q.t), kr(k.t), pq = positions_of({base + 5}), pk = positions_of({base});
      backend::reference::rope(q.t, pq.t, freq.t, &ff.t, style, 1.0f, qr.t);
      backend::reference::rope(k.t, pk.t, freq.t, &ff.t, style, 1.0f, kr.t);
      double dot = 0, nq = 0, nq0 = 0;
      for (int64_t d = 0; d < D; ++d) dot += qr.f()[d] * kr.f()[d], nq += qr.f()[d] * qr.f()[d], nq0 += q.f()[d] * q.f()[d];
      EXPECT_NEAR(nq, nq0, 1e-4);  // a rotation keeps the norm
      if (base == 0) first = dot;
      else EXPECT_NEAR(dot, first, 1e-4) << "base " << base;
    }
  }
}

class RopeTest : public IsaTest {};

TEST_P(RopeTest, MatchesReference) {
  std::mt19937 rng(42);
  for (int64_t D : {64, 80, 96, 128, 256}) {
    for (int64_t R : {D, D / 2, int64_t(24)}) {
      for (RopeStyle style : {RopeStyle::NEOX, RopeStyle::INTERLEAVED}) {
        for (int variant = 0; variant < 2; ++variant) {
          const int64_t T = 9, H = 3;
          HostTensor x(DType::F32, {T, H, D}), want(x.t), got(x.t), pos(DType::I32, {T});
          fill_uniform(x, -2, 2, uint32_t(D + R));
          for (int64_t t = 0; t < T; ++t) pos.i()[t] = int32_t(rng() % 40000);
          HostTensor freq = default_inv_freq(R, 1e6), ff(DType::F32, {R / 2});
          fill_uniform(ff, 1, 40, 7);
          const Tensor* ffp = variant ? &ff.t : nullptr;
          const float af = variant ? 1.2f : 1.0f;
          backend::reference::rope(x.t, pos.t, freq.t, ffp, style, af, want.t);
          ops::rope(x.t, pos.t, freq.t, ffp, style, af, got.t);
          const std::string what = "rope D=" + std::to_string(D) + " R=" + std::to_string(R) +
                                   (style == RopeStyle::NEOX ? " neox" : " interleaved") + " variant " + std::to_string(variant);
          expect_close(got.f(), want.f(), want.n(), tolerance(DType::F32), what);
          ops::rope(x.t, pos.t, freq.t, ffp, style, af, x.t);  // in place
          expect_close(x.f(), want.f(), want.n(), tolerance(DType::F32), what + " in place");
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Cpu, RopeTest, testing::ValuesIn(isas_to_test()), isa_param_name);

// transformers' get_llama_4_attn_scale (Ministral 3): 1 + beta·ln(1 + floor(pos / orig)), written
// out here for a few positions on both sides of each multiple of orig; CPU equals the reference.
TEST(AttnTemperature, ScalesEachTokenByItsPositionsFactor) {
  const int64_t T = 7, H = 3, D = 16, orig = 16;
  const float beta = 0.1f;
  const std::vector<int32_t> p = {0, 15, 16, 31, 32, 47, 16383};
  HostTensor x(DType::F32, {T, H, D}), ref(x.t), got(x.t), pos = positions_of(p);
  fill_uniform(x, -2, 2, 3);
  backend::reference::attn_temperature(x.t, pos.t, beta, orig, ref.t);
  const double want_scale[] = {1.0, 1.0, 1 + 0.1 * std::log(2.0), 1 + 0.1 * std::log(2.0), 1 + 0.1 * std::log(3.0),
                               1 + 0.1 * std::log(3.0), 1 + 0.1 * std::log(1024.0)};
  for (int64_t t = 0; t < T; ++t)
    for (int64_t i = 0; i < H * D; ++i)
      ASSERT_NEAR(ref.f()[t * H * D + i], x.f()[t * H * D + i] * want_scale[t], 1e-6) << "t=" << t;
  ops::attn_temperature(x.t, pos.t, beta, orig, got.t);
  expect_close(got.f(), ref.f(), ref.n(), tolerance(DType::F32), "attn_temperature cpu");
  ops::attn_temperature(x.t, pos.t, beta, orig, x.t);  // in place
  expect_close(x.f(), ref.f(), ref.n(), tolerance(DType::F32), "attn_temperature in place");
  EXPECT_THROW(ops::attn_temperature(x.t, pos.t, beta, 0, x.t), Error);
}

}  // namespace
}  // namespace oxyd::test
