// Helpers for tests/serving: the committed tiny models (tests/data/archs, made by
// tools/gen_tiny_models.py with transformers float64 greedy goldens) loaded as a real LLMEngine,
// and a driver that runs a Generation to its end collecting tokens and text.
#pragma once

#include <chrono>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "engine/generation.h"
#include "engine/llm_engine.h"

namespace oxyd::engine::test {

inline std::string arch_dir(const std::string& family) {
  return std::string(OXYD_SOURCE_DIR) + "/tests/data/archs/" + family;
}

struct Golden {
  std::vector<std::vector<int32_t>> prompts, greedy;  // transformers greedy continuations (32 tokens)
};

inline Golden load_golden(const std::string& family) {
  std::ifstream f(arch_dir(family) + "/goldens.json");
  const nlohmann::json j = nlohmann::json::parse(f);
  Golden g;
  for (auto& p : j["prompts"]) g.prompts.push_back(p.get<std::vector<int32_t>>());
  for (auto& p : j["greedy"]) g.greedy.push_back(p.get<std::vector<int32_t>>());
  return g;
}

inline ModelOptions tiny_options() {
  ModelOptions o;
  o.max_context_len = 128;  // the tiny models' max_position_embeddings
  o.block_size = 4;         // several blocks per prompt: exercises tables and the prefix cache
  o.kv_cache_bytes = 0;     // auto
  o.kv_format = KvFormat::F32;  // token for token against float64 goldens (the default BF16 flips near-ties)
  return o;
}

inline GenerationParams greedy_params(std::vector<int32_t> prompt, int32_t max_tokens) {
  GenerationParams p;
  p.prompt_ids = std::move(prompt);
  p.sampling.temperature = 0.0f;
  p.max_tokens = max_tokens;
  p.ignore_eos = true;  // the goldens run a fixed number of tokens
  return p;
}

struct Result {
  std::vector<int32_t> tokens;
  std::vector<float> logprobs;  // of each token, when the request asked for logprobs
  std::string text;
  engine::FinishReason finish = engine::FinishReason::NONE;
  int32_t num_cached_tokens = 0, num_completion_tokens = 0;
  std::vector<std::string> chunks;
};

/// Reads `g` to its end (fails the test after 60 s).
inline Result drain(Generation& g) {
  Result r;
  GenerationChunk c;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  for (;;) {
    const Generation::Next n = g.next(c, deadline);
    if (n == Generation::Next::END) break;
    if (n == Generation::Next::TIMEOUT) {
      ADD_FAILURE() << "generation timed out";
      break;
    }
    for (auto& t : c.tokens) r.tokens.push_back(t.token), r.logprobs.push_back(t.logprob);
    r.text += c.text;
    r.chunks.push_back(c.text);
    if (c.finish_reason != engine::FinishReason::NONE) r.finish = c.finish_reason;
  }
  r.num_cached_tokens = g.num_cached_tokens();
  r.num_completion_tokens = g.num_completion_tokens();
  return r;
}

inline Result run_one(LLMEngine& m, GenerationParams p, uint64_t seed = 0) {
  Generation g(m, std::move(p), seed);
  return drain(g);
}

/// Submits every request first, then reads them all (they run as one continuous batch).
inline std::vector<Result> run_batch(LLMEngine& m, const std::vector<GenerationParams>& ps, uint64_t seed = 0) {
  std::vector<std::unique_ptr<Generation>> gens;
  for (auto& p : ps) gens.push_back(std::make_unique<Generation>(m, p, seed));
  std::vector<Result> out;
  for (auto& g : gens) out.push_back(drain(*g));
  return out;
}

/// Waits until the engine holds no request and no KV block (stats lag one step behind aborts).
inline engine::EngineStats wait_idle(LLMEngine& m) {
  engine::EngineStats s;
  for (int i = 0; i < 500; ++i) {
    s = m.stats();
    if (s.num_running == 0 && s.num_waiting == 0 && s.kv_blocks_used == 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return s;
}

}  // namespace oxyd::engine::test
