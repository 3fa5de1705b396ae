// A model step that throws ends only the request(s) that fail alone. The executor throws whenever
// a chosen "poison" token id is in its batch (and never samples it). Oracle: every other request
// run alone on a fresh engine. Checks: the poisoned request ends with ERROR and the message, the
// requests batched with it give the same tokens as alone, every block returns to the pool, the
// poisoned request's never-written blocks are not served as prefix-cache hits, and the engine
// goes on serving (synchronous EngineCore and the threaded AsyncEngine).
#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "core/error.h"
#include "engine/async_engine.h"
#include "fake_model.h"

namespace oxyd::engine {
namespace {

constexpr int32_t kPoison = 31;

class PoisonModel : public FakeModel {
 public:
  using FakeModel::FakeModel;
  std::atomic<int> num_throws{0};
  void execute(const model::ForwardBatch& b, std::vector<float>& logits) override {
    for (int32_t t : b.token_ids)
      if (t == kPoison) {
        ++num_throws;
        throw Error(ErrorCode::INTERNAL, "poisoned token in the batch");
      }
    FakeModel::execute(b, logits);
    for (size_t i = 0; i < b.logits_indices.size(); ++i) logits[i * size_t(vocab_size()) + kPoison] = -1e9f;
  }
};

kv::BlockManagerConfig kv_config() {
  kv::BlockManagerConfig kc;
  kc.num_blocks = 64;
  kc.block_size = 4;
  return kc;
}

// Prompt tokens in [0, 31): never the poison.
EngineRequest clean(int64_t id, int32_t max_tokens = 8) {
  EngineRequest r;
  r.request_id = id;
  for (int i = 0; i < 9 + int(id % 5); ++i) r.prompt_token_ids.push_back(int32_t((id * 7 + i * 3) % 31));
  r.max_tokens = max_tokens;
  r.sampling.temperature = 0.8f;
  r.sampling.seed = uint64_t(id);
  return r;
}

// 8 clean tokens (two full blocks, registered in the prefix cache when it is scheduled), then the poison.
std::vector<int32_t> poisoned_prefix() { return {3, 1, 4, 1, 5, 9, 2, 6}; }
EngineRequest poisoned(int64_t id) {
  EngineRequest r;
  r.request_id = id;
  r.prompt_token_ids = poisoned_prefix();
  r.prompt_token_ids.push_back(kPoison);
  r.prompt_token_ids.push_back(7);
  r.max_tokens = 8;
  return r;
}

std::vector<int32_t> alone(const EngineRequest& r) {
  PoisonModel model(64, 4);
  EngineCore core(sched::SchedulerConfig{}, kv_config(), model);
  EXPECT_TRUE(core.add_request(r, 5));
  std::vector<int32_t> out;
  while (core.has_unfinished())
    for (auto& o : core.step()) {
      EXPECT_NE(o.finish_reason, FinishReason::ERROR);
      for (auto& t : o.new_tokens) out.push_back(t.token);
    }
  return out;
}

TEST(StepIsolation, OnlyThePoisonedRequestFails) {
  PoisonModel model(64, 4);
  EngineCore core(sched::SchedulerConfig{}, kv_config(), model);
  std::vector<EngineRequest> reqs;
  for (int64_t id = 1; id <= 6; ++id) reqs.push_back(id == 4 ? poisoned(id) : clean(id));
  for (const auto& r : reqs) ASSERT_TRUE(core.add_request(r, 5));
  std::map<int64_t, std::vector<int32_t>> got;
  std::map<int64_t, RequestOutput> last;
  for (int step = 0; core.has_unfinished(); ++step) {
    ASSERT_LT(step, 1000);
    for (auto& o : core.step()) {
      for (auto& t : o.new_tokens) got[o.request_id].push_back(t.token);
      last[o.request_id] = o;
    }
  }
  EXPECT_GT(model.num_throws.load(), 0);  // the first step batched all six, the poison with them
  EXPECT_EQ(last[4].finish_reason, FinishReason::ERROR);
  EXPECT_EQ(last[4].error, "poisoned token in the batch");
  EXPECT_TRUE(got[4].empty());
  for (int64_t id : {1, 2, 3, 5, 6}) {
    EXPECT_EQ(got[id], alone(clean(id))) << "request " << id;
    EXPECT_TRUE(last[id].finish_reason == FinishReason::LENGTH || last[id].finish_reason == FinishReason::STOP)
        << "request " << id;
  }
  EXPECT_EQ(core.kv().num_used_blocks(), 0);
  EXPECT_EQ(core.stats().num_running + core.stats().num_waiting, 0);

  // The poisoned request's two full prompt blocks were registered but never written: a later
  // prompt with the same prefix must compute them, not read them from the prefix cache.
  EngineRequest q = clean(7);
  q.prompt_token_ids = poisoned_prefix();
  q.prompt_token_ids.push_back(11);
  ASSERT_TRUE(core.add_request(q, 5));
  std::vector<int32_t> q_tokens;
  while (core.has_unfinished())
    for (auto& o : core.step()) {
      EXPECT_EQ(o.num_cached_tokens, 0);
      EXPECT_NE(o.finish_reason, FinishReason::ERROR);
      for (auto& t : o.new_tokens) q_tokens.push_back(t.token);
    }
  EXPECT_EQ(q_tokens, alone(q));
  EXPECT_EQ(core.kv().num_used_blocks(), 0);
}

TEST(StepIsolation, EveryRequestFailingAloneFails) {
  PoisonModel model(64, 4);
  EngineCore core(sched::SchedulerConfig{}, kv_config(), model);
  for (int64_t id = 1; id <= 3; ++id) ASSERT_TRUE(core.add_request(poisoned(id), 5));
  std::map<int64_t, FinishReason> reason;
  while (core.has_unfinished())
    for (auto& o : core.step()) reason[o.request_id] = o.finish_reason;
  for (int64_t id = 1; id <= 3; ++id) EXPECT_EQ(reason[id], FinishReason::ERROR) << id;
  EXPECT_EQ(core.kv().num_used_blocks(), 0);
}

// Two requests with one prompt (n = 2) are admitted in the same step and the second reads the
// first's prompt blocks as prefix-cache hits, computing only its last tokens (no poison among them,
// so its forward alone succeeds). The first fails; the blocks the second read were never written,
// so it must fail too rather than answer from garbage KV.
TEST(StepIsolation, RequestsReadingAFailedRequestsBlocksFailToo) {
  PoisonModel model(64, 4);
  EngineCore core(sched::SchedulerConfig{}, kv_config(), model);
  EngineRequest a;
  a.request_id = 1;
  a.prompt_token_ids = {3, 1, 4, kPoison, 5, 9, 2, 6, 8, 7};
  a.max_tokens = 8;
  EngineRequest b = a;
  b.request_id = 2;
  ASSERT_TRUE(core.add_request(a, 5));
  ASSERT_TRUE(core.add_request(b, 5));
  ASSERT_TRUE(core.add_request(clean(3), 5));
  std::map<int64_t, std::vector<int32_t>> got;
  std::map<int64_t, RequestOutput> last;
  while (core.has_unfinished())
    for (auto& o : core.step()) {
      for (auto& t : o.new_tokens) got[o.request_id].push_back(t.token);
      last[o.request_id] = o;
    }
  EXPECT_EQ(last[1].finish_reason, FinishReason::ERROR);
  EXPECT_EQ(last[1].error, "poisoned token in the batch");
  EXPECT_EQ(last[2].num_cached_tokens, 8);  // it did read request 1's two prompt blocks
  EXPECT_EQ(last[2].finish_reason, FinishReason::ERROR);
  EXPECT_NE(last[2].error.find("poisoned token in the batch"), std::string::npos) << last[2].error;
  EXPECT_TRUE(got[2].empty());
  EXPECT_EQ(got[3], alone(clean(3)));
  EXPECT_EQ(core.kv().num_used_blocks(), 0);
}

TEST(StepIsolation, AsyncEngineKeepsServingTheOthers) {
  PoisonModel model(64, 4);
  model.delay_us = 200;
  AsyncEngine engine(sched::SchedulerConfig{}, kv_config(), model);
  std::map<int64_t, std::vector<int32_t>> got;
  std::map<int64_t, RequestOutput> last;
  std::mutex mu;
  std::vector<std::thread> threads;
  for (int64_t id = 1; id <= 6; ++id)
    threads.emplace_back([&, id] {
      auto s = engine.submit(id == 3 ? poisoned(id) : clean(id, 40), 5);
      std::vector<int32_t> toks;
      RequestOutput o, end;
      while (s->next(o)) {
        for (auto& t : o.new_tokens) toks.push_back(t.token);
        end = o;
      }
      std::lock_guard lock(mu);
      got[id] = toks;
      last[id] = end;
    });
  for (auto& t : threads) t.join();
  EXPECT_GT(model.num_throws.load(), 0);
  EXPECT_EQ(last[3].finish_reason, FinishReason::ERROR);
  EXPECT_EQ(last[3].error, "poisoned token in the batch");
  for (int64_t id : {1, 2, 4, 5, 6}) {
    EXPECT_EQ(got[id], alone(clean(id, 40))) << "request " << id;
    EXPECT_NE(last[id].finish_reason, FinishReason::ERROR) << "request " << id;
  }
  for (int i = 0; i < 100 && engine.stats().kv_blocks_used != 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  EXPECT_EQ(engine.stats().kv_blocks_used, 0);
  auto s = engine.submit(clean(9), 5);
  std::vector<int32_t> toks;
  RequestOutput o;
  while (s->next(o))
    for (auto& t : o.new_tokens) toks.push_back(t.token);
  EXPECT_EQ(toks, alone(clean(9)));
}

// A model with recurrent-state slots (hybrid: Gated DeltaNet layers) is not re-run in halves: its
// states may have advanced before the throw. Every request of the failing step ends with ERROR;
// each batch names distinct slots in range; slots come back (finish, error), so more requests than
// slots are served one after another, each as alone.
class StatefulPoisonModel : public PoisonModel {
 public:
  using PoisonModel::PoisonModel;
  static constexpr int32_t kSlots = 3;
  int32_t num_state_slots() const override { return kSlots; }
  void execute(const model::ForwardBatch& b, std::vector<float>& logits) override {
    EXPECT_EQ(b.state_slots.size(), b.seq_lens.size());
    std::set<int32_t> distinct(b.state_slots.begin(), b.state_slots.end());
    EXPECT_EQ(distinct.size(), b.state_slots.size());
    for (int32_t s : b.state_slots) EXPECT_TRUE(s >= 0 && s < kSlots) << s;
    PoisonModel::execute(b, logits);
  }
};

TEST(StepIsolation, StatefulModelFailsTheWholeStepAndReusesSlots) {
  StatefulPoisonModel model(64, 4);
  sched::SchedulerConfig sc;
  sc.max_num_seqs = StatefulPoisonModel::kSlots;
  EngineCore core(sc, kv_config(), model);
  for (int64_t id : {1, 2, 3}) ASSERT_TRUE(core.add_request(id == 2 ? poisoned(id) : clean(id), 5));
  std::map<int64_t, FinishReason> reason;
  while (core.has_unfinished())
    for (auto& o : core.step()) reason[o.request_id] = o.finish_reason;
  EXPECT_EQ(model.num_throws.load(), 1);  // no retries
  for (int64_t id : {1, 2, 3}) EXPECT_EQ(reason[id], FinishReason::ERROR) << id;
  EXPECT_EQ(core.kv().num_used_blocks(), 0);
  std::map<int64_t, std::vector<int32_t>> got;
  for (int64_t id = 10; id < 17; ++id) ASSERT_TRUE(core.add_request(clean(id), 5));  // 7 requests, 3 slots
  while (core.has_unfinished())
    for (auto& o : core.step()) {
      EXPECT_NE(o.finish_reason, FinishReason::ERROR) << o.error;
      for (auto& t : o.new_tokens) got[o.request_id].push_back(t.token);
    }
  for (int64_t id = 10; id < 17; ++id) EXPECT_EQ(got[id], alone(clean(id))) << id;
}

}  // namespace
}  // namespace oxyd::engine
