// The CUDA integer gemv's per-thread code (backend/cuda/qdot.cuh) run on the CPU: no GPU needed.
// Weights are random floats encoded by core's quantize_row; activations are quantized by the
// header's own x_scale / x_round (the kernel's code) to x̂. The oracle is core's dequantize_row
// times x̂ in float64: the unit loop must give that within fp32 rounding, and x̂ must lie within
// half a step of x.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "backend/cuda/qdot.cuh"
#include "core/quant.h"

namespace oxyd::backend::cuda::qdot {
namespace {

std::vector<float> random_floats(size_t n, uint32_t seed, float lo, float hi) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float& f : v) f = dist(rng);
  return v;
}

struct QuantX {
  std::vector<int8_t> q;
  std::vector<float> d, xhat;
};

// What the gemv's activation kernel computes, block by block, with the header's functions.
QuantX quantize_x(const std::vector<float>& x) {
  QuantX r;
  r.q.resize(x.size());
  r.xhat.resize(x.size());
  for (size_t b = 0; b < x.size() / kXBlock; ++b) {
    float amax = 0;
    for (int i = 0; i < kXBlock; ++i) amax = std::max(amax, std::fabs(x[b * kXBlock + i]));
    const XScale s = x_scale(amax);
    r.d.push_back(s.d);
    for (int i = 0; i < kXBlock; ++i) {
      const size_t j = b * kXBlock + i;
      r.q[j] = int8_t(x_round(x[j], s.id));
      r.xhat[j] = s.d * float(r.q[j]);
    }
  }
  return r;
}

template <class F, int M>
std::vector<float> unit_gemv(const std::vector<uint8_t>& w, int64_t n, int64_t k, const QuantX& x) {
  const int64_t rb = dtype_row_bytes(F::kType, k);
  const int units = int(k / kUnit);
  std::vector<float> y(size_t(M * n));
  for (int64_t c = 0; c < n; ++c) {
    float acc[M] = {};
    for (int u = 0; u < units; ++u) {
      XUnit xu[M];
      for (int r = 0; r < M; ++r) F::Fmt::load_x(x.q.data() + r * k, x.d.data() + r * (k / kXBlock), u, xu[r]);
      F::Fmt::template dot<M>(w.data() + c * rb, u, xu, acc);
    }
    for (int r = 0; r < M; ++r) y[size_t(r * n + c)] = acc[r];
  }
  return y;
}

template <DType T, class Fmt_> struct Case {
  static constexpr DType kType = T;
  using Fmt = Fmt_;
};

template <class F>
void check_format(int64_t k, uint32_t seed) {
  constexpr int M = 3;
  const int64_t n = 7;
  const DType t = F::kType;
  const std::string what = std::string(dtype_traits(t).name) + " k=" + std::to_string(k);
  ASSERT_EQ(F::Fmt::kBlockElems, dtype_block_elems(t)) << what;
  ASSERT_EQ(int64_t(F::Fmt::kBlockBytes), dtype_row_bytes(t, F::Fmt::kBlockElems)) << what;
  ASSERT_EQ(F::Fmt::kUnitsPerBlock * kUnit, F::Fmt::kBlockElems) << what;
  const std::vector<float> wf0 = random_floats(size_t(n * k), seed, -1, 1);
  const int64_t rb = dtype_row_bytes(t, k);
  std::vector<uint8_t> w(size_t(n * rb));
  std::vector<float> wf(size_t(n * k));
  for (int64_t r = 0; r < n; ++r) {
    quantize_row(t, wf0.data() + r * k, w.data() + r * rb, k);
    dequantize_row(t, w.data() + r * rb, wf.data() + r * k, k);
  }
  std::vector<float> x = random_floats(size_t(M * k), seed + 1, -2, 2);
  for (int64_t i = 0; i < 32; ++i) x[size_t(k + i)] = 0.0f;  // an all-zero block: d = 0
  for (int64_t i = 64; i < 96; ++i) x[size_t(i)] *= 1e-3f;    // a block of small values
  const QuantX qx = quantize_x(x);
  const std::vector<float> got = unit_gemv<F, M>(w, n, k, qx);
  for (int r = 0; r < M; ++r)
    for (int64_t c = 0; c < n; ++c) {
      double want = 0, mag = 0, exact = 0, qbound = 0;
      for (int64_t e = 0; e < k; ++e) {
        const double wv = wf[size_t(c * k + e)], xh = qx.xhat[size_t(r * k + e)];
        want += wv * xh;
        mag += std::fabs(wv * xh);
        exact += wv * x[size_t(r * k + e)];
        qbound += std::fabs(wv) * (0.5 * qx.d[size_t((r * k + e) / kXBlock)] * (1 + 2e-5) + 1e-7 * std::fabs(xh));
      }
      const float g = got[size_t(r * n + c)];
      ASSERT_NEAR(g, want, 1e-5 * mag + 1e-6) << what << " row " << r << " col " << c;
      ASSERT_LE(std::fabs(want - exact), qbound) << what << " row " << r << " col " << c << ": x̂ too far from x";
    }
}

TEST(QdotHost, ActivationScaleAndRounding) {
  EXPECT_EQ(x_scale(0.0f).d, 0.0f);
  EXPECT_EQ(x_round(1.0f, x_scale(0.0f).id), 0);
  EXPECT_FLOAT_EQ(x_scale(2.54f).d, 0.02f);
  const XScale s = x_scale(127.0f);  // d = id = 1: rounding is visible exactly
  EXPECT_EQ(s.d, 1.0f);
  EXPECT_EQ(x_round(127.0f, s.id), 127);
  EXPECT_EQ(x_round(-127.0f, s.id), -127);
  EXPECT_EQ(x_round(1.5f, s.id), 2);  // ties to even
  EXPECT_EQ(x_round(2.5f, s.id), 2);
  EXPECT_EQ(x_round(-3.5f, s.id), -4);
  EXPECT_EQ(x_round(128.0f, s.id), 127);  // clamped (guards an overshoot of amax·id)
}

TEST(QdotHost, Dp4aIsSignedBytes) {
  EXPECT_EQ(dp4a(0x01FF7F80u, 0x02030405u, 10), 10 + 1 * 2 + (-1) * 3 + 127 * 4 + (-128) * 5);
  EXPECT_EQ(sum4(0xFF0102FEu, 0), -1 + 1 + 2 - 2);
}

TEST(QdotHost, UnitDotsMatchDequantizedWeightsTimesQuantizedX) {
  for (int64_t k : {256, 1536, 4096}) {
    check_format<Case<DType::Q8_0, Q8_0>>(k, 11);
    check_format<Case<DType::Q4_0, Q4_0>>(k, 12);
    check_format<Case<DType::Q4_K, Q4_K>>(k, 13);
    check_format<Case<DType::Q5_K, Q5_K>>(k, 14);
    check_format<Case<DType::Q6_K, Q6_K>>(k, 15);
    check_format<Case<DType::MXFP4, MXFP4>>(k, 16);
  }
}

TEST(QdotHost, E2M1TableIsCoresMXFP4Values) {
  for (uint32_t c = 0; c < 16; ++c) {
    const uint32_t packed = c | ((c + 5) & 15) << 8 | ((c + 9) & 15) << 16 | ((15 - c) << 24);
    const uint32_t v = e2m1x2(packed);
    for (int i = 0; i < 4; ++i)
      EXPECT_EQ(int8_t(uint8_t(v >> (8 * i))), kMXFP4Values[(packed >> (8 * i)) & 15]) << "code " << c << " byte " << i;
  }
}

TEST(QdotHost, DispatchCoversTheIntegerFormats) {
  int hits = 0;
  for (DType t : {DType::Q8_0, DType::Q4_0, DType::Q4_K, DType::Q5_K, DType::Q6_K, DType::MXFP4})
    hits += dispatch(t, [](auto) {}) ? 1 : 0;
  EXPECT_EQ(hits, 6);
  for (DType t : {DType::F16, DType::BF16, DType::Q2_K}) EXPECT_FALSE(dispatch(t, [](auto) {}));
}

}  // namespace
}  // namespace oxyd::backend::cuda::qdot
