// DType traits and scalar float conversions. Oracles: the GGUF byte sizes of ggml-common.h's
// block structs, and the hardware F16C / IEEE rules (checked exhaustively against a float64 rounding).
#include <gtest/gtest.h>

#include <cmath>

#include "core/dtype.h"
#include "core/error.h"
#include "core/half.h"

namespace oxyd {
namespace {

TEST(DType, RowBytes) {
  EXPECT_EQ(dtype_row_bytes(DType::Q4_K, 4096), 16 * 144);
  EXPECT_EQ(dtype_row_bytes(DType::Q8_0, 64), 68);
  EXPECT_EQ(dtype_row_bytes(DType::BF16, 3), 6);
  EXPECT_THROW(dtype_row_bytes(DType::Q4_0, 33), Error);
  EXPECT_EQ(dtype_from_ggml(12), DType::Q4_K);
  EXPECT_FALSE(dtype_from_ggml(1000).has_value());
  EXPECT_FALSE(dtype_from_ggml(77).has_value());
  EXPECT_EQ(dtype_from_name("bf16"), DType::BF16);
  EXPECT_EQ(dtype_name(DType::MXFP4), "MXFP4");
}

// Every f16 bit pattern round-trips through f32, and f32→f16 picks the nearest f16 (ties even).
TEST(Half, F16Exhaustive) {
  for (uint32_t h = 0; h < 65536; ++h) {
    const float f = f16_to_f32(uint16_t(h));
    if (std::isnan(f)) {
      EXPECT_TRUE(((h >> 10) & 0x1f) == 0x1f && (h & 0x3ff));
      continue;
    }
    ASSERT_EQ(f32_to_f16(f), h) << h;
  }
  // Midpoints between consecutive positive finite f16 values round to the even neighbour.
  for (uint32_t h = 0; h < 0x7bff; ++h) {
    const double lo = f16_to_f32(uint16_t(h)), hi = f16_to_f32(uint16_t(h + 1));
    const float mid = float((lo + hi) / 2);
    if (double(mid) != (lo + hi) / 2) continue;
    ASSERT_EQ(f32_to_f16(mid), (h & 1) ? h + 1 : h) << h;
  }
  EXPECT_EQ(f32_to_f16(1e6f), 0x7c00);
  EXPECT_EQ(f32_to_f16(-1e6f), 0xfc00);
}

TEST(Half, BF16AndFp8) {
  EXPECT_EQ(bf16_to_f32(0x3f80), 1.0f);
  EXPECT_EQ(f32_to_bf16(1.0f), 0x3f80);
  EXPECT_EQ(f32_to_bf16(bits_to_f32(0x3f808000u)), 0x3f80);  // tie → even
  EXPECT_EQ(f32_to_bf16(bits_to_f32(0x3f818000u)), 0x3f82);  // tie → even (up)
  EXPECT_EQ(fp8_e4m3_to_f32(0x7e), 448.0f);                  // max normal
  EXPECT_EQ(fp8_e4m3_to_f32(0x01), std::ldexp(1.0f, -9));    // min subnormal
  EXPECT_EQ(fp8_e4m3_to_f32(0x38), 1.0f);
  EXPECT_EQ(fp8_e4m3_to_f32(0xb8), -1.0f);
  EXPECT_TRUE(std::isnan(fp8_e4m3_to_f32(0x7f)));
}

}  // namespace
}  // namespace oxyd
