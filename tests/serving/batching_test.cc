// Batching invariance on real tiny models: a greedy request gives the transformers golden tokens
// whether it runs alone or among 15 other requests with different prompts and lengths (continuous
// batching: requests join while others decode, so steps mix prefill chunks and decode tokens),
// and when every prompt is split into small chunks (max_num_batched_tokens far below the prompt).
#include <random>

#include "serving_util.h"

namespace oxyd::engine::test {
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
  auto m = LLMEngine::create(fam, arch_dir(fam), tiny_options());
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
  auto m = LLMEngine::create(fam, arch_dir(fam), o);
  std::vector<GenerationParams> ps;
  for (size_t p = 0; p < g.prompts.size(); ++p) ps.push_back(greedy_params(g.prompts[p], 32));
  const auto rs = run_batch(*m, ps);
  for (size_t p = 0; p < g.prompts.size(); ++p) EXPECT_EQ(rs[p].tokens, g.greedy[p]) << "prompt " << p;
  EXPECT_GT(m->stats().num_prompt_tokens_computed, 0);
}

// A pool of 48 blocks (192 tokens) for 16 requests: the scheduler preempts the newest requests and
// recomputes their prompt + output later; their tokens still equal the alone run. (Mistral, every
// layer sliding with window 8, frees blocks as it goes and needs no preemption.)
TEST_P(Batching, PreemptionUnderSmallPoolEqualsAlone) {
  const std::string fam = GetParam();
  const Golden g = load_golden(fam);
  auto big = LLMEngine::create(fam, arch_dir(fam), tiny_options());
  const auto ps = mixed_requests(g);
  std::vector<Result> alone;
  for (auto& p : ps) alone.push_back(run_one(*big, p));
  const loader::ModelConfig& c = big->config();
  ModelOptions o = tiny_options();
  o.kv_cache_bytes = 2 * c.num_hidden_layers * c.num_key_value_heads * c.head_dim * 4 * 4 * 48;
  o.max_num_seqs = 16;
  auto m = LLMEngine::create(fam, arch_dir(fam), o);
  ASSERT_EQ(m->stats().kv_blocks_total, 48);
  const auto rs = run_batch(*m, ps);
  for (size_t i = 0; i < ps.size(); ++i) EXPECT_EQ(rs[i].tokens, alone[i].tokens) << "request " << i;
  const engine::EngineStats s = wait_idle(*m);
  if (fam != "mistral") {  // mistral slides: old blocks free up instead
    EXPECT_GT(s.num_preemptions, 0);
  }
  EXPECT_EQ(s.kv_blocks_used, 0);
}

// With max_num_seqs left to auto, short requests are limited by the pool's blocks, not by a fixed
// count: the auto pool holds 64 sequences of 256 tokens (more than one 128-token context here),
// so 48 requests of 8 + 16 tokens all run together, and each still gives its alone tokens at that batch size.
TEST(BatchingAuto, FortyEightShortRequestsRunTogether) {
  const Golden g = load_golden("llama");
  auto m = LLMEngine::create("llama", arch_dir("llama"), tiny_options());
  ASSERT_GE(m->max_num_seqs(), 48);
  std::vector<GenerationParams> ps;
  for (int i = 0; i < 48; ++i) {
    std::vector<int32_t> prompt = g.prompts[size_t(i) % g.prompts.size()];
    prompt.resize(8);
    std::rotate(prompt.begin(), prompt.begin() + i % 8, prompt.end());
    GenerationParams p = greedy_params(prompt, 16);
    p.ignore_eos = true;
    ps.push_back(std::move(p));
  }
  std::vector<Result> alone;
  for (auto& p : ps) alone.push_back(run_one(*m, p));
  const auto rs = run_batch(*m, ps);
  for (size_t i = 0; i < ps.size(); ++i) {
    EXPECT_EQ(rs[i].tokens, alone[i].tokens) << "request " << i;
    EXPECT_EQ(rs[i].tokens.size(), 16u) << "request " << i;
  }
  const engine::EngineStats s = wait_idle(*m);
  EXPECT_EQ(s.num_preemptions, 0);
  EXPECT_EQ(s.kv_blocks_used, 0);
}

INSTANTIATE_TEST_SUITE_P(Families, Batching, ::testing::Values("llama", "gemma3", "qwen3", "mistral"),
                         [](const auto& info) { return std::string(info.param); });

}  // namespace
}  // namespace oxyd::engine::test
