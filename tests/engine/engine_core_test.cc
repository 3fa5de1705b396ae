// EngineCore with a fake model that keeps a fake paged KV (token ids at slot_mapping) and derives
// each logits row from the tokens it reads back through the block table. Oracle: every request
// run alone on a fresh engine; batched with 15 others on a small pool (so chunking, prefix hits
// and preemption all happen) it must produce the same tokens, greedy and seeded sampling alike.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>

#include "core/error.h"
#include "engine/engine_core.h"
#include "fake_model.h"

namespace oxyd::engine {
namespace {

struct Outcome {
  std::map<int64_t, std::vector<int32_t>> tokens;
  std::map<int64_t, FinishReason> reasons;
  std::map<int64_t, int32_t> cached;
  int64_t preemptions = 0;
};

Outcome run(const std::vector<EngineRequest>& reqs, int32_t num_blocks, std::vector<int64_t> abort_ids = {}) {
  FakeModel model(num_blocks, 4);
  sched::SchedulerConfig sc;
  sc.max_num_batched_tokens = 24;
  sc.max_num_seqs = 16;
  sc.max_model_len = 200;
  kv::BlockManagerConfig kc;
  kc.num_blocks = num_blocks;
  kc.block_size = 4;
  EngineCore core(sc, kc, model);
  for (const auto& r : reqs) EXPECT_TRUE(core.add_request(r, 777));
  Outcome out;
  for (int step = 0; core.has_unfinished(); ++step) {
    if (step == 3)
      for (int64_t id : abort_ids) core.abort_request(id);
    for (auto& o : core.step()) {
      for (const auto& t : o.new_tokens) out.tokens[o.request_id].push_back(t.token);
      if (o.finish_reason != FinishReason::NONE) out.reasons[o.request_id] = o.finish_reason;
      out.cached[o.request_id] = o.num_cached_tokens;
    }
    EXPECT_LT(step, 10000);
  }
  EXPECT_EQ(core.kv().num_used_blocks(), 0);
  out.preemptions = core.scheduler().num_preemptions();
  const EngineStats st = core.stats();
  EXPECT_EQ(st.kv_blocks_used, 0);
  EXPECT_EQ(st.num_running + st.num_waiting, 0);
  int64_t generated = 0;
  for (const auto& [id, t] : out.tokens) generated += int64_t(t.size());
  EXPECT_EQ(st.num_generated_tokens, generated);  // a recompute samples a new token, never a repeat
  EXPECT_EQ(st.num_preemptions, out.preemptions);
  return out;
}

std::vector<EngineRequest> workload(bool greedy) {
  std::vector<EngineRequest> reqs;
  std::mt19937 g(11);
  std::vector<int32_t> system(14);
  for (auto& t : system) t = int32_t(g() % 32);
  for (int64_t i = 1; i <= 16; ++i) {
    EngineRequest r;
    r.request_id = i;
    r.prompt_token_ids = system;
    for (int n = int(1 + g() % 10); n > 0; --n) r.prompt_token_ids.push_back(int32_t(g() % 32));
    r.max_tokens = int32_t(4 + g() % 12);
    r.stop_token_ids = {0};
    if (!greedy) {
      r.sampling.temperature = 0.9f;
      r.sampling.top_p = 0.9f;
      r.sampling.seed = uint64_t(i) * 31;
    } else {
      r.sampling.temperature = 0;
    }
    reqs.push_back(r);
  }
  return reqs;
}

void expect_batch_invariant(bool greedy) {
  const auto reqs = workload(greedy);
  const Outcome together = run(reqs, 24);  // 96 KV slots for 16 requests of ~40 tokens: preemption
  for (const auto& r : reqs) {
    const Outcome alone = run({r}, 64);
    EXPECT_EQ(together.tokens.at(r.request_id), alone.tokens.at(r.request_id)) << "request " << r.request_id;
    EXPECT_EQ(together.reasons.at(r.request_id), alone.reasons.at(r.request_id));
  }
  int hits = 0;
  for (const auto& [id, c] : together.cached) hits += c > 0;
  EXPECT_GT(hits, 0);  // the shared system prompt was reused
  EXPECT_GT(together.preemptions, 0);
}

TEST(EngineCore, GreedyBatchInvariance) { expect_batch_invariant(true); }
TEST(EngineCore, SeededSamplingBatchInvariance) { expect_batch_invariant(false); }

TEST(EngineCore, AbortFreesEverything) {
  auto reqs = workload(true);
  for (auto& r : reqs) r.max_tokens = 50;
  const Outcome r = run(reqs, 40, {2, 5, 9});
  EXPECT_EQ(r.reasons.at(2), FinishReason::ABORT);
  EXPECT_EQ(r.reasons.at(5), FinishReason::ABORT);
  EXPECT_NE(r.reasons.at(1), FinishReason::ABORT);
}

// Prompt logprobs (echo): chunked over several steps, among requests that share its prefix (the
// prefix cache must not skip its positions); oracle = log_softmax of the model at each prefix.
TEST(EngineCore, PromptLogprobs) {
  auto reqs = workload(true);
  reqs[5].prompt_logprobs = 2;
  FakeModel model(64, 4);
  sched::SchedulerConfig sc;
  sc.max_num_batched_tokens = 7;
  kv::BlockManagerConfig kc;
  kc.num_blocks = 64;
  kc.block_size = 4;
  EngineCore core(sc, kc, model);
  for (const auto& r : reqs) ASSERT_TRUE(core.add_request(r, 1));
  std::vector<sample::SampleResult> got;
  int sends = 0;
  while (core.has_unfinished())
    for (auto& o : core.step())
      if (o.request_id == 6 && !o.prompt_logprobs.empty()) { got = o.prompt_logprobs; ++sends; }
  EXPECT_EQ(sends, 1);
  const auto& prompt = reqs[5].prompt_token_ids;
  ASSERT_EQ(got.size(), prompt.size() - 1);
  for (size_t p = 0; p + 1 < prompt.size(); ++p) {
    const auto row = FakeModel::logits_for(std::vector<int32_t>(prompt.begin(), prompt.begin() + long(p + 1)));
    double z = 0;
    for (float v : row) z += std::exp(double(v));
    EXPECT_EQ(got[p].token, prompt[p + 1]);
    EXPECT_NEAR(got[p].logprob, double(row[size_t(prompt[p + 1])]) - std::log(z), 1e-5) << "position " << p;
    ASSERT_EQ(got[p].top_logprobs.size(), 2u);
    const int32_t best = int32_t(std::max_element(row.begin(), row.end()) - row.begin());
    EXPECT_EQ(got[p].top_logprobs[0].first, best);
  }
}

TEST(EngineCore, RejectsBadRequests) {
  FakeModel model(8, 4);
  kv::BlockManagerConfig kc;
  kc.num_blocks = 8;
  kc.block_size = 4;
  EngineCore core(sched::SchedulerConfig{}, kc, model);
  EngineRequest r;
  r.request_id = 1;
  r.prompt_token_ids = {1, 99};
  EXPECT_THROW(core.add_request(r, 0), Error);
  r.prompt_token_ids = {1, 2};
  r.sampling.top_p = 2;
  EXPECT_THROW(core.add_request(r, 0), Error);
}

}  // namespace
}  // namespace oxyd::engine
