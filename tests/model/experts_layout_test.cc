// model/experts_layout.h: gpt-oss's Hugging Face expert layouts rewritten into [gate | up] rows.
// Float path against the definition in transformers' GptOssExperts.forward (gate_up = x @ W[e]
// + b[e]; gate = gate_up[..., ::2], up = gate_up[..., 1::2]; out = y @ down[e]); MXFP4 path against
// transformers' own dequantizer (tests/data/quant/mxfp4_hf.json, tools/gen_mxfp4_hf_goldens.py).
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/quant.h"
#include "model/experts_layout.h"

namespace oxyd::model {
namespace {

TEST(ExpertsLayout, InputMajorMatchesGptOssForward) {
  const int64_t E = 3, H = 5, I = 4;
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> d(-1, 1);
  std::vector<float> gu(E * H * 2 * I), dn(E * I * H), bias(E * 2 * I), x(H), y(I);
  for (auto& v : gu) v = d(rng);
  for (auto& v : dn) v = d(rng);
  for (auto& v : bias) v = d(rng);
  for (auto& v : x) v = d(rng);
  for (auto& v : y) v = d(rng);
  std::vector<float> gu_out(E * 2 * I * H), dn_out(E * H * I), bg(E * I), bu(E * I);
  experts_gate_up_from_input_major(Tensor(DType::F32, gu.data(), {E, H, 2 * I}), gu_out.data());
  experts_down_from_input_major(Tensor(DType::F32, dn.data(), {E, I, H}), dn_out.data());
  experts_bias_split(Tensor(DType::F32, bias.data(), {E, 2 * I}), bg.data(), bu.data());
  for (int64_t e = 0; e < E; ++e) {
    for (int64_t c = 0; c < 2 * I; ++c) {  // (x @ W[e] + b[e])[c], c even → gate c/2, odd → up c/2
      double want = bias[e * 2 * I + c], got = (c % 2 ? bu : bg)[e * I + c / 2];
      for (int64_t h = 0; h < H; ++h) {
        want += double(x[h]) * gu[(e * H + h) * 2 * I + c];
        got += double(x[h]) * gu_out[(e * 2 * I + (c % 2 ? I : 0) + c / 2) * H + h];
      }
      EXPECT_NEAR(got, want, 1e-12) << "expert " << e << " column " << c;
    }
    for (int64_t h = 0; h < H; ++h) {  // (y @ down[e])[h]
      double want = 0, got = 0;
      for (int64_t i = 0; i < I; ++i) {
        want += double(y[i]) * dn[(e * I + i) * H + h];
        got += double(y[i]) * dn_out[(e * H + h) * I + i];
      }
      EXPECT_NEAR(got, want, 1e-12) << "expert " << e << " output " << h;
    }
  }
}

float from_bits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

TEST(ExpertsLayout, Mxfp4MatchesTransformersDequant) {
  std::ifstream f(std::filesystem::path(OXYD_TEST_DATA_DIR) / "quant/mxfp4_hf.json");
  const auto j = nlohmann::json::parse(f);
  const int64_t E = j["E"], R = j["R"], G = j["G"], K = G * 32, I = R / 2;
  std::vector<uint8_t> blocks = j["blocks"], scales = j["scales"];
  std::vector<uint32_t> gate = j["gate_bits"], up = j["up_bits"], all = j["dequant_bits"];
  const Tensor tb(DType::U8, blocks.data(), {E, R, G, 16}), ts(DType::U8, scales.data(), {E, R, G});
  std::vector<BlockMXFP4> q(static_cast<size_t>(E * R * G));
  std::vector<float> row(static_cast<size_t>(K));
  int bad = 0;
  // As gate_up: per expert I gate rows then I up rows, [E, K, I] bits from transformers.
  experts_gate_up_from_mxfp4(tb, ts, q.data());
  for (int64_t e = 0; e < E; ++e)
    for (int64_t r = 0; r < R; ++r) {
      dequantize_row(DType::MXFP4, q.data() + (e * R + r) * G, row.data(), K);
      const std::vector<uint32_t>& want = r < I ? gate : up;
      for (int64_t k = 0; k < K; ++k)
        if (!(row[size_t(k)] == from_bits(want[size_t((e * K + k) * I + r % I)]))) ++bad;
    }
  EXPECT_EQ(bad, 0) << "gate_up";
  // As down: [E, R, K] rows unchanged; transformers' [E, K, R] transposed.
  experts_down_from_mxfp4(tb, ts, q.data());
  bad = 0;
  for (int64_t e = 0; e < E; ++e)
    for (int64_t r = 0; r < R; ++r) {
      dequantize_row(DType::MXFP4, q.data() + (e * R + r) * G, row.data(), K);
      for (int64_t k = 0; k < K; ++k)
        if (!(row[size_t(k)] == from_bits(all[size_t((e * K + k) * R + r)]))) ++bad;
    }
  EXPECT_EQ(bad, 0) << "down";
}

}  // namespace
}  // namespace oxyd::model
