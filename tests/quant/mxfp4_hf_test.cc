// mxfp4_from_hf against transformers' own dequantizer of gpt-oss's Hugging Face MXFP4 layout
// (convert_moe_packed_tensors, tests/data/quant/mxfp4_hf.json from tools/gen_mxfp4_hf_goldens.py):
// repacked to GGUF MXFP4 and decoded by dequantize_row, every value equals transformers' (every
// E8M0 byte 0..255 appears; equality as values: transformers keeps the sign of −0, GGUF's doubled
// table, like gguf-py, decodes both zero codes to +0). The gate / up rows picked with row_step 2
// equal GptOssExperts' `[..., ::2]` / `[..., 1::2]` slices.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/quant.h"

namespace oxyd {
namespace {

float from_bits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

struct Golden {
  int64_t E, R, G;
  std::vector<uint8_t> blocks, scales;
  std::vector<uint32_t> dequant, gate, up;  // [E, G·32, R'] float bits, input-major
};

Golden load() {
  std::ifstream f(std::filesystem::path(OXYD_TEST_DATA_DIR) / "quant/mxfp4_hf.json");
  const auto j = nlohmann::json::parse(f);
  return {j["E"], j["R"], j["G"], j["blocks"], j["scales"], j["dequant_bits"], j["gate_bits"], j["up_bits"]};
}

// Rows [E·R/step] from row_begin with row_step, repacked and decoded, against want [E, G·32, R/step].
int mismatches(const Golden& g, int64_t row_begin, int64_t row_step, const std::vector<uint32_t>& want) {
  const int64_t rows_per_e = g.R / row_step, k = g.G * 32, total_rows = g.E * rows_per_e;
  std::vector<BlockMXFP4> q(size_t(total_rows * g.G));
  // Whole-tensor rows: [E·R] with gate/up interleaved inside each expert (R even), so a step over
  // the flattened rows picks the same rows of every expert.
  mxfp4_from_hf(g.blocks.data(), g.scales.data(), g.G, row_begin, row_step, total_rows, q.data());
  std::vector<float> row(static_cast<size_t>(k));
  int bad = 0;
  for (int64_t r = 0; r < total_rows; ++r) {
    dequantize_row(DType::MXFP4, q.data() + r * g.G, row.data(), k);
    const int64_t e = r / rows_per_e, o = r % rows_per_e;
    for (int64_t i = 0; i < k; ++i) {
      const float w = from_bits(want[size_t((e * k + i) * rows_per_e + o)]);
      if (!(row[size_t(i)] == w) && ++bad <= 5)
        ADD_FAILURE() << "expert " << e << " row " << o << " input " << i << ": got " << row[size_t(i)] << " want " << w;
    }
  }
  return bad;
}

TEST(Mxfp4Hf, RepackMatchesTransformersDequant) {
  const Golden g = load();
  ASSERT_EQ(g.blocks.size(), size_t(g.E * g.R * g.G * 16));
  EXPECT_EQ(mismatches(g, 0, 1, g.dequant), 0);
}

TEST(Mxfp4Hf, GateAndUpAreEvenAndOddRows) {
  const Golden g = load();
  EXPECT_EQ(mismatches(g, 0, 2, g.gate), 0);
  EXPECT_EQ(mismatches(g, 1, 2, g.up), 0);
}

}  // namespace
}  // namespace oxyd
