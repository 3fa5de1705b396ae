// Logprobs through the whole serving path against transformers: prompt logprobs (completions
// echo) and the sampled tokens' logprobs equal log_softmax of the committed float64 transformers
// logits (tests/data/archs/<family>/logits.bin, every prompt position) at the same positions.
// Also: many client threads each driving its own Generation get the golden tokens.
#include <cmath>
#include <thread>

#include "serving_util.h"

namespace oxyd::engine::test {
namespace {

std::vector<float> read_f32(const std::string& path) {
  std::ifstream f(path, std::ios::binary | std::ios::ate);
  std::vector<float> v(static_cast<size_t>(f.tellg()) / sizeof(float));
  f.seekg(0);
  f.read(reinterpret_cast<char*>(v.data()), static_cast<std::streamsize>(v.size() * sizeof(float)));
  return v;
}

double log_softmax_at(const float* row, int64_t n, int32_t tok) {
  double mx = row[0], s = 0;
  for (int64_t i = 1; i < n; ++i) mx = std::max(mx, double(row[i]));
  for (int64_t i = 0; i < n; ++i) s += std::exp(double(row[i]) - mx);
  return double(row[tok]) - mx - std::log(s);
}

TEST(Logprobs, PromptAndSampledMatchTransformers) {
  const Golden g = load_golden("llama");
  const std::vector<float> logits = read_f32(arch_dir("llama") + "/logits.bin");  // per prompt [len, vocab]
  auto m = LLMEngine::create("llama", arch_dir("llama"), tiny_options());
  const int64_t V = m->config().vocab_size;
  size_t off = 0;
  for (size_t p = 0; p < g.prompts.size(); ++p) {
    const std::vector<int32_t>& prompt = g.prompts[p];
    GenerationParams gp = greedy_params(prompt, 1);
    gp.prompt_logprobs = 2;
    gp.sampling.logprobs = 2;
    Generation gen(*m, gp, 0);
    GenerationChunk c, first;
    bool got_first = false;
    while (gen.next(c) == Generation::Next::CHUNK)
      if (!got_first) first = c, got_first = true;
    ASSERT_TRUE(got_first);
    ASSERT_EQ(first.prompt_logprobs.size(), prompt.size() - 1);
    for (size_t i = 0; i + 1 < prompt.size(); ++i) {
      const float* row = logits.data() + off + i * size_t(V);  // logits after prompt[0..i]
      EXPECT_EQ(first.prompt_logprobs[i].token, prompt[i + 1]);
      EXPECT_NEAR(first.prompt_logprobs[i].logprob, log_softmax_at(row, V, prompt[i + 1]), 2e-3) << "p " << p << " i " << i;
    }
    ASSERT_EQ(first.tokens.size(), 1u);
    EXPECT_EQ(first.tokens[0].token, g.greedy[p][0]);
    const float* last = logits.data() + off + (prompt.size() - 1) * size_t(V);
    EXPECT_NEAR(first.tokens[0].logprob, log_softmax_at(last, V, g.greedy[p][0]), 2e-3);
    ASSERT_EQ(first.tokens[0].top_logprobs.size(), 2u);
    EXPECT_EQ(first.tokens[0].top_logprobs[0].first, g.greedy[p][0]);  // greedy = the top-1
    off += prompt.size() * size_t(V);
  }
  EXPECT_EQ(off, logits.size());
}

TEST(Concurrency, ClientThreadsEachWithAGeneration) {
  const Golden g = load_golden("qwen3");
  auto m = LLMEngine::create("qwen3", arch_dir("qwen3"), tiny_options());
  std::vector<std::vector<int32_t>> got(12);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < got.size(); ++t)
    threads.emplace_back([&, t] { got[t] = run_one(*m, greedy_params(g.prompts[t % 3], 32)).tokens; });
  for (auto& th : threads) th.join();
  for (size_t t = 0; t < got.size(); ++t) EXPECT_EQ(got[t], g.greedy[t % 3]) << "thread " << t;
  EXPECT_EQ(wait_idle(*m).kv_blocks_used, 0);
}

}  // namespace
}  // namespace oxyd::engine::test
