// ops::rope_frequencies against tests/data/rope/rope_goldens.json, which
// tools/gen_rope_goldens.py made by running transformers' ROPE_INIT_FUNCTIONS (and Phi3's
// compute_default_rope_parameters) on every rope type; plus the errors for missing fields.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "ops/rope_scaling.h"

namespace oxyd::test {
namespace {

using nlohmann::json;
using ops::RopeScaling;

RopeScaling scaling_from(const json& c) {
  const json& p = c["params"];
  RopeScaling s;
  s.rope_type = *ops::rope_type_from_name(p["rope_type"].get<std::string>());
  s.rope_theta = p["rope_theta"].get<double>();
  s.max_position_embeddings = c["max_position_embeddings"].get<int64_t>();
  auto opt = [&](const char* k, std::optional<double>& dst) {
    if (p.contains(k)) dst = p[k].get<double>();
  };
  opt("factor", s.factor), opt("beta_fast", s.beta_fast), opt("beta_slow", s.beta_slow);
  opt("mscale", s.mscale), opt("mscale_all_dim", s.mscale_all_dim), opt("attention_factor", s.attention_factor);
  s.partial_rotary_factor = p.value("partial_rotary_factor", 1.0);
  s.low_freq_factor = p.value("low_freq_factor", 1.0);
  s.high_freq_factor = p.value("high_freq_factor", 4.0);
  s.original_max_position_embeddings = p.value("original_max_position_embeddings", int64_t(0));
  s.truncate = p.value("truncate", true);
  if (p.contains("short_factor")) s.short_factor = p["short_factor"].get<std::vector<double>>();
  if (p.contains("long_factor")) s.long_factor = p["long_factor"].get<std::vector<double>>();
  return s;
}

TEST(RopeScaling, MatchesTransformersGoldens) {
  std::ifstream in(std::string(OXYD_SOURCE_DIR) + "/tests/data/rope/rope_goldens.json");
  ASSERT_TRUE(in) << "missing tests/data/rope/rope_goldens.json";
  const json doc = json::parse(in);
  ASSERT_GE(doc["cases"].size(), 15u);
  for (const json& c : doc["cases"]) {
    SCOPED_TRACE(c["name"].get<std::string>());
    const auto want = c["inv_freq"].get<std::vector<double>>();
    const ops::RopeFrequencies got =
        ops::rope_frequencies(scaling_from(c), c["head_dim"].get<int64_t>(), c["seq_len"].get<int64_t>());
    ASSERT_EQ(got.inv_freq.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i)
      EXPECT_NEAR(got.inv_freq[i], want[i], 4e-6 * std::fabs(want[i]) + 1e-30) << "pair " << i;
    EXPECT_NEAR(got.attention_factor, c["attention_factor"].get<double>(), 1e-6);
  }
}

TEST(RopeScaling, RotDimFollowsPartialFactor) {
  RopeScaling s;
  s.partial_rotary_factor = 0.25;
  EXPECT_EQ(ops::rope_frequencies(s, 256).rot_dim(), 64);
  s.rope_type = ops::RopeType::PROPORTIONAL;  // proportional always spans head_dim
  EXPECT_EQ(ops::rope_frequencies(s, 256).rot_dim(), 256);
}

TEST(RopeScaling, MissingOrBadFieldsAreErrors) {
  auto expect_invalid = [](const RopeScaling& s, int64_t head_dim, const char* needle) {
    try {
      ops::rope_frequencies(s, head_dim);
      ADD_FAILURE() << "expected an error mentioning " << needle;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::INVALID_ARGUMENT);
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  RopeScaling linear;
  linear.rope_type = ops::RopeType::LINEAR;
  expect_invalid(linear, 64, "factor");
  RopeScaling longrope;
  longrope.rope_type = ops::RopeType::LONGROPE;
  longrope.max_position_embeddings = 8192;
  longrope.original_max_position_embeddings = 4096;
  longrope.short_factor.assign(10, 1.0);
  expect_invalid(longrope, 64, "short_factor");
  RopeScaling odd;
  odd.partial_rotary_factor = 0.3;  // int(64 · 0.3) = 19
  expect_invalid(odd, 64, "even");
  RopeScaling dynamic;
  dynamic.rope_type = ops::RopeType::DYNAMIC;
  dynamic.factor = 2.0;
  expect_invalid(dynamic, 64, "max_position_embeddings");
  EXPECT_FALSE(ops::rope_type_from_name("su").has_value());
}

}  // namespace
}  // namespace oxyd::test
