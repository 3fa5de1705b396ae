// vLLM's sampling extensions on a real tiny model (issue 21 §5.8), each against the transformers
// float64 greedy golden or a property that fails without the feature:
//   include_stop_str_in_output  the text ends with the stop string (golden text cut after it)
//   min_tokens                  no stop id / EOS and no stop string before that many tokens
//   ignore_eos                  generation runs past a forced EOS to max_tokens
//   skip_special_tokens=false   the EOS text is written; by default it never is
//   top_k=1, min_p=1            sampling at temperature 1 equals greedy, whatever the seed
//   repetition_penalty (huge)   no token of the prompt or of the output is picked again
#include "core/error.h"
#include "serving_util.h"

namespace oxyd::engine::test {
namespace {

std::unique_ptr<LLMEngine> llama() { return LLMEngine::create("llama", arch_dir("llama"), tiny_options()); }

constexpr int32_t kEos = 2;  // tests/data/archs/llama: eos_token_id

TEST(VllmExtensions, IncludeStopStrInOutput) {
  const Golden g = load_golden("llama");
  auto m = llama();
  const tokenizer::Tokenizer& tok = m->tokenizer();
  for (size_t p = 0; p < g.prompts.size(); ++p) {
    const std::string full = tok.decode(g.greedy[p], true);
    const std::string head = tok.decode({g.greedy[p].begin(), g.greedy[p].begin() + 10}, true);
    const std::string mid = tok.decode({g.greedy[p].begin() + 10, g.greedy[p].begin() + 13}, true);
    ASSERT_GE(mid.size(), 3u);
    const std::string stop = full.substr(head.size() + 1, mid.size() - 1);  // spans tokens
    GenerationParams gp = greedy_params(g.prompts[p], 32);
    gp.stop = {stop};
    gp.include_stop_str_in_output = true;
    const Result r = run_one(*m, gp);
    EXPECT_EQ(r.finish, engine::FinishReason::STOP);
    EXPECT_EQ(r.text, full.substr(0, full.find(stop) + stop.size())) << "stop '" << stop << "'";
    gp.include_stop_str_in_output = false;
    EXPECT_EQ(run_one(*m, gp).text, full.substr(0, full.find(stop)));
  }
}

TEST(VllmExtensions, MinTokensHoldsBackAStopId) {
  const Golden g = load_golden("llama");
  auto m = llama();
  const std::vector<int32_t>& gold = g.greedy[0];
  const int32_t stop_id = gold[2];
  size_t first = 0;
  while (gold[first] != stop_id) ++first;
  GenerationParams gp = greedy_params(g.prompts[0], 32);
  gp.stop_token_ids = {stop_id};
  const Result plain = run_one(*m, gp);
  ASSERT_EQ(plain.tokens.size(), first + 1);  // without min_tokens it stops at once
  gp.min_tokens = 12;
  const Result r = run_one(*m, gp);
  ASSERT_GE(r.tokens.size(), 12u);
  // Up to the first stop id it is the golden; there the stop id is masked, so another token comes.
  EXPECT_EQ(std::vector<int32_t>(r.tokens.begin(), r.tokens.begin() + long(first)),
            std::vector<int32_t>(gold.begin(), gold.begin() + long(first)));
  for (size_t i = 0; i < 12; ++i) EXPECT_NE(r.tokens[i], stop_id) << "token " << i;
  if (r.finish == engine::FinishReason::STOP) EXPECT_EQ(r.tokens.back(), stop_id);
  else EXPECT_EQ(r.tokens.size(), 32u);
}

TEST(VllmExtensions, MinTokensIgnoreEosAndSpecialText) {
  const Golden g = load_golden("llama");
  auto m = llama();
  GenerationParams gp = greedy_params(g.prompts[1], 8);
  gp.ignore_eos = false;
  gp.sampling.logit_bias = {{kEos, 100.0f}};  // EOS wins every step
  Result r = run_one(*m, gp);
  EXPECT_EQ(r.tokens, std::vector<int32_t>{kEos});
  EXPECT_EQ(r.finish, engine::FinishReason::STOP);
  EXPECT_EQ(r.text, "");

  gp.min_tokens = 5;  // EOS masked for the first 5 tokens, then it ends generation
  r = run_one(*m, gp);
  ASSERT_EQ(r.tokens.size(), 6u);
  for (size_t i = 0; i < 5; ++i) EXPECT_NE(r.tokens[i], kEos);
  EXPECT_EQ(r.tokens[5], kEos);
  EXPECT_EQ(r.finish, engine::FinishReason::STOP);

  gp.min_tokens = 0;
  gp.ignore_eos = true;  // EOS is no stop: runs to max_tokens
  r = run_one(*m, gp);
  EXPECT_EQ(r.tokens, std::vector<int32_t>(8, kEos));
  EXPECT_EQ(r.finish, engine::FinishReason::LENGTH);
  EXPECT_EQ(r.text, "");  // a special token writes no text by default
  gp.skip_special_tokens = false;
  r = run_one(*m, gp);
  std::string eight;
  for (int i = 0; i < 8; ++i) eight += "</s>";
  EXPECT_EQ(r.text, eight);
}

TEST(VllmExtensions, MinTokensHoldsBackAStopString) {
  const Golden g = load_golden("llama");
  auto m = llama();
  const tokenizer::Tokenizer& tok = m->tokenizer();
  const std::string full = tok.decode(g.greedy[0], true);
  const std::string two = tok.decode({g.greedy[0].begin(), g.greedy[0].begin() + 2}, true);
  ASSERT_GE(two.size(), 2u);
  const std::string stop = two.substr(two.size() - 2);  // ends within the first two tokens
  GenerationParams gp = greedy_params(g.prompts[0], 32);
  gp.stop = {stop};
  const Result early = run_one(*m, gp);
  EXPECT_EQ(early.finish, engine::FinishReason::STOP);
  EXPECT_LE(early.tokens.size(), 2u);
  gp.min_tokens = 20;
  const Result r = run_one(*m, gp);
  EXPECT_GE(r.tokens.size(), 20u);
  EXPECT_EQ(std::vector<int32_t>(r.tokens.begin(), r.tokens.begin() + 20),
            std::vector<int32_t>(g.greedy[0].begin(), g.greedy[0].begin() + 20));  // strings do not change tokens
  EXPECT_EQ(full.rfind(r.text, 0), 0u) << "not a prefix of the golden text: " << r.text;
  EXPECT_GE(r.text.size(), tok.decode({g.greedy[0].begin(), g.greedy[0].begin() + 19}, true).size());
}

TEST(VllmExtensions, MinTokensAboveMaxTokensIsRejected) {
  const Golden g = load_golden("llama");
  auto m = llama();
  GenerationParams gp = greedy_params(g.prompts[0], 4);
  gp.min_tokens = 5;
  EXPECT_THROW(Generation(*m, gp, 0), Error);
}

TEST(VllmExtensions, TopKOneAndMinPOneAreGreedy) {
  const Golden g = load_golden("llama");
  auto m = llama();
  for (int which = 0; which < 3; ++which) {
    for (uint64_t seed : {1u, 2u, 3u}) {
      GenerationParams gp = greedy_params(g.prompts[0], 16);
      gp.sampling.temperature = 1.0f;
      gp.sampling.seed = seed;
      if (which == 0) gp.sampling.top_k = 1;
      if (which == 1) gp.sampling.min_p = 1.0f;
      const Result r = run_one(*m, gp);
      const std::vector<int32_t> want(g.greedy[0].begin(), g.greedy[0].begin() + 16);
      if (which == 2) {
        EXPECT_NE(r.tokens, want) << "plain temperature-1 sampling matched greedy: the check proves nothing";
      } else {
        EXPECT_EQ(r.tokens, want) << (which == 0 ? "top_k 1" : "min_p 1") << " seed " << seed;
      }
    }
  }
}

TEST(VllmExtensions, HugeRepetitionPenaltyNeverRepeats) {
  const Golden g = load_golden("llama");
  auto m = llama();
  GenerationParams gp = greedy_params(g.prompts[0], 24);
  gp.sampling.repetition_penalty = 1e6f;
  const Result r = run_one(*m, gp);
  ASSERT_EQ(r.tokens.size(), 24u);
  std::vector<int32_t> seen = g.prompts[0];
  for (int32_t t : r.tokens) {
    EXPECT_EQ(std::count(seen.begin(), seen.end(), t), 0) << "token " << t << " repeated";
    seen.push_back(t);
  }
  // The golden itself repeats, so the penalty changed the output.
  std::vector<int32_t> gold(g.greedy[0].begin(), g.greedy[0].begin() + 24);
  EXPECT_NE(r.tokens, gold);
}

}  // namespace
}  // namespace oxyd::engine::test
