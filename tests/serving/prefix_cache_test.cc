// Prefix caching on a real model: requests that share a long prompt prefix with an earlier one
// report num_cached_tokens > 0, their tokens equal those of an engine with prefix caching off
// (which computes every prompt token), and once all finish no KV block is held.
#include "serving_util.h"

namespace oxyd::engine::test {
namespace {

class PrefixCache : public ::testing::TestWithParam<const char*> {};

TEST_P(PrefixCache, HitsGiveSameTokensAsNoCache) {
  const std::string fam = GetParam();
  const Golden g = load_golden(fam);
  // Prompt 2 (40 tokens): its first 32 tokens shared, then a distinct tail per request.
  const std::vector<int32_t> prefix(g.prompts[2].begin(), g.prompts[2].begin() + 32);
  std::vector<GenerationParams> ps;
  for (int i = 0; i < 5; ++i) {
    std::vector<int32_t> p = prefix;
    for (int k = 0; k <= i; ++k) p.push_back(g.prompts[0][size_t(k + i)]);
    ps.push_back(greedy_params(p, 16));
  }
  ModelOptions off = tiny_options();
  off.enable_prefix_caching = false;
  auto m_off = LLMEngine::create(fam, arch_dir(fam), off);
  std::vector<Result> expect;
  for (auto& p : ps) expect.push_back(run_one(*m_off, p));

  auto m = LLMEngine::create(fam, arch_dir(fam), tiny_options());
  const Result first = run_one(*m, greedy_params(g.prompts[2], 32));  // fills the cache with the prefix
  EXPECT_EQ(first.tokens, g.greedy[2]);
  EXPECT_EQ(first.num_cached_tokens, 0);
  const auto rs = run_batch(*m, ps);
  for (size_t i = 0; i < ps.size(); ++i) {
    EXPECT_EQ(rs[i].tokens, expect[i].tokens) << "request " << i;
    EXPECT_GE(rs[i].num_cached_tokens, 28) << "request " << i;  // the 32-token prefix, in 4-token blocks
    EXPECT_EQ(expect[i].num_cached_tokens, 0);
  }
  // The same prompt again: everything but the last token's block comes from the cache.
  const Result again = run_one(*m, greedy_params(g.prompts[2], 32));
  EXPECT_EQ(again.tokens, g.greedy[2]);
  EXPECT_GE(again.num_cached_tokens, 36);
  const engine::EngineStats s = wait_idle(*m);
  EXPECT_EQ(s.kv_blocks_used, 0);
  EXPECT_GT(s.prefix_cache.num_hit_tokens, 0);
}

// gemma3 is hybrid (sliding + full layers): the block manager keeps every block.
INSTANTIATE_TEST_SUITE_P(Families, PrefixCache, ::testing::Values("llama", "gemma3", "qwen3"),
                         [](const auto& info) { return std::string(info.param); });

}  // namespace
}  // namespace oxyd::engine::test
