// KvQuantizer against the independent numpy oracle tools/kv_quant_oracle.py (its golden
// tests/data/kv_quant/golden.json): the Lloyd-Max levels (numerical integration there, closed-form
// conditional means here; agree to 1e-8), the sign vector, the packed rows byte for byte, and the
// reconstructed vectors to 1e-6 × max(1, |value|) (float32 here) — for head_dim 64 and 128 (Walsh–Hadamard) and 80
// (sign-only), 2/3/4 bits and the uniform 5, 6 and 8 bits.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <vector>

#include "core/kv_quant.h"

namespace oxyd {
namespace {

nlohmann::json golden() {
  std::ifstream f(std::string(OXYD_SOURCE_DIR) + "/tests/data/kv_quant/golden.json");
  return nlohmann::json::parse(f);
}

TEST(KvQuant, LevelsAndSignsMatchTheOracle) {
  const auto g = golden();
  for (int b : {2, 3, 4}) {
    const auto want = g["levels"][std::to_string(b)].get<std::vector<double>>();
    const auto& got = lloyd_max_normal_centroids(b);
    ASSERT_EQ(got.size(), want.size());
    for (size_t k = 0; k < want.size(); ++k) EXPECT_NEAR(got[k], want[k], 1e-8) << b << "-bit level " << k;
  }
  for (int d : {64, 128, 80}) {
    const auto want = g["signs"][std::to_string(d)].get<std::vector<int>>();
    const auto& got = kv_quantizer(d, 4).signs();
    for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(got[i], float(want[i])) << "d " << d << " i " << i;
  }
}

TEST(KvQuant, RowsAndReconstructionMatchTheOracle) {
  const auto g = golden();
  ASSERT_EQ(g["cases"].size(), 54u);  // 2, 3, 4 bits (Lloyd-Max), 5, 6, 8 bits (uniform), at d 64, 128, 80
  for (const auto& c : g["cases"]) {
    const int64_t d = c["head_dim"];
    const int b = c["bits"];
    SCOPED_TRACE("head_dim " + std::to_string(d) + ", " + std::to_string(b) + " bits");
    const auto x = c["x"].get<std::vector<float>>();
    const auto packed = c["packed"].get<std::vector<int>>();
    const auto recon = c["recon"].get<std::vector<double>>();
    const KvQuantizer& q = kv_quantizer(d, b);
    ASSERT_EQ(q.row_bytes(), int64_t(packed.size()));
    std::vector<uint8_t> row(static_cast<size_t>(q.row_bytes()));
    q.quantize(x.data(), row.data());
    float norm;
    std::memcpy(&norm, row.data(), 4);
    EXPECT_NEAR(norm, c["norm"].get<double>(), 1e-6 * norm);
    for (size_t i = 4; i < packed.size(); ++i) EXPECT_EQ(int(row[i]), packed[i]) << "code byte " << i - 4;
    std::vector<float> out(static_cast<size_t>(d));
    q.dequantize(row.data(), out.data());
    for (int64_t i = 0; i < d; ++i) EXPECT_NEAR(out[size_t(i)], recon[size_t(i)], 1e-6 * std::max(1.0, std::abs(recon[size_t(i)]))) << "value " << i;
  }
}

// The rotation is orthonormal (Rᵀ R = I), and the rotated read is R of the reconstruction.
TEST(KvQuant, RotationIsOrthonormalAndRotatedReadAgrees) {
  std::mt19937 rng(7);
  std::normal_distribution<float> n01;
  for (int64_t d : {64, 80, 256}) {
    const KvQuantizer& q = kv_quantizer(d, 3);
    std::vector<float> x(static_cast<size_t>(d)), y(static_cast<size_t>(d)), back(static_cast<size_t>(d)), rx(static_cast<size_t>(d)), rot(static_cast<size_t>(d));
    for (float& v : x) v = n01(rng);
    q.rotate(x.data(), y.data());
    q.unrotate(y.data(), back.data());
    double nx = 0, ny = 0;
    for (int64_t i = 0; i < d; ++i) {
      EXPECT_NEAR(back[size_t(i)], x[size_t(i)], 1e-5);
      nx += double(x[size_t(i)]) * x[size_t(i)], ny += double(y[size_t(i)]) * y[size_t(i)];
    }
    EXPECT_NEAR(nx, ny, 1e-4 * nx);
    std::vector<uint8_t> row(static_cast<size_t>(q.row_bytes()));
    q.quantize(x.data(), row.data());
    q.dequantize(row.data(), rx.data());
    q.dequantize_rotated(row.data(), rot.data());
    q.rotate(rx.data(), y.data());
    for (int64_t i = 0; i < d; ++i) EXPECT_NEAR(rot[size_t(i)], y[size_t(i)], 1e-5);
  }
}

// A zero vector (e.g. a padded head) stores norm 0 and reads back as zeros, not NaN.
TEST(KvQuant, ZeroVectorReadsZero) {
  const KvQuantizer& q = kv_quantizer(64, 2);
  std::vector<float> x(64, 0.0f), out(64, 1.0f);
  std::vector<uint8_t> row(static_cast<size_t>(q.row_bytes()));
  q.quantize(x.data(), row.data());
  q.dequantize(row.data(), out.data());
  for (float v : out) EXPECT_EQ(v, 0.0f);
  EXPECT_EQ(kv_quant_row_bytes(80, 3), 4 + 30);
  EXPECT_EQ(kv_quant_row_bytes(128, 4), 4 + 64);
}

}  // namespace
}  // namespace oxyd
