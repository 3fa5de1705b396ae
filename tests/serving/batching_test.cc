// Batching invariance on real tiny models: a greedy request gives the transformers golden tokens
// whether it runs alone or among 15 other requests with different prompts and lengths (continuous
// batching: requests join while others decode, so steps mix prefill chunks and decode tokens),
// and when every prompt is split into small chunks (max_num_batched_tokens far below the prompt).
#include <random>

#include "serving_util.h"

namespace oxyd::server::test {
namespace {

// 16 requests: the 3 golden prompts plus 13 others cut from them (distinct lengths, rotated ids).
std::vector<GenerationParams> mixed_requests(const Golden& g) {
  std::vector<GenerationParams> ps;
  for (size_t p = 0; p < g.prompts.size(); ++p) ps.push_back(greedy_params(g.prompts[p], 32));
  std::mt19937 rng(7);
  for (int i = 0; ps.size() < 16; ++i) {
    std::vector<int32_t> prompt = g.prompts[size_t(i) % g.prompts.size()];
    prompt.resize(size_t(3 + (i * 5) % 30));
    std::rotate(prompt.begin(), prompt.begin() + i % int(prompt.size()), prompt.end());
    ps.push_back(greedy_params(prompt, 8 + int32_t(rng() % 40)));
  }
  return ps;
}

class Batching : public ::testing::TestWithParam<const char*> {};

TEST_P(Batching, SixteenConcurrentEqualAlone) {
  const std::string fam = GetParam();
  const Golden g = load_golden(fam);
  auto m = LoadedModel::load(fam, arch_dir(fam), tiny_options());
  ASSERT_GE(m->max_num_seqs(), 16);
  const auto ps = mixed_requests(g);
  std::vector<Result> alone;
  for (auto& p : ps) alone.push_back(run_one(*m, p));
  for (size_t p = 0; p < g.prompts.size(); ++p) EXPECT_EQ(alone[p].tokens, g.greedy[p]) << "prompt " << p;

  // Staggered: half start, the first token of one is read, then the other half joins mid-decode.
  std::vector<std::unique_ptr<Generation>> gens;
  for (size_t i = 0; i < ps.size(); ++i) {
    gens.push_back(std::make_unique<Generation>(*m, ps[i], 0));
    if (i == 7) {
      GenerationChunk c;
      ASSERT_EQ(gens[0]->next(c), Generation::Next::CHUNK);
      alone[0].tokens.erase(alone[0].tokens.begin());  // already read from gens[0]
    }
  }
  for (size_t i = 0; i < ps.size(); ++i) EXPECT_EQ(drain(*gens[i]).tokens, alone[i].tokens) << "request " << i;
  EXPECT_EQ(wait_idle(*m).kv_blocks_used, 0);
}

TEST_P(Batching, ChunkedPrefillEqualsGolden) {
  const std::string fam = GetParam();
  const Golden g = load_golden(fam);
  ModelOptions o = tiny_options();
  o.max_num_batched_tokens = 7;  // prompts of 20–40 tokens arrive in chunks of ≤ 7 tokens
  o.enable_prefix_caching = false;
  auto m = LoadedModel::load(fam, arch_dir(fam), o);
  std::vector<GenerationParams> ps;
  for (size_t p = 0; p < g.prompts.size(); ++p) ps.push_back(greedy_params(g.prompts[p], 32));
  const auto rs = run_batch(*m, ps);
  for (size_t p = 0; p < g.prompts.size(); ++p) EXPECT_EQ(rs[p].tokens, g.greedy[p]) << "prompt " << p;
  EXPECT_GT(m->engine().stats().num_prompt_tokens_computed, 0);
}

INSTANTIATE_TEST_SUITE_P(Families, Batching, ::testing::Values("llama", "gemma3", "qwen3", "mistral"),
                         [](const auto& info) { return std::string(info.param); });

}  // namespace
}  // namespace oxyd::server::test
