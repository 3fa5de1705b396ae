// A Generation on a real LLMEngine (tokenizer, KV pool, AsyncEngine thread, ModelRunner)
// reproduces the transformers float64 greedy continuations committed in tests/data/archs, one
// request at a time and with the three prompts of a family batched together.
#include "serving_util.h"

namespace oxyd::engine::test {
namespace {

class GoldenGreedy : public ::testing::TestWithParam<const char*> {};

TEST_P(GoldenGreedy, AloneAndBatchedMatchTransformers) {
  const std::string fam = GetParam();
  const Golden g = load_golden(fam);
  auto m = LLMEngine::create(fam, arch_dir(fam), tiny_options());
  std::vector<GenerationParams> ps;
  for (size_t p = 0; p < g.prompts.size(); ++p) {
    ps.push_back(greedy_params(g.prompts[p], int32_t(g.greedy[p].size())));
    const Result r = run_one(*m, ps.back());
    EXPECT_EQ(r.tokens, g.greedy[p]) << fam << " prompt " << p;
    EXPECT_EQ(r.finish, engine::FinishReason::LENGTH);
    EXPECT_EQ(r.num_completion_tokens, int32_t(g.greedy[p].size()));
  }
  const auto rs = run_batch(*m, ps);
  for (size_t p = 0; p < g.prompts.size(); ++p) EXPECT_EQ(rs[p].tokens, g.greedy[p]) << fam << " batched prompt " << p;
  EXPECT_EQ(wait_idle(*m).kv_blocks_used, 0);
}

// llama: full attention; mistral: every layer sliding (the block manager drops old blocks);
// gemma3: 5 sliding + 1 full (hybrid: no early drop); qwen3: q/k norms; gemma2: soft-caps;
// ministral3: query temperature by position; qwen3_5: Gated DeltaNet layers, each request in its
// own recurrent-state slot (batched: three slots at once).
INSTANTIATE_TEST_SUITE_P(Families, GoldenGreedy,
                         ::testing::Values("llama", "mistral", "gemma3", "qwen3", "gemma2", "qwen2", "phi3", "granite",
                                           "ministral3", "qwen3_5"),
                         [](const auto& info) { return std::string(info.param); });

// Two models serving at once (one engine thread each, one shared CPU thread pool).
TEST(LLMEngine, TwoModelsConcurrently) {
  const Golden ga = load_golden("llama"), gb = load_golden("qwen3");
  auto a = LLMEngine::create("llama", arch_dir("llama"), tiny_options());
  auto b = LLMEngine::create("qwen3", arch_dir("qwen3"), tiny_options());
  std::vector<GenerationParams> pa, pb;
  for (size_t p = 0; p < 3; ++p) {
    pa.push_back(greedy_params(ga.prompts[p], 32));
    pb.push_back(greedy_params(gb.prompts[p], 32));
  }
  std::vector<Result> ra;
  std::thread t([&] { ra = run_batch(*a, pa); });
  const auto rb = run_batch(*b, pb);
  t.join();
  for (size_t p = 0; p < 3; ++p) {
    EXPECT_EQ(ra[p].tokens, ga.greedy[p]);
    EXPECT_EQ(rb[p].tokens, gb.greedy[p]);
  }
}

TEST(LLMEngine, GgufLoadsWithItsTokenizerAndMatchesGolden) {
  const Golden g = load_golden("llama");
  auto m = LLMEngine::create("llama-f32", arch_dir("llama") + "/model-F32.gguf", tiny_options());
  EXPECT_EQ(run_one(*m, greedy_params(g.prompts[0], 32)).tokens, g.greedy[0]);
  EXPECT_GT(m->weights_bytes(), 0);
  EXPECT_GT(m->kv_cache_bytes(), 0);
}

TEST(LLMEngine, SizesContextAndPool) {
  ModelOptions o = tiny_options();
  o.max_context_len = 100000;  // clamped to max_position_embeddings = 128
  auto m = LLMEngine::create("llama", arch_dir("llama"), o);
  EXPECT_EQ(m->max_context_len(), 128);
  EXPECT_GE(m->max_num_seqs(), 16);
  // Explicit budget: exactly the blocks that fit (llama tiny: 2 layers × 2 kv heads × 32 dims).
  const loader::ModelConfig& c = m->config();
  const int64_t per_token = 2 * c.num_hidden_layers * c.num_key_value_heads * kv_format_row_bytes(o.kv_format, c.head_dim);
  o.kv_cache_bytes = per_token * 4 * 40 + 5;  // 40 blocks of 4 tokens
  o.max_context_len = 128;
  auto m2 = LLMEngine::create("llama", arch_dir("llama"), o);
  EXPECT_EQ(m2->kv_cache_bytes(), per_token * 4 * 40);
}

TEST(LLMEngine, PoolSmallerThanOneContextIsOutOfMemory) {
  ModelOptions o = tiny_options();
  o.kv_cache_bytes = 1000;
  try {
    LLMEngine::create("llama", arch_dir("llama"), o);
    FAIL() << "expected OUT_OF_MEMORY";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::OUT_OF_MEMORY);
    const std::string msg = e.what();
    EXPECT_NE(msg.find("1000 bytes"), std::string::npos) << msg;
    EXPECT_NE(msg.find("128 tokens"), std::string::npos) << msg;
  }
}

TEST(LLMEngine, MissingPathIsNotFound) {
  try {
    LLMEngine::create("x", arch_dir("no_such_model"), tiny_options());
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::NOT_FOUND);
    EXPECT_NE(std::string(e.what()).find("no_such_model"), std::string::npos);
  }
}

}  // namespace
}  // namespace oxyd::engine::test
