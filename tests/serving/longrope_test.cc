// Phi-3 longrope with original_max_position_embeddings (64) below max_position_embeddings (1024),
// as Phi-3.5-mini and Phi-4-mini ship (issue 21 §5.3), against transformers float64
// (tests/data/archs/phi3_longrope, tools/gen_longrope_goldens.py; the weights are the tiny phi3's):
// prompt logprobs of a 19-token prompt (short factors) and a 100-token one (long factors), and 32
// greedy tokens for prompts that stay short and start long (one that crosses 64 tokens while
// generating is compared up to the switch: see comparable()).
// Before the fix the long factors were used at every length: 22 nats off on the short prompt.
#include <algorithm>
#include <cmath>

#include "serving_util.h"

namespace oxyd::server::test {
namespace {

namespace fs = std::filesystem;

fs::path make_longrope_model() {
  const fs::path dir = fs::temp_directory_path() / ("oxyd_longrope_" + std::to_string(getpid()));
  fs::create_directories(dir);
  const fs::path phi3 = arch_dir("phi3"), lr = arch_dir("phi3_longrope");
  for (const char* f : {"model.safetensors", "tokenizer.json", "tokenizer_config.json", "generation_config.json"})
    fs::copy_file(phi3 / f, dir / f, fs::copy_options::overwrite_existing);
  fs::copy_file(lr / "config.json", dir / "config.json", fs::copy_options::overwrite_existing);
  return dir;
}

class Longrope : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = make_longrope_model();
    ModelOptions o = tiny_options();
    o.max_context_len = 1024;
    model_ = LoadedModel::load("phi3-longrope", dir_.string(), o).release();
    std::ifstream f(arch_dir("phi3_longrope") + "/goldens.json");
    golden_ = nlohmann::json::parse(f);
  }
  static void TearDownTestSuite() {
    delete model_;
    fs::remove_all(dir_);
  }
  static inline fs::path dir_;
  static inline LoadedModel* model_ = nullptr;
  static inline nlohmann::json golden_;
};

TEST_F(Longrope, PromptLogprobsMatchTransformers) {
  const auto prompts = golden_["prompts"].get<std::vector<std::vector<int32_t>>>();
  const auto want = golden_["prompt_logprobs"].get<std::vector<std::vector<double>>>();
  ASSERT_LT(prompts.front().size(), 64u);  // one prompt on each side of the switch
  ASSERT_GT(prompts.back().size(), 64u);
  for (size_t p = 0; p < prompts.size(); ++p) {
    GenerationParams gp = greedy_params(prompts[p], 1);
    gp.prompt_logprobs = 0;
    Generation g(*model_, gp, 0);
    GenerationChunk c;
    ASSERT_EQ(g.next(c), Generation::Next::CHUNK);
    ASSERT_EQ(c.prompt_logprobs.size(), want[p].size()) << "prompt " << p;
    double worst = 0;
    for (size_t i = 0; i < want[p].size(); ++i) {
      EXPECT_EQ(c.prompt_logprobs[i].token, prompts[p][i + 1]);
      worst = std::max(worst, std::abs(double(c.prompt_logprobs[i].logprob) - want[p][i]));
    }
    EXPECT_LT(worst, 2e-3) << "prompt " << p << " (" << prompts[p].size() << " tokens)";
  }
}

// The tokens to compare: all of them for a prompt that stays on one side; for prompt 1 (40 tokens)
// those produced before the sequence passes 64 tokens. There transformers' Phi-3 drops its cache
// and recomputes every key with the long factors (Phi3ForCausalLM.prepare_inputs_for_generation);
// the engine keeps the keys it cached with the short factors, so later tokens may differ (they do
// from token 25 here). Known gap, issue 21 §5.3.
size_t comparable(const std::vector<int32_t>& prompt, size_t n) {
  if (prompt.size() > 64 || prompt.size() + n <= 64) return n;
  return 64 - prompt.size() + 1;  // tokens sampled from sequences of at most 64 tokens
}

TEST_F(Longrope, GreedyMatchesTransformersOnEachSideOfTheSwitch) {
  const auto prompts = golden_["prompts"].get<std::vector<std::vector<int32_t>>>();
  const auto greedy = golden_["greedy"].get<std::vector<std::vector<int32_t>>>();
  auto head = [](const std::vector<int32_t>& v, size_t n) { return std::vector<int32_t>(v.begin(), v.begin() + long(n)); };
  for (size_t p = 0; p < prompts.size(); ++p) {
    const Result r = run_one(*model_, greedy_params(prompts[p], int32_t(greedy[p].size())));
    const size_t n = comparable(prompts[p], greedy[p].size());
    ASSERT_EQ(r.tokens.size(), greedy[p].size());
    EXPECT_EQ(head(r.tokens, n), head(greedy[p], n)) << "prompt " << p << " (" << prompts[p].size() << " tokens)";
  }
  // Batched (one step holds sequences on both sides of the switch): the same tokens.
  std::vector<GenerationParams> ps;
  for (size_t p = 0; p < prompts.size(); ++p) ps.push_back(greedy_params(prompts[p], int32_t(greedy[p].size())));
  const auto rs = run_batch(*model_, ps);
  for (size_t p = 0; p < prompts.size(); ++p) {
    const size_t n = comparable(prompts[p], greedy[p].size());
    EXPECT_EQ(head(rs[p].tokens, n), head(greedy[p], n)) << "batched prompt " << p;
  }
}

}  // namespace
}  // namespace oxyd::server::test
