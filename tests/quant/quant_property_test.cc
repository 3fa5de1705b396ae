// Properties of core/quant that hold whatever the oracle: round-trip error bounds per format
// (dequantize(quantize(x)) stays within a fraction of each block's largest |x|), Q8_K's block
// structure, and clear errors on unsupported dtypes and ragged rows.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/quant.h"

namespace oxyd {
namespace {

struct Bound {
  DType dtype;
  double max_err;  // max |x - y| / amax over the (super-)block
  double rms_err;  // rms(x - y) / rms(x) on N(0, 1) data
};

// Worst cases from the format math (step/2 plus clipping at the positive end, plus the rounding of
// scales to f16 / 4-6 bit sub-scales), with margin. A packing bug gives errors of order 1.
const Bound kBounds[] = {
    {DType::F16, 1e-3, 1e-3},  {DType::BF16, 4e-3, 4e-3},  {DType::Q8_0, 0.0045, 0.01},
    {DType::Q8_1, 0.0045, 0.01}, {DType::Q8_K, 0.0041, 0.01}, {DType::Q4_0, 0.13, 0.15},
    {DType::Q4_1, 0.07, 0.1},  {DType::Q5_0, 0.065, 0.06}, {DType::Q5_1, 0.035, 0.05},
    {DType::MXFP4, 0.26, 0.2}, {DType::Q2_K, 0.5, 0.45},   {DType::Q3_K, 0.3, 0.25},
    {DType::Q4_K, 0.1, 0.1},   {DType::Q5_K, 0.05, 0.05},  {DType::Q6_K, 0.035, 0.025},
    {DType::IQ4_NL, 0.2, 0.12}, {DType::IQ4_XS, 0.2, 0.12},
};

std::vector<float> pattern(std::mt19937& rng, int64_t n, int kind) {
  std::normal_distribution<float> nd(0.0f, 1.0f);
  std::vector<float> x(static_cast<size_t>(n));
  for (auto& v : x) v = nd(rng);
  if (kind == 1) {
    for (auto& v : x) v = v * 0.01f + 2.0f;  // all positive, offset
  } else if (kind == 2) {
    for (auto& v : x) v = v * 0.02f;  // small, but the f16 scales stay normal (subnormal ones lose bits)
  } else if (kind == 3) {
    for (size_t i = 0; i < x.size(); i += 97) x[i] *= 40.0f;  // outliers
  }
  return x;
}

class RoundTrip : public ::testing::TestWithParam<Bound> {};

TEST_P(RoundTrip, ErrorWithinFormatBound) {
  const Bound b = GetParam();
  const int64_t qk = std::max<int64_t>(dtype_block_elems(b.dtype), 32);
  const int64_t n = 4096;
  std::mt19937 rng(1234);
  for (int kind = 0; kind < 4; ++kind) {
    const std::vector<float> x = pattern(rng, n, kind);
    std::vector<uint8_t> q(static_cast<size_t>(dtype_row_bytes(b.dtype, n)));
    std::vector<float> y(static_cast<size_t>(n));
    quantize_row(b.dtype, x.data(), q.data(), n);
    dequantize_row(b.dtype, q.data(), y.data(), n);
    double se = 0, sx = 0;
    for (int64_t blk = 0; blk < n / qk; ++blk) {
      double amax = 0, worst = 0;
      for (int64_t i = blk * qk; i < (blk + 1) * qk; ++i) {
        amax = std::max(amax, std::fabs(double(x[size_t(i)])));
        worst = std::max(worst, std::fabs(double(x[size_t(i)]) - double(y[size_t(i)])));
        se += std::pow(double(x[size_t(i)]) - double(y[size_t(i)]), 2);
        sx += std::pow(double(x[size_t(i)]), 2);
      }
      ASSERT_LE(worst, b.max_err * amax) << dtype_name(b.dtype) << " pattern " << kind << " block " << blk;
    }
    if (kind == 0) {
      EXPECT_LE(std::sqrt(se / sx), b.rms_err) << dtype_name(b.dtype);
    }
  }
  // All-zero input decodes to exact zeros.
  std::vector<float> zeros(static_cast<size_t>(n), 0.0f), y(static_cast<size_t>(n), 1.0f);
  std::vector<uint8_t> q(static_cast<size_t>(dtype_row_bytes(b.dtype, n)));
  quantize_row(b.dtype, zeros.data(), q.data(), n);
  dequantize_row(b.dtype, q.data(), y.data(), n);
  for (float v : y) ASSERT_EQ(v, 0.0f) << dtype_name(b.dtype);
}

INSTANTIATE_TEST_SUITE_P(AllEncoders, RoundTrip, ::testing::ValuesIn(kBounds),
                         [](const auto& info) { return std::string(dtype_name(info.param.dtype)); });

TEST(Q8K, BlockStructure) {
  std::mt19937 rng(7);
  const std::vector<float> x = pattern(rng, 1024, 3);
  std::vector<BlockQ8_K> q(4);
  quantize_row(DType::Q8_K, x.data(), q.data(), 1024);
  for (int b = 0; b < 4; ++b) {
    const float* xb = x.data() + 256 * b;
    const int arg = int(std::max_element(xb, xb + 256, [](float a, float c) { return std::fabs(a) < std::fabs(c); }) - xb);
    EXPECT_EQ(q[size_t(b)].qs[arg], -127) << "the largest |x| maps to -127 with d = -max/127";
    EXPECT_FLOAT_EQ(q[size_t(b)].d, -xb[arg] / 127.0f);
    for (int j = 0; j < 16; ++j) {
      int sum = 0;
      for (int i = 0; i < 16; ++i) sum += q[size_t(b)].qs[16 * j + i];
      EXPECT_EQ(q[size_t(b)].bsums[j], sum);
    }
    for (int i = 0; i < 256; ++i) {
      EXPECT_GE(q[size_t(b)].qs[i], -127);
      EXPECT_LE(std::fabs(q[size_t(b)].d * q[size_t(b)].qs[i] - xb[i]), std::fabs(q[size_t(b)].d) * 0.5001f);
    }
  }
}

TEST(QuantHelpers, NearestIntRoundsHalfToEven) {
  EXPECT_EQ(nearest_int(0.5f), 0);
  EXPECT_EQ(nearest_int(1.5f), 2);
  EXPECT_EQ(nearest_int(2.5f), 2);
  EXPECT_EQ(nearest_int(-0.5f), 0);
  EXPECT_EQ(nearest_int(-1.5f), -2);
  EXPECT_EQ(nearest_int(-2.6f), -3);
  EXPECT_EQ(nearest_int(127.49f), 127);
}

TEST(QuantHelpers, E8M0HalfIsExactPowerOfTwo) {
  for (int e = 0; e < 256; ++e) EXPECT_EQ(e8m0_to_f32_half(uint8_t(e)), std::ldexp(1.0f, e - 128)) << e;
}

TEST(QuantErrors, UnsupportedAndRaggedRowsThrow) {
  float x[64] = {};
  uint8_t buf[512] = {};
  EXPECT_FALSE(can_quantize(DType::F8_E4M3));
  EXPECT_FALSE(can_quantize(DType::I32));
  EXPECT_TRUE(can_dequantize(DType::IQ4_XS));
  EXPECT_FALSE(can_dequantize(DType(77)));
  try {
    quantize_row(DType::F8_E4M3, x, buf, 32);
    FAIL() << "expected Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::UNSUPPORTED);
    EXPECT_NE(std::string(e.what()).find("F8_E4M3"), std::string::npos) << e.what();
  }
  try {
    dequantize_row(DType::Q4_0, buf, x, 33);
    FAIL() << "expected Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::INVALID_ARGUMENT);
  }
  try {
    dequantize_row(DType(77), buf, x, 1);
    FAIL() << "expected Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::UNSUPPORTED);
  }
  EXPECT_THROW(quantize_row(DType::Q4_K, x, buf, 64), Error);
}

TEST(QuantPlainTypes, IntegersConvertByValue) {
  const int8_t i8[4] = {-128, -1, 0, 127};
  const int64_t i64[2] = {-(int64_t(1) << 40), 123456789};
  const double f64[2] = {0.1, -1e300};
  float y[4];
  dequantize_row(DType::I8, i8, y, 4);
  EXPECT_EQ(y[0], -128.0f);
  EXPECT_EQ(y[3], 127.0f);
  dequantize_row(DType::I64, i64, y, 2);
  EXPECT_EQ(y[0], -1099511627776.0f);
  EXPECT_EQ(y[1], 123456789.0f);
  dequantize_row(DType::F64, f64, y, 2);
  EXPECT_EQ(y[0], 0.1f);
  EXPECT_TRUE(std::isinf(y[1]) && y[1] < 0);
}

}  // namespace
}  // namespace oxyd
