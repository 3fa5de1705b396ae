// Phi-3 longrope with original_max_position_embeddings (64) below max_position_embeddings (1024),
// as Phi-3.5-mini and Phi-4-mini ship (issue 21 §5.3), against transformers float64
// (tests/data/archs/phi3_longrope, tools/gen_longrope_goldens.py; the weights are the tiny phi3's).
// transformers rotates a sequence of at most 64 tokens with the short factors and a longer one
// with the long factors, every key included: its generate() drops the KV cache once when a
// sequence grows past 64 tokens and recomputes (the generator checks that generate equals a full
// recompute at every step). The engine does the same through the scheduler (rope_switch_len).
// Prompts: 19 (short throughout), 40 (crosses while generating), 100 (long), 64 (ends exactly at
// the switch), 63 (crosses at the second token). llama.cpp differs on purpose: it picks one
// table per context (long when n_ctx exceeds the original), whatever the sequence length.
// Before the fix: the long factors at every length (22 nats off on the 19-token prompt); with a
// per-step switch but no recompute, prompt 40 matched 25 of 32 tokens, prompt 64 only 1.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <unistd.h>

#include "serving_util.h"

namespace oxyd::engine::test {
namespace {

namespace fs = std::filesystem;

fs::path make_longrope_model() {
  const fs::path dir = fs::temp_directory_path() / ("oxyd_longrope_" + std::to_string(getpid()));
  fs::create_directories(dir);
  const fs::path phi3 = arch_dir("phi3"), lr = arch_dir("phi3_longrope");
  for (const char* f : {"model.safetensors", "tokenizer.json", "tokenizer_config.json", "generation_config.json"})
    if (fs::exists(phi3 / f)) fs::copy_file(phi3 / f, dir / f, fs::copy_options::overwrite_existing);
  fs::copy_file(lr / "config.json", dir / "config.json", fs::copy_options::overwrite_existing);
  return dir;
}

struct LongropeGolden {
  std::vector<std::vector<int32_t>> prompts, greedy;
  std::vector<std::vector<double>> prompt_logprobs;
};

class Longrope : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = make_longrope_model();
    std::ifstream f(arch_dir("phi3_longrope") + "/goldens.json");
    const nlohmann::json j = nlohmann::json::parse(f);
    g_.prompts = j["prompts"].get<std::vector<std::vector<int32_t>>>();
    g_.greedy = j["greedy"].get<std::vector<std::vector<int32_t>>>();
    g_.prompt_logprobs = j["prompt_logprobs"].get<std::vector<std::vector<double>>>();
  }
  static void TearDownTestSuite() { fs::remove_all(dir_); }
  static ModelOptions options() {
    ModelOptions o = tiny_options();
    o.max_context_len = 1024;
    return o;
  }
  static std::unique_ptr<LLMEngine> load(const ModelOptions& o) {
    return LLMEngine::create("phi3-longrope", dir_.string(), o);
  }
  static std::vector<GenerationParams> all_requests() {
    std::vector<GenerationParams> ps;
    for (size_t p = 0; p < g_.prompts.size(); ++p) ps.push_back(greedy_params(g_.prompts[p], int32_t(g_.greedy[p].size())));
    return ps;
  }
  static inline fs::path dir_;
  static inline LongropeGolden g_;
};

TEST_F(Longrope, GoldensCoverBothSidesAndTheSwitch) {
  std::vector<size_t> lens;
  for (auto& p : g_.prompts) lens.push_back(p.size());
  EXPECT_EQ(lens, (std::vector<size_t>{19, 40, 100, 64, 63}));
  for (auto& t : g_.greedy) EXPECT_EQ(t.size(), 32u);
}

TEST_F(Longrope, PromptLogprobsMatchTransformers) {
  auto m = load(options());
  for (size_t p = 0; p < g_.prompts.size(); ++p) {
    GenerationParams gp = greedy_params(g_.prompts[p], 1);
    gp.prompt_logprobs = 0;
    Generation gen(*m, gp, 0);
    GenerationChunk c;
    ASSERT_EQ(gen.next(c), Generation::Next::CHUNK);
    const auto& want = g_.prompt_logprobs[p];
    ASSERT_EQ(c.prompt_logprobs.size(), want.size()) << "prompt " << p;
    double worst = 0;
    for (size_t i = 0; i < want.size(); ++i) {
      EXPECT_EQ(c.prompt_logprobs[i].token, g_.prompts[p][i + 1]);
      worst = std::max(worst, std::abs(double(c.prompt_logprobs[i].logprob) - want[i]));
    }
    EXPECT_LT(worst, 2e-3) << "prompt " << p << " (" << g_.prompts[p].size() << " tokens)";
  }
}

TEST_F(Longrope, GreedyMatchesTransformersAcrossTheSwitch) {
  auto m = load(options());
  const auto ps = all_requests();
  for (size_t p = 0; p < ps.size(); ++p)
    EXPECT_EQ(run_one(*m, ps[p]).tokens, g_.greedy[p]) << "prompt " << p << " (" << g_.prompts[p].size() << " tokens)";
  // One continuous batch: steps mix sequences on both sides, and some cross mid-batch.
  const auto rs = run_batch(*m, ps);
  for (size_t p = 0; p < ps.size(); ++p) EXPECT_EQ(rs[p].tokens, g_.greedy[p]) << "batched prompt " << p;
  EXPECT_EQ(wait_idle(*m).kv_blocks_used, 0);
}

TEST_F(Longrope, ChunkedAndPreemptedMatchTransformers) {
  ModelOptions o = options();
  o.max_num_batched_tokens = 7;  // the prompts and the recompute at the switch arrive in chunks
  {
    auto m = load(o);
    const auto rs = run_batch(*m, all_requests());
    for (size_t p = 0; p < rs.size(); ++p) EXPECT_EQ(rs[p].tokens, g_.greedy[p]) << "chunked prompt " << p;
  }
  // A pool of 60 blocks of 4 tokens for 5 requests of up to 132 tokens: the newest are preempted
  // and recomputed, some on the other side of the switch from where they started.
  const auto probe = load(options());
  const loader::ModelConfig& c = probe->config();
  o = options();
  o.max_context_len = 160;  // one context must fit the pool
  o.kv_cache_bytes = int64_t(2) * c.num_hidden_layers * c.num_key_value_heads * c.head_dim * 4 * 4 * 60;
  auto m = load(o);
  const auto rs = run_batch(*m, all_requests());
  for (size_t p = 0; p < rs.size(); ++p) EXPECT_EQ(rs[p].tokens, g_.greedy[p]) << "preempted prompt " << p;
  EXPECT_GT(m->stats().num_preemptions, 0);
}

// The prefix cache keeps blocks of each side apart: a long prompt whose first 40 tokens were
// cached by a short request, and a short prompt whose tokens were recomputed long at the switch,
// get nothing from the other side's blocks.
TEST_F(Longrope, PrefixCacheKeepsTheSidesApart) {
  auto m = load(options());
  std::vector<int32_t> head(g_.prompts[2].begin(), g_.prompts[2].begin() + 40);
  run_one(*m, greedy_params(head, 4));                        // short: caches blocks of prompt 2's head
  const Result long_run = run_one(*m, greedy_params(g_.prompts[2], 32));
  EXPECT_EQ(long_run.tokens, g_.greedy[2]);
  EXPECT_EQ(long_run.num_cached_tokens, 0);
  EXPECT_EQ(run_one(*m, greedy_params(g_.prompts[1], 32)).tokens, g_.greedy[1]);  // crosses: long blocks
  const Result again = run_one(*m, greedy_params(g_.prompts[1], 32));          // short blocks only
  EXPECT_EQ(again.tokens, g_.greedy[1]);
  EXPECT_GT(again.num_cached_tokens, 0);
  // The same short head again: served from the short blocks.
  EXPECT_GT(run_one(*m, greedy_params(head, 4)).num_cached_tokens, 0);
}

}  // namespace
}  // namespace oxyd::engine::test
