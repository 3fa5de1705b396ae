// Prefix caching on the hybrid tiny models (Gated DeltaNet linear_attention layers beside full
// attention): a hit resumes each request's recurrent state from the snapshot taken at the hit's last
// block. Oracle: the same engine with prefix caching off (every prompt token computed; its tokens
// equal the transformers goldens in golden_test). Hits end at block ends inside the CPU DeltaNet
// chunk (32 tokens), on a chunk end and past several; the hit is shown by num_cached_tokens and by
// the prompt tokens the engine actually computed.
#include "serving_util.h"

namespace oxyd::engine::test {
namespace {

// A 120-token stream of valid ids from the golden prompts (tiny vocab 320).
std::vector<int32_t> base_tokens(const Golden& g) {
  std::vector<int32_t> t;
  for (size_t i = 0; t.size() < 120; ++i) {
    const auto& p = g.prompts[i % g.prompts.size()];
    for (size_t k = 0; k < p.size() && t.size() < 120; ++k) t.push_back(p[(k + i) % p.size()]);
  }
  return t;
}

GenerationParams with_logprobs(std::vector<int32_t> prompt, int32_t max_tokens) {
  GenerationParams p = greedy_params(std::move(prompt), max_tokens);
  p.sampling.logprobs = 0;
  return p;
}

void expect_same(const Result& got, const Result& want, const std::string& what) {
  EXPECT_EQ(got.tokens, want.tokens) << what;
  ASSERT_EQ(got.logprobs.size(), want.logprobs.size()) << what;
  for (size_t i = 0; i < got.logprobs.size(); ++i)
    EXPECT_NEAR(got.logprobs[i], want.logprobs[i], 2e-4) << what << ", token " << i;
}

// Each test: the family, its prompt tokens, and the reference engine with the prefix cache off.
class HybridPrefixCache : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    fam = GetParam();
    base = base_tokens(load_golden(fam));
    ModelOptions o = tiny_options();
    o.enable_prefix_caching = false;
    off = LLMEngine::create(fam, arch_dir(fam), o);
  }
  std::string fam;
  std::vector<int32_t> base;
  std::unique_ptr<LLMEngine> off;
};

TEST_P(HybridPrefixCache, HitsResumeFromStateSnapshots) {
  auto on = LLMEngine::create(fam, arch_dir(fam), tiny_options());  // block_size 4

  // L: the shared prefix. 12 ends inside the first DeltaNet chunk, 40 inside the second, 64 on the
  // end of the second, 84 past it.
  int32_t prev_L = 0;
  for (const int32_t L : {12, 40, 64, 84}) {
    const std::string at = "prefix " + std::to_string(L);
    // A: prompt of L + 2 tokens; its prefill is cut at L (the last block end) so the state there
    // is kept, then its decode keeps one at every block end it reaches.
    std::vector<int32_t> pa(base.begin(), base.begin() + L + 2);
    const Result a = run_one(*on, with_logprobs(pa, 8));
    expect_same(a, run_one(*off, with_logprobs(pa, 8)), at + ", A");
    EXPECT_EQ(a.num_cached_tokens, prev_L) << at;  // the previous B's prompt ended its hit there
    prev_L = L;

    // B: the first L tokens, then a tail of its own: hit of exactly L tokens.
    std::vector<int32_t> pb(base.begin(), base.begin() + L);
    for (int k = 0; k < 5; ++k) pb.push_back(int32_t((pb[size_t(k)] * 7 + 11 + k) % 320));
    const int64_t on0 = wait_idle(*on).num_prompt_tokens_computed, off0 = wait_idle(*off).num_prompt_tokens_computed;
    const Result b = run_one(*on, with_logprobs(pb, 8));
    expect_same(b, run_one(*off, with_logprobs(pb, 8)), at + ", B");
    EXPECT_EQ(b.num_cached_tokens, L) << at;
    // The engine's count of prompt tokens it computed: L fewer than with caching off.
    EXPECT_EQ(wait_idle(*on).num_prompt_tokens_computed - on0, wait_idle(*off).num_prompt_tokens_computed - off0 - L)
        << at;

    // C: A's prompt and output (a follow-up turn) and one more token: hits the snapshot A's
    // decode took at its last block end, L + 8 (A computed L + 2 + 7 tokens).
    std::vector<int32_t> pc = pa;
    pc.insert(pc.end(), a.tokens.begin(), a.tokens.end());
    pc.push_back(int32_t(base[size_t(L) + 9]));
    const Result c = run_one(*on, with_logprobs(pc, 8));
    expect_same(c, run_one(*off, with_logprobs(pc, 8)), at + ", C");
    EXPECT_EQ(c.num_cached_tokens, L + 8) << at;
  }
  const EngineStats s = wait_idle(*on);
  EXPECT_GT(s.prefix_cache.num_state_snapshots, 0);
  EXPECT_EQ(s.kv_blocks_used, 0);
  EXPECT_EQ(wait_idle(*off).prefix_cache.num_hit_tokens, 0);
}

// A shared prompt prefix (a system prompt) of 50 tokens: the first request's prefill ends at its
// own last block end (56), so the second finds the prefix's 12 blocks cached without a snapshot and
// computes them, its first chunk cut at their end (48); from the third on, requests hit 48 tokens.
TEST_P(HybridPrefixCache, SharedPromptPrefixHitsFromTheThirdRequest) {
  auto on = LLMEngine::create(fam, arch_dir(fam), tiny_options());
  for (int i = 0; i < 4; ++i) {
    std::vector<int32_t> p(base.begin(), base.begin() + 50);
    for (int k = 0; k < 7 + i; ++k) p.push_back(base[size_t(60 + 11 * i + k)]);
    const Result r = run_one(*on, with_logprobs(p, 6));
    expect_same(r, run_one(*off, with_logprobs(p, 6)), "request " + std::to_string(i));
    EXPECT_EQ(r.num_cached_tokens, i < 2 ? 0 : 48) << "request " << i;
  }
}

// Prompt logprobs (echo) skip the lookup (every position's logits are needed) but run on an engine
// whose chunks are cut at block ends and whose cache holds snapshots: the same as caching off.
TEST_P(HybridPrefixCache, PromptLogprobsEqualCachingOff) {
  auto on = LLMEngine::create(fam, arch_dir(fam), tiny_options());
  std::vector<int32_t> p(base.begin(), base.begin() + 70);
  run_one(*on, greedy_params(std::vector<int32_t>(base.begin(), base.begin() + 66), 4));  // snapshots
  GenerationParams q = greedy_params(p, 4);
  q.prompt_logprobs = 1;
  Generation ga(*on, q, 0), gb(*off, q, 0);
  GenerationChunk ca, cb;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  ASSERT_EQ(ga.next(ca, deadline), Generation::Next::CHUNK);
  ASSERT_EQ(gb.next(cb, deadline), Generation::Next::CHUNK);
  ASSERT_EQ(ca.prompt_logprobs.size(), p.size() - 1);
  ASSERT_EQ(cb.prompt_logprobs.size(), p.size() - 1);
  for (size_t i = 0; i < ca.prompt_logprobs.size(); ++i) {
    EXPECT_EQ(ca.prompt_logprobs[i].token, cb.prompt_logprobs[i].token);
    EXPECT_NEAR(ca.prompt_logprobs[i].logprob, cb.prompt_logprobs[i].logprob, 2e-4) << "position " << i;
  }
  drain(ga);
  drain(gb);
}

// A pool of 40 blocks of 4 tokens for 6 requests of 26-31 prompt tokens and 40 output tokens: as
// decodes grow the pool runs out and the newest are preempted; readmitted, they resume from the
// snapshots their decode left at block ends (the blocks still cached). Tokens equal the unbatched
// caching-off run; no block or request is held at the end.
TEST_P(HybridPrefixCache, PreemptionResumesFromSnapshots) {
  const int64_t block_bytes = off->kv_cache_bytes() / off->stats().kv_blocks_total;
  std::vector<GenerationParams> ps;
  for (int i = 0; i < 6; ++i)
    ps.push_back(greedy_params(std::vector<int32_t>(base.begin() + 10 * i, base.begin() + 10 * i + 26 + i), 40));
  std::vector<Result> alone;
  for (auto& p : ps) alone.push_back(run_one(*off, p));
  ModelOptions o = tiny_options();
  o.kv_cache_bytes = block_bytes * 40;
  o.max_num_seqs = 6;
  auto m = LLMEngine::create(fam, arch_dir(fam), o);
  ASSERT_EQ(m->stats().kv_blocks_total, 40);
  const auto rs = run_batch(*m, ps);
  for (size_t i = 0; i < ps.size(); ++i) EXPECT_EQ(rs[i].tokens, alone[i].tokens) << "request " << i;
  const EngineStats s = wait_idle(*m);
  EXPECT_GT(s.num_preemptions, 0);
  EXPECT_GT(s.prefix_cache.num_hit_tokens, 0);
  EXPECT_EQ(s.kv_blocks_used, 0);
  EXPECT_EQ(s.num_running + s.num_waiting, 0);
}

INSTANTIATE_TEST_SUITE_P(Families, HybridPrefixCache, ::testing::Values("qwen3_5", "qwen3_5_moe"),
                         [](const auto& info) { return std::string(info.param); });

}  // namespace
}  // namespace oxyd::engine::test
