// backend/reference matmul and get_rows against committed goldens: y = x · wᵀ computed by numpy in
// float64 on gguf-py's (or ml_dtypes') dequantized weights, one case per weight format; get_rows
// returns exactly the oracle's dequantized rows and rejects out-of-range ids.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "backend/reference/get_rows.h"
#include "backend/reference/matmul.h"
#include "core/quant.h"
#include "quant_golden_io.h"

namespace oxyd {
namespace {

namespace ref = backend::reference;

TEST(ReferenceMatmul, MatchesFloat64NumpyForEveryFormat) {
  const std::vector<test::MatmulCase> cases = test::read_matmul_cases();
  ASSERT_GE(cases.size(), 18u);
  for (const auto& c : cases) {
    SCOPED_TRACE(std::string(dtype_name(c.dtype)));
    std::vector<float> y(size_t(c.m * c.n), -1.0f);
    std::vector<float> x = c.x;
    std::vector<uint8_t> w = c.w;
    ref::matmul(Tensor(DType::F32, x.data(), {c.m, c.k}), Tensor(c.dtype, w.data(), {c.n, c.k}),
                Tensor(DType::F32, y.data(), {c.m, c.n}));
    // Both sides sum in double and round once; only the summation order differs.
    std::vector<float> wf(size_t(c.n * c.k));
    for (int64_t j = 0; j < c.n; ++j)
      dequantize_row(c.dtype, w.data() + j * dtype_row_bytes(c.dtype, c.k), wf.data() + j * c.k, c.k);
    for (int64_t i = 0; i < c.m; ++i) {
      for (int64_t j = 0; j < c.n; ++j) {
        double mag = 0;
        for (int64_t l = 0; l < c.k; ++l) mag += std::fabs(double(x[size_t(i * c.k + l)]) * wf[size_t(j * c.k + l)]);
        const float want = c.y[size_t(i * c.n + j)];
        EXPECT_NEAR(y[size_t(i * c.n + j)], want, 1e-6 * std::fabs(want) + 1e-12 * mag + 1e-30) << i << "," << j;
      }
    }
  }
}

TEST(ReferenceMatmul, RejectsMismatchedShapes) {
  std::vector<float> x(2 * 64), w(3 * 64), y(2 * 3);
  const Tensor tx(DType::F32, x.data(), {2, 64}), tw(DType::F32, w.data(), {3, 64});
  EXPECT_THROW(ref::matmul(tx, Tensor(DType::F32, w.data(), {3, 32}), Tensor(DType::F32, y.data(), {2, 3})), Error);
  EXPECT_THROW(ref::matmul(tx, tw, Tensor(DType::F32, y.data(), {3, 2})), Error);
  EXPECT_THROW(ref::matmul(tx, tw, Tensor(DType::F16, y.data(), {2, 3})), Error);
  // k = 64 is not a whole number of Q4_K super-blocks.
  EXPECT_THROW(ref::matmul(tx, Tensor(DType::Q4_K, w.data(), {3, 64}), Tensor(DType::F32, y.data(), {2, 3})), Error);
}

class ReferenceGetRows : public ::testing::TestWithParam<std::string> {};

TEST_P(ReferenceGetRows, ReturnsOracleRows) {
  const test::QuantGolden g = test::read_quant_golden("dequant_" + GetParam() + ".bin");
  const int64_t dim = 2 * std::max<int64_t>(dtype_block_elems(g.dtype), 32);
  const int64_t num_rows = int64_t(g.floats.size()) / dim;
  ASSERT_GE(num_rows, 4);
  std::vector<uint8_t> table = g.bytes;
  const std::vector<int32_t> ids = {int32_t(num_rows - 1), 0, 2, 2, 1};
  std::vector<float> out(ids.size() * size_t(dim));
  ref::get_rows(Tensor(g.dtype, table.data(), {num_rows, dim}), ids.data(), int64_t(ids.size()),
                Tensor(DType::F32, out.data(), {int64_t(ids.size()), dim}));
  for (size_t r = 0; r < ids.size(); ++r) {
    for (int64_t c = 0; c < dim; ++c) {
      const float want = g.floats[size_t(ids[r] * dim + c)], have = out[r * size_t(dim) + size_t(c)];
      if (std::isnan(want)) ASSERT_TRUE(std::isnan(have));
      else ASSERT_EQ(std::memcmp(&want, &have, 4), 0) << "row " << r << " col " << c << ": " << want << " vs " << have;
    }
  }
  const std::vector<int32_t> bad = {0, int32_t(num_rows)};
  try {
    ref::get_rows(Tensor(g.dtype, table.data(), {num_rows, dim}), bad.data(), 2,
                  Tensor(DType::F32, out.data(), {2, dim}));
    FAIL() << "expected Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::INVALID_ARGUMENT);
    EXPECT_NE(std::string(e.what()).find("position 1"), std::string::npos) << e.what();
  }
  const int32_t negative = -1;
  EXPECT_THROW(ref::get_rows(Tensor(g.dtype, table.data(), {num_rows, dim}), &negative, 1,
                             Tensor(DType::F32, out.data(), {1, dim})),
               Error);
}

INSTANTIATE_TEST_SUITE_P(AllFormats, ReferenceGetRows,
                         ::testing::Values("F16", "BF16", "F8_E4M3", "Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q8_0", "Q2_K",
                                           "Q3_K", "Q4_K", "Q5_K", "Q6_K", "Q8_K", "IQ4_NL", "IQ4_XS", "MXFP4"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace oxyd
