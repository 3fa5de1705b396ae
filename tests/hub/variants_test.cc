// Variant rules of `pull` (FEATURES-REFERENCE §1.13): quant labels from file names, split-shard
// grouping, the default and its fallbacks in order, the safetensors variant's file set, and the
// checks that keep hub-supplied names from escaping the store.
#include <gtest/gtest.h>

#include "hub/pull.h"
#include "hub/variants.h"
#include "hub_test_util.h"

namespace oxyd::hub {
namespace {

using testing::expect_error;

RepoInfo repo(std::vector<std::pair<std::string, int64_t>> files) {
  RepoInfo r;
  r.id = "ns/repo";
  for (auto& [p, s] : files) r.files.push_back({p, s, "", ""});
  return r;
}

std::vector<std::string> labels(const std::vector<Variant>& vs) {
  std::vector<std::string> out;
  for (const auto& v : vs) out.push_back(v.label);
  return out;
}

TEST(QuantLabel, FromFileNames) {
  EXPECT_EQ(quant_label_from_filename("qwen3-4b-q4_k_m.gguf"), "Q4_K_M");
  EXPECT_EQ(quant_label_from_filename("Qwen3-4B-Q4_K_M.gguf"), "Q4_K_M");
  EXPECT_EQ(quant_label_from_filename("model.Q4_K.gguf"), "Q4_K");
  EXPECT_EQ(quant_label_from_filename("Qwen3-4B-UD-Q4_K_XL.gguf"), "Q4_K_XL");
  EXPECT_EQ(quant_label_from_filename("gemma-3-270m-it-IQ4_XS.gguf"), "IQ4_XS");
  EXPECT_EQ(quant_label_from_filename("sub/Llama-3-8B-IQ2_XXS-00001-of-00002.gguf"), "IQ2_XXS");
  EXPECT_EQ(quant_label_from_filename("phi-4-f16.gguf"), "F16");
  EXPECT_EQ(quant_label_from_filename("phi-4-bf16.gguf"), "BF16");
  EXPECT_EQ(quant_label_from_filename("gpt-oss-20b-MXFP4.gguf"), "MXFP4");
  EXPECT_EQ(quant_label_from_filename("model.gguf"), "");
  // A token must stand alone: "Q4_0" inside "XQ4_0Y" is not a label.
  EXPECT_EQ(quant_label_from_filename("XQ4_0Y.gguf"), "");
}

TEST(GgufShard, ParsesSplitNames) {
  auto s = parse_gguf_shard("dir/Big-Q4_K_M-00002-of-00003.gguf");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->base, "dir/Big-Q4_K_M");
  EXPECT_EQ(s->index, 2);
  EXPECT_EQ(s->count, 3);
  EXPECT_FALSE(parse_gguf_shard("Big-Q4_K_M.gguf"));
  EXPECT_FALSE(parse_gguf_shard("Big-00004-of-00003.gguf"));
  EXPECT_FALSE(parse_gguf_shard("Big-0001-of-00003.gguf"));
}

TEST(Variants, GroupsShardsAndSortsBySize) {
  auto vs = list_variants(repo({{"README.md", 10},
                                {"m-Q8_0.gguf", 800},
                                {"m-Q4_K_M-00002-of-00002.gguf", 300},
                                {"m-Q4_K_M-00001-of-00002.gguf", 200},
                                {"m-Q2_K.gguf", 250},
                                {"mmproj-m-f16.gguf", 90},
                                {"imatrix.dat", 5}}));
  EXPECT_EQ(labels(vs), (std::vector<std::string>{"Q2_K", "Q4_K_M", "Q8_0"}));
  const Variant& q4 = vs[1];
  ASSERT_EQ(q4.files.size(), 2u);
  EXPECT_EQ(q4.files[0].path, "m-Q4_K_M-00001-of-00002.gguf");  // shard order
  EXPECT_EQ(q4.weight_bytes, 500);
  EXPECT_EQ(q4.stem, "m-Q4_K_M");
  EXPECT_TRUE(q4.problem.empty());
}

TEST(Variants, MissingShardIsFlaggedAndNeverDefault) {
  auto vs = list_variants(repo({{"m-Q4_K_M-00001-of-00003.gguf", 100},
                                {"m-Q4_K_M-00003-of-00003.gguf", 100},
                                {"m-Q5_K_M.gguf", 900}}));
  ASSERT_EQ(vs.size(), 2u);
  int q4 = find_variant(vs, "q4_k_m");
  ASSERT_GE(q4, 0);
  EXPECT_EQ(vs[q4].problem, "shard 2 of 3 missing");
  EXPECT_EQ(vs[default_variant(vs)].label, "Q5_K_M");
}

TEST(Variants, UnsupportedQuantsAreFlaggedAndNeverDefault) {
  auto vs = list_variants(repo({{"m-IQ2_XXS.gguf", 100},
                                {"m-IQ3_M.gguf", 150},
                                {"m-TQ2_0.gguf", 120},
                                {"m-IQ4_XS.gguf", 200},
                                {"m-Q2_K.gguf", 180}}));
  flag_unsupported_quants(vs);
  for (const char* bad : {"IQ2_XXS", "IQ3_M", "TQ2_0"}) {
    const int i = find_variant(vs, bad);
    ASSERT_GE(i, 0) << bad;
    EXPECT_NE(vs[size_t(i)].problem.find("not supported"), std::string::npos) << bad;
  }
  for (const char* good : {"IQ4_XS", "Q2_K"}) EXPECT_TRUE(vs[size_t(find_variant(vs, good))].problem.empty()) << good;
  EXPECT_EQ(vs[size_t(default_variant(vs))].label, "IQ4_XS");
}

TEST(Variants, DefaultIsQ4KMThenFallbacksInOrder) {
  // oxydLLM's order: Q4_K_M, then Q4_K_S, Q4_K, Q4_0, Q4_1, IQ4_NL, IQ4_XS, Q5_K_M.
  std::vector<std::string> order = {"Q4_K_M", "Q4_K_S", "Q4_K", "Q4_0", "Q4_1", "IQ4_NL", "IQ4_XS", "Q5_K_M"};
  for (size_t drop = 0; drop < order.size(); ++drop) {
    std::vector<std::pair<std::string, int64_t>> files = {{"x-Q2_K.gguf", 10}, {"x-Q8_0.gguf", 9000}};
    // Sizes chosen so that size order disagrees with preference order.
    for (size_t i = drop; i < order.size(); ++i) files.push_back({"x-" + order[i] + ".gguf", int64_t(1000 - i)});
    auto vs = list_variants(repo(files));
    EXPECT_EQ(vs[default_variant(vs)].label, order[drop]) << "after dropping the first " << drop;
  }
}

TEST(Variants, DefaultBeyondOxydLLMList) {
  // None of the list: the smallest GGUF of ≥4-bit quality, not Q2/Q3.
  auto vs = list_variants(repo({{"x-Q2_K.gguf", 10}, {"x-Q3_K_M.gguf", 20}, {"x-Q8_0.gguf", 90}, {"x-Q6_K.gguf", 60}}));
  EXPECT_EQ(vs[default_variant(vs)].label, "Q6_K");
  // Only low-bit GGUFs and safetensors: safetensors.
  vs = list_variants(repo({{"x-Q2_K.gguf", 10}, {"config.json", 1}, {"model.safetensors", 500}}));
  EXPECT_EQ(vs[default_variant(vs)].label, "safetensors");
  // Only low-bit GGUFs: the smallest usable one.
  vs = list_variants(repo({{"x-Q3_K_M.gguf", 20}, {"x-Q2_K.gguf", 10}}));
  EXPECT_EQ(vs[default_variant(vs)].label, "Q2_K");
  EXPECT_EQ(default_variant({}), -1);
}

TEST(Variants, SafetensorsTakesOnlyWhatTheModelNeeds) {
  auto vs = list_variants(repo({{"README.md", 1},
                                {".gitattributes", 1},
                                {"config.json", 1},
                                {"generation_config.json", 1},
                                {"tokenizer.json", 1},
                                {"tokenizer_config.json", 1},
                                {"chat_template.jinja", 1},
                                {"model.safetensors.index.json", 1},
                                {"model-00002-of-00002.safetensors", 100},
                                {"model-00001-of-00002.safetensors", 100},
                                {"consolidated.safetensors", 200},
                                {"pytorch_model.bin", 200},
                                {"original/params.json", 1},
                                {"onnx/model.onnx", 1}}));
  ASSERT_EQ(vs.size(), 1u);
  EXPECT_EQ(vs[0].label, "safetensors");
  std::vector<std::string> paths;
  for (const auto& f : vs[0].files) paths.push_back(f.path);
  EXPECT_EQ(paths, (std::vector<std::string>{"config.json", "generation_config.json", "tokenizer.json",
                                             "tokenizer_config.json", "chat_template.jinja",
                                             "model.safetensors.index.json", "model-00001-of-00002.safetensors",
                                             "model-00002-of-00002.safetensors"}));
  EXPECT_EQ(vs[0].weight_bytes, 200);
}

TEST(Variants, SafetensorsListedFirstAndFoundCaseInsensitively) {
  auto vs = list_variants(repo({{"config.json", 1}, {"model.safetensors", 900}, {"m-Q4_K_M.gguf", 100}}));
  EXPECT_EQ(labels(vs), (std::vector<std::string>{"safetensors", "Q4_K_M"}));
  EXPECT_EQ(find_variant(vs, "SafeTensors"), 0);
  EXPECT_EQ(find_variant(vs, "q4_k_m"), 1);
  EXPECT_EQ(find_variant(vs, "m-q4_k_m"), 1);  // the stem works too
  EXPECT_EQ(find_variant(vs, "Q8_0"), -1);
}

TEST(Variants, TwoGroupsWithOneQuantAreLabelledByPath) {
  auto vs = list_variants(repo({{"a/m-Q4_K_M.gguf", 10}, {"b/m-Q4_K_M.gguf", 20}}));
  EXPECT_EQ(labels(vs), (std::vector<std::string>{"a/m-Q4_K_M", "b/m-Q4_K_M"}));
}

TEST(RepoPaths, HostileNamesAreRejected) {
  for (std::string bad : {"../evil.gguf", "/etc/passwd", "a/../../b.gguf", "a\\b.gguf", "./x.gguf", "a//b.gguf", ""})
    expect_error([&] { check_repo_file_path(bad); }, ErrorCode::INVALID_ARGUMENT, {"not a safe relative path"});
  check_repo_file_path("sub/dir/model-Q4_K_M.gguf");
}

TEST(RepoIds, Validated) {
  check_repo_id("Qwen/Qwen3-4B-GGUF");
  check_repo_id("unsloth/gemma-3-270m-it-GGUF");
  for (std::string bad : {"Qwen", "a/b/c", "../x", "a/..", "/abs", "a/b c", "a/.hidden", "a/b-"})
    expect_error([&] { check_repo_id(bad); }, ErrorCode::INVALID_ARGUMENT, {"not a Hugging Face repo id"});
}

TEST(VariantTable, MarksRecommendedAndPresent) {
  auto vs = list_variants(repo({{"m-Q4_K_M.gguf", 2048}, {"m-Q8_0.gguf", 4096}}));
  std::string t = variant_table(vs, 0, {false, true});
  EXPECT_NE(t.find("Format"), std::string::npos);
  EXPECT_NE(t.find("1  Q4_K_M"), std::string::npos);
  EXPECT_NE(t.find("2.00 KiB"), std::string::npos);
  EXPECT_NE(t.find("★ recommended"), std::string::npos);
  EXPECT_NE(t.find("✓ in store"), std::string::npos);
  EXPECT_EQ(t.find("Accuracy"), std::string::npos);  // no invented accuracy column
}

}  // namespace
}  // namespace oxyd::hub
