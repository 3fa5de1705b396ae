// Generation and embedding side by side in one process, as a server holding a generator and an
// embedder runs them: two engine threads sharing the compute pool job by job. Neither starves
// the other: while a client keeps the embedder's queue busy, a greedy generation of the tiny
// Llama still finishes with its transformers golden tokens, and while that generation runs,
// embedding requests keep completing with the rows the model gives them alone.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <chrono>
#include <fstream>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/generation.h"
#include "engine/llm_engine.h"
#include "model/transformer.h"

namespace oxyd::engine {
namespace {

std::string arch_dir(const std::string& name) { return std::string(OXYD_SOURCE_DIR) + "/tests/data/archs/" + name; }

TEST(EmbedBesideGenerate, NeitherStarvesTheOther) {
  ModelOptions o;
  o.max_context_len = 128;
  o.kv_format = KvFormat::F32;  // token for token against the float64 golden
  auto gen = LLMEngine::create("llama", arch_dir("llama"), o);
  auto emb = LLMEngine::create("bert", arch_dir("bert"), ModelOptions{});
  auto ref = model::Transformer::load(arch_dir("bert"));
  std::ifstream f(arch_dir("llama") + "/goldens.json");
  const nlohmann::json g = nlohmann::json::parse(f);
  const std::vector<int32_t> prompt = g["prompts"][0], want = g["greedy"][0];

  // The flood: requests of 8 sequences × 60 tokens, back to back, until the generation is done.
  EmbeddingInput in;
  for (int s = 0; s < 8; ++s) {
    std::vector<int32_t> ids{2};
    for (int t = 0; t < 58; ++t) ids.push_back(5 + (s * 37 + t * 11) % 300);
    ids.push_back(3);
    in.ids.push_back(ids);
  }
  const std::vector<int32_t> starts{0, int32_t(in.ids[0].size())};
  const std::vector<float> row0 = ref->embed({in.ids[0], {}, starts});
  std::atomic<bool> stop{false};
  std::atomic<int> done{0}, wrong{0};
  std::thread flood([&] {
    while (!stop) {
      const std::vector<float> rows = emb->embed(in);
      for (size_t i = 0; i < row0.size(); ++i)
        if (std::fabs(rows[i] - row0[i]) > 1e-5) ++wrong;
      ++done;
    }
  });
  while (done == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));

  const int before = done;
  GenerationParams p;
  p.prompt_ids = prompt;
  p.sampling.temperature = 0.0f;
  p.max_tokens = int32_t(want.size());
  p.ignore_eos = true;
  // Generations in a row (at least 5) until 3 flood requests completed beside them: a span long
  // enough for a flood request whatever the machine's speed.
  int reps = 0;
  for (int rep = 0; rep < 500 && (rep < 5 || done - before < 3); ++rep, ++reps) {
    Generation run(*gen, p, 0);
    std::vector<int32_t> got;
    GenerationChunk c;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
    for (;;) {
      const Generation::Next n = run.next(c, deadline);
      if (n == Generation::Next::END) break;
      ASSERT_NE(n, Generation::Next::TIMEOUT) << "the generation starved beside the embedding flood";
      for (auto& t : c.tokens) got.push_back(t.token);
    }
    EXPECT_EQ(got, want) << "run " << rep;
  }
  const int during = done - before;
  stop = true;
  flood.join();
  EXPECT_GE(during, 3) << "embedding requests starved while " << reps << " generations ran";
  EXPECT_EQ(wrong, 0);
  std::printf("embedding requests completed during %d generations of %zu tokens: %d\n", reps, want.size(), during);
}

}  // namespace
}  // namespace oxyd::engine
