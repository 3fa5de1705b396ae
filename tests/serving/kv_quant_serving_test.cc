// The quantized KV formats (--kv-quant lossless Q8, aggressive Q5) under the serving paths that
// reuse or rebuild cache blocks (issue 29): a prefix-cache hit reads blocks another request wrote,
// and a preempted request recomputes its prompt + output into fresh blocks. A head vector's codes
// depend on that vector alone, so both must give the tokens of an engine that computes everything
// once, in the same format: prefix caching off, a pool large enough that nobody is preempted.
// gemma3 has sliding-window layers next to full ones, mistral slides on every layer.
#include <random>

#include "serving_util.h"

namespace oxyd::engine::test {
namespace {

using Case = std::tuple<const char*, KvFormat>;
class KvQuantServing : public ::testing::TestWithParam<Case> {};

ModelOptions options(KvFormat f) {
  ModelOptions o = tiny_options();
  o.kv_format = f;
  return o;
}

TEST_P(KvQuantServing, PrefixHitsGiveSameTokensAsNoCache) {
  const auto [fam, fmt] = GetParam();
  const Golden g = load_golden(fam);
  const std::vector<int32_t> prefix(g.prompts[2].begin(), g.prompts[2].begin() + 32);
  std::vector<GenerationParams> ps;
  for (int i = 0; i < 4; ++i) {
    std::vector<int32_t> p = prefix;
    for (int k = 0; k <= i; ++k) p.push_back(g.prompts[0][size_t(k + i)]);
    ps.push_back(greedy_params(p, 16));
  }
  ModelOptions off = options(fmt);
  off.enable_prefix_caching = false;
  auto m_off = LLMEngine::create(fam, arch_dir(fam), off);
  std::vector<Result> expect;
  for (auto& p : ps) expect.push_back(run_one(*m_off, p));

  auto m = LLMEngine::create(fam, arch_dir(fam), options(fmt));
  ASSERT_EQ(m->kv_format(), fmt);
  run_one(*m, greedy_params(g.prompts[2], 8));  // writes the prefix's blocks
  const auto rs = run_batch(*m, ps);
  for (size_t i = 0; i < ps.size(); ++i) {
    EXPECT_EQ(rs[i].tokens, expect[i].tokens) << "request " << i;
    EXPECT_GE(rs[i].num_cached_tokens, 28) << "request " << i;
  }
  EXPECT_EQ(wait_idle(*m).kv_blocks_used, 0);
}

TEST_P(KvQuantServing, PreemptionUnderSmallPoolEqualsAlone) {
  const auto [fam, fmt] = GetParam();
  const Golden g = load_golden(fam);
  std::vector<GenerationParams> ps;
  std::mt19937 rng(7);
  for (int i = 0; i < 12; ++i) {
    std::vector<int32_t> prompt = g.prompts[size_t(i) % g.prompts.size()];
    prompt.resize(std::min(prompt.size(), size_t(6 + (i * 5) % 30)));
    ps.push_back(greedy_params(prompt, 16 + int32_t(rng() % 24)));
  }
  auto big = LLMEngine::create(fam, arch_dir(fam), options(fmt));
  std::vector<Result> alone;
  for (auto& p : ps) alone.push_back(run_one(*big, p));
  // 40 blocks of 4 tokens in this format's bytes: fewer than the 12 requests need together.
  const int64_t block_bytes = big->kv_cache_bytes() / big->num_kv_blocks();
  ModelOptions o = options(fmt);
  o.kv_cache_bytes = block_bytes * 40;
  o.max_num_seqs = 12;
  auto m = LLMEngine::create(fam, arch_dir(fam), o);
  ASSERT_EQ(m->num_kv_blocks(), 40);
  const auto rs = run_batch(*m, ps);
  for (size_t i = 0; i < ps.size(); ++i) EXPECT_EQ(rs[i].tokens, alone[i].tokens) << "request " << i;
  const engine::EngineStats s = wait_idle(*m);
  if (std::string(fam) != "mistral") {  // mistral frees slid-out blocks instead
    EXPECT_GT(s.num_preemptions, 0);
  }
  EXPECT_EQ(s.kv_blocks_used, 0);
}

INSTANTIATE_TEST_SUITE_P(Modes, KvQuantServing,
                         ::testing::Combine(::testing::Values("llama", "gemma3", "mistral"),
                                            ::testing::Values(KvFormat::Q8, KvFormat::Q5)),
                         [](const auto& info) {
                           return std::string(std::get<0>(info.param)) + "_" +
                                  std::string(kv_format_name(std::get<1>(info.param)));
                         });

}  // namespace
}  // namespace oxyd::engine::test
