// KvFormat (core/kv_format.h): the CLI's two flags map to one format, every format sizes its head
// vector as the KV layout says (plain: head_dim elements of 4 or 2 bytes; quantized: ceil(d·b/8)
// code bytes + one f32 norm, core/kv_quant.h), and bad flag values are errors naming the flag.
#include <gtest/gtest.h>

#include <string>

#include "core/error.h"
#include "core/kv_format.h"

namespace oxyd {
namespace {

TEST(KvFormat, FlagsMapToOneFormat) {
  EXPECT_EQ(parse_kv_format("f32", "off"), KvFormat::F32);
  EXPECT_EQ(parse_kv_format("Float16", ""), KvFormat::F16);
  EXPECT_EQ(parse_kv_format("BF16", "none"), KvFormat::BF16);
  EXPECT_EQ(parse_kv_format("bfloat16", "OFF"), KvFormat::BF16);
  // --kv-quant wins over --kv-dtype (the codes are no float type).
  // The modes at the widths that met their bounds (issue 29); the seed's widths by name.
  EXPECT_EQ(parse_kv_format("f32", "lossless"), KvFormat::Q8);
  EXPECT_EQ(parse_kv_format("f16", "Balanced"), KvFormat::Q6);
  EXPECT_EQ(parse_kv_format("bf16", "aggressive"), KvFormat::Q5);
  EXPECT_EQ(parse_kv_format("bf16", "q4"), KvFormat::Q4);
  EXPECT_EQ(parse_kv_format("bf16", "Q3"), KvFormat::Q3);
  EXPECT_EQ(parse_kv_format("bf16", "q2"), KvFormat::Q2);
  EXPECT_THROW(parse_kv_format("bf16", "q7"), Error);
  EXPECT_THROW(parse_kv_format("bf16", "q1"), Error);
}

TEST(KvFormat, BadFlagsNameTheFlag) {
  auto message = [](const char* dtype, const char* quant) -> std::string {
    try {
      parse_kv_format(dtype, quant);
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::INVALID_ARGUMENT);
      return e.what();
    }
    return "";
  };
  EXPECT_NE(message("q8_0", "off").find("--kv-dtype 'q8_0'"), std::string::npos);
  EXPECT_NE(message("q8_0", "lossless").find("--kv-dtype"), std::string::npos);  // checked even when overridden
  const std::string quant = message("bf16", "8bit");
  EXPECT_NE(quant.find("--kv-quant '8bit'"), std::string::npos) << quant;
  EXPECT_NE(quant.find("aggressive"), std::string::npos) << quant;
}

TEST(KvFormat, RowBytesFollowTheLayout) {
  for (int64_t d : {36, 64, 72, 80, 128, 256}) {
    EXPECT_EQ(kv_format_row_bytes(KvFormat::F32, d), 4 * d);
    EXPECT_EQ(kv_format_row_bytes(KvFormat::F16, d), 2 * d);
    EXPECT_EQ(kv_format_row_bytes(KvFormat::BF16, d), 2 * d);
    for (auto [f, bits] : {std::pair{KvFormat::Q8, 8}, std::pair{KvFormat::Q6, 6}, std::pair{KvFormat::Q5, 5},
                           std::pair{KvFormat::Q4, 4}, std::pair{KvFormat::Q3, 3}, std::pair{KvFormat::Q2, 2}}) {
      const int64_t codes = (d * bits + 7) / 8;
      EXPECT_EQ(kv_format_row_bytes(f, d), codes + 4) << d << " " << bits;
      EXPECT_EQ(kv_format_row_elems(f, d), codes + 4);  // a U8 tensor: elements are bytes
      EXPECT_EQ(kv_format_bits(f), bits);
      EXPECT_EQ(kv_format_dtype(f), DType::U8);
      EXPECT_EQ(kv_format_of_bits(bits), f);
    }
    EXPECT_EQ(kv_format_row_elems(KvFormat::BF16, d), d);
  }
}

TEST(KvFormat, NamesAndDtypesRoundTrip) {
  for (KvFormat f : {KvFormat::F32, KvFormat::F16, KvFormat::BF16}) {
    EXPECT_FALSE(kv_format_quantized(f));
    EXPECT_EQ(kv_format_of_dtype(kv_format_dtype(f)), f);
    EXPECT_EQ(std::string(kv_format_name(f)), std::string(dtype_name(kv_format_dtype(f))));
    EXPECT_EQ(parse_kv_format(kv_dtype_flag(f), "off"), f);
  }
  EXPECT_EQ(kv_format_of_dtype(DType::Q8_0), std::nullopt);
  EXPECT_EQ(kv_format_of_bits(7), std::nullopt);
  EXPECT_EQ(std::string(kv_format_name(KvFormat::Q3)), "Q3");
  EXPECT_EQ(kv_format_description(KvFormat::Q5), "aggressive 5-bit uniform + f32 scale");
  EXPECT_EQ(kv_format_description(KvFormat::Q8), "lossless 8-bit uniform + f32 scale");
  EXPECT_EQ(kv_format_description(KvFormat::Q2), "2-bit + f32 norm");
  for (KvFormat f : kKvQuantModes) EXPECT_EQ(parse_kv_format("bf16", kv_quant_flag(f)), f);
  EXPECT_EQ(kv_quant_flag(KvFormat::Q4), "q4");
  EXPECT_EQ(kv_quant_flag(KvFormat::BF16), "off");
  EXPECT_EQ(kDefaultKvFormat, KvFormat::BF16);
}

}  // namespace
}  // namespace oxyd
