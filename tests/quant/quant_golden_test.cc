// Bit-exact checks of core/quant against committed goldens from independent oracles (gguf-py,
// ggml's C reference quantizers, ml_dtypes; see tools/gen_quant_goldens.py): every decoder
// reproduces the oracle's float32 bits, every encoder reproduces the oracle's bytes.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "core/quant.h"
#include "quant_golden_io.h"

namespace oxyd {
namespace {

using test::QuantGolden;
using test::read_quant_golden;

uint32_t bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

class DequantGolden : public ::testing::TestWithParam<std::string> {};

TEST_P(DequantGolden, MatchesOracleBitExactly) {
  const QuantGolden g = read_quant_golden("dequant_" + GetParam() + ".bin");
  ASSERT_EQ(g.kind, 0u);
  ASSERT_EQ(dtype_name(g.dtype), GetParam());
  const int64_t n = int64_t(g.floats.size());
  ASSERT_EQ(dtype_row_bytes(g.dtype, n), int64_t(g.bytes.size()));
  std::vector<float> got(g.floats.size(), -12345.0f);
  dequantize_row(g.dtype, g.bytes.data(), got.data(), n);
  int mismatches = 0;
  for (int64_t i = 0; i < n; ++i) {
    const float want = g.floats[size_t(i)], have = got[size_t(i)];
    const bool same = std::isnan(want) ? std::isnan(have) : bits(want) == bits(have);
    if (!same && ++mismatches <= 5)
      ADD_FAILURE() << GetParam() << " element " << i << " (block " << i / dtype_block_elems(g.dtype)
                    << "): " << test::oracle_name(g.oracle) << " says " << want << ", we say " << have;
  }
  EXPECT_EQ(mismatches, 0) << "of " << n << " elements";
}

INSTANTIATE_TEST_SUITE_P(AllFormats, DequantGolden,
                         ::testing::Values("F16", "BF16", "F8_E4M3", "F8_E5M2", "Q4_0", "Q4_1", "Q5_0", "Q5_1",
                                           "Q8_0", "Q2_K", "Q3_K", "Q4_K", "Q5_K", "Q6_K", "Q8_K", "IQ4_NL",
                                           "IQ4_XS", "MXFP4"),
                         [](const auto& info) { return info.param; });

class QuantGoldenTest : public ::testing::TestWithParam<std::string> {};

TEST_P(QuantGoldenTest, MatchesOracleBytesExactly) {
  const QuantGolden g = read_quant_golden("quant_" + GetParam() + ".bin");
  ASSERT_EQ(g.kind, 1u);
  ASSERT_EQ(dtype_name(g.dtype), GetParam());
  ASSERT_TRUE(can_quantize(g.dtype));
  const int64_t n = int64_t(g.floats.size());
  ASSERT_EQ(dtype_row_bytes(g.dtype, n), int64_t(g.bytes.size()));
  std::vector<uint8_t> got(g.bytes.size(), 0xAB);
  quantize_row(g.dtype, g.floats.data(), got.data(), n);
  const int64_t block_bytes = dtype_block_bytes(g.dtype);
  int bad_blocks = 0;
  for (size_t blk = 0; blk * block_bytes < got.size(); ++blk) {
    for (int64_t j = 0; j < block_bytes; ++j) {
      const size_t at = blk * block_bytes + size_t(j);
      if (got[at] != g.bytes[at]) {
        if (++bad_blocks <= 5)
          ADD_FAILURE() << GetParam() << " block " << blk << " byte " << j << ": " << test::oracle_name(g.oracle)
                        << " wrote " << int(g.bytes[at]) << ", we wrote " << int(got[at]);
        break;
      }
    }
  }
  EXPECT_EQ(bad_blocks, 0) << "of " << got.size() / block_bytes << " blocks";
}

INSTANTIATE_TEST_SUITE_P(AllEncoders, QuantGoldenTest,
                         ::testing::Values("F16", "BF16", "Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q8_0", "Q8_1", "MXFP4",
                                           "Q8_K", "Q2_K", "Q3_K", "Q4_K", "Q5_K", "Q6_K", "IQ4_NL", "IQ4_XS"),
                         [](const auto& info) { return info.param; });

// Block-scaled FP8: per-code values come from the ml_dtypes golden, not from our decoder.
TEST(Fp8BlockScaled, PartialBlocksUseTheirOwnScale) {
  const QuantGolden codes = read_quant_golden("dequant_F8_E4M3.bin");  // first 256 entries: codes 0..255
  const int64_t rows = 130, cols = 200, br = 128, bc = 64;
  const int64_t srows = 2, scols = 4;  // ceil(130/128), ceil(200/64)
  std::vector<uint8_t> w(size_t(rows * cols));
  for (size_t i = 0; i < w.size(); ++i) w[i] = uint8_t((i * 37 + 11) % 256);
  std::vector<float> scale(size_t(srows * scols));
  for (size_t i = 0; i < scale.size(); ++i) scale[i] = std::ldexp(1.0f + 0.25f * float(i), int(i) - 3);
  std::vector<float> out(w.size());
  dequantize_fp8_block_scaled(w.data(), rows, cols, scale.data(), br, bc, out.data());
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < cols; ++j) {
      const float want = codes.floats[w[size_t(i * cols + j)]] * scale[size_t((i / br) * scols + j / bc)];
      const float have = out[size_t(i * cols + j)];
      if (std::isnan(want)) {
        ASSERT_TRUE(std::isnan(have)) << i << "," << j;
      } else {
        ASSERT_EQ(bits(want), bits(have)) << i << "," << j;
      }
    }
  }
  EXPECT_THROW(dequantize_fp8_block_scaled(w.data(), rows, cols, scale.data(), 0, bc, out.data()), Error);
}

}  // namespace
}  // namespace oxyd
