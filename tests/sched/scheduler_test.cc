// sched::Scheduler + kv::BlockManager driven by a fake model over a fake paged KV: every step
// writes each scheduled token's id at its slot_mapping, then "attends" by reading every position
// of the window back through the block table, which must give the request's own tokens (so
// prefix-cache hits, chunking and preemption never feed wrong KV). The next token is a hash of
// all tokens, so the oracle is each request generated alone; outputs must match exactly.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>

#include "core/error.h"
#include "sched/scheduler.h"

namespace oxyd::sched {
namespace {

int32_t fake_next(const std::vector<int32_t>& t) {
  uint64_t h = 1469598103934665603ull;
  for (int32_t x : t) h = (h ^ uint64_t(x)) * 1099511628211ull;
  return int32_t(h % 50);
}

std::vector<int32_t> alone(std::vector<int32_t> t, int32_t max_tokens, const std::vector<int32_t>& stop) {
  for (int32_t n = 0; n < max_tokens; ++n) {
    t.push_back(fake_next(t));
    if (std::find(stop.begin(), stop.end(), t.back()) != stop.end()) break;
  }
  return t;
}

struct Sim {
  int32_t bs, window;
  std::vector<int32_t> slots;
  kv::BlockManager& kv;
  int64_t checked = 0;
  // Writes the step's new KV, then checks every read of every scheduled token.
  std::unordered_map<int64_t, int32_t> forward(const SchedulerOutput& out) {
    for (const auto& s : out.scheduled) {
      std::vector<int32_t> sm(size_t(s.num_scheduled_tokens));
      kv::fill_slot_mapping(kv.block_ids(s.req->request_id), bs, s.req->num_computed_tokens, s.num_scheduled_tokens, sm.data());
      for (int32_t j = 0; j < s.num_scheduled_tokens; ++j) slots[size_t(sm[j])] = s.req->token_ids[size_t(s.req->num_computed_tokens + j)];
    }
    std::unordered_map<int64_t, int32_t> sampled;
    for (const auto& s : out.scheduled) {
      const auto ids = kv.block_ids(s.req->request_id);
      const int32_t end = s.req->num_computed_tokens + s.num_scheduled_tokens;
      for (int32_t p = s.req->num_computed_tokens; p < end; ++p)
        for (int32_t q = window ? std::max(0, p - window + 1) : 0; q <= p; ++q) {
          const int32_t bid = ids[size_t(q / bs)];
          EXPECT_NE(bid, kv::kNullBlock) << "read of a dropped block";
          if (bid == kv::kNullBlock) continue;
          EXPECT_EQ(slots[size_t(bid * bs + q % bs)], s.req->token_ids[size_t(q)]) << "wrong KV at " << q;
          ++checked;
        }
      if (end == s.req->num_tokens())
        sampled[s.req->request_id] = fake_next(s.req->token_ids);
    }
    return sampled;
  }
};

void run_workload(int32_t window, uint32_t seed) {
  kv::BlockManagerConfig kc;
  kc.num_blocks = window ? 18 : 40;
  kc.block_size = 4;
  kc.sliding_window = window;
  kv::BlockManager kv(kc);
  SchedulerConfig sc;
  sc.max_num_seqs = 8;
  sc.max_num_batched_tokens = 32;
  sc.max_model_len = 120;
  Scheduler sched(sc, kv);
  Sim sim{4, window, std::vector<int32_t>(160, -1), kv};
  std::mt19937 rng(seed);
  std::vector<std::vector<int32_t>> prefixes;
  for (int p = 0; p < 3; ++p) {
    prefixes.emplace_back();
    for (int i = 0; i < 20; ++i) prefixes.back().push_back(int32_t(rng() % 50));
  }
  std::map<int64_t, std::shared_ptr<Request>> all;
  std::set<int64_t> aborted;
  int64_t next = 1;
  int steps = 0;
  int64_t preemptions = 0;
  while (next <= 60 || sched.has_unfinished()) {
    ASSERT_LT(++steps, 5000) << "no progress";
    for (int a = int(rng() % 3); a > 0 && next <= 60; --a) {
      auto r = std::make_shared<Request>();
      r->request_id = next++;
      r->token_ids = prefixes[rng() % 3];
      r->token_ids.resize(size_t(4 + rng() % 17));
      for (int n = int(rng() % 30); n > 0; --n) r->token_ids.push_back(int32_t(rng() % 50));
      r->max_tokens = int32_t(1 + rng() % 12);
      r->stop_token_ids = {7};
      ASSERT_TRUE(sched.add_request(r));
      all[r->request_id] = r;
    }
    if (rng() % 15 == 0 && next > 1) {
      const int64_t id = int64_t(1 + rng() % uint64_t(next - 1));
      if (!is_finished(all[id]->status)) { sched.abort_request(id); aborted.insert(id); }
    }
    const SchedulerOutput out = sched.schedule();
    preemptions += int64_t(out.preempted_ids.size());
    ASSERT_LE(out.total_num_scheduled_tokens, sc.max_num_batched_tokens);
    ASSERT_LE(int32_t(out.scheduled.size()), sc.max_num_seqs);
    int32_t total = 0;
    for (const auto& s : out.scheduled) total += s.num_scheduled_tokens;
    ASSERT_EQ(total, out.total_num_scheduled_tokens);
    const auto sampled = sim.forward(out);
    sched.update_from_output(out, sampled);
  }
  for (const auto& [id, r] : all) {
    if (aborted.count(id)) continue;
    const auto want = alone(std::vector<int32_t>(r->token_ids.begin(), r->token_ids.begin() + r->num_prompt_tokens),
                            r->max_tokens, r->stop_token_ids);
    EXPECT_EQ(r->token_ids, want) << "request " << id;
  }
  EXPECT_EQ(kv.num_used_blocks(), 0);
  EXPECT_GT(preemptions, 0);
  EXPECT_GT(kv.stats().num_hit_tokens, 100);
  EXPECT_GT(sim.checked, 1000);
}

TEST(Scheduler, FakeModelFullAttention) {
  for (uint32_t s = 1; s <= 3; ++s) run_workload(0, s);
}
TEST(Scheduler, FakeModelSlidingWindow) {
  for (uint32_t s = 1; s <= 3; ++s) run_workload(6, s);
}

TEST(Scheduler, RejectsPromptsThatCanNeverFitAndFullQueue) {
  kv::BlockManagerConfig kc;
  kc.num_blocks = 4;
  kc.block_size = 4;
  kv::BlockManager kv(kc);
  SchedulerConfig sc;
  sc.max_model_len = 100;
  sc.max_queued_requests = 1;
  Scheduler sched(sc, kv);
  auto mk = [](int n) { auto r = std::make_shared<Request>(); r->token_ids.assign(size_t(n), 1); return r; };
  try {
    sched.add_request(mk(100));
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("100 tokens but the context is 100"), std::string::npos) << e.what();
  }
  EXPECT_THROW(sched.add_request(mk(16)), Error);  // 16 + 1 > 16 KV slots
  EXPECT_THROW(sched.add_request(mk(0)), Error);
  EXPECT_TRUE(sched.add_request(mk(5)));
  EXPECT_FALSE(sched.add_request(mk(5)));  // queue full → HTTP 429 upstream
}

// Recurrent-state models: prefill chunks end at block ends (snapshots are taken only there), and a
// hit resumes at a snapshot.
TEST(Scheduler, StateSnapshotsCutChunksAtBlockEnds) {
  kv::BlockManagerConfig kc;
  kc.num_blocks = 32;
  kc.block_size = 4;
  kc.num_state_snapshots = 4;
  kv::BlockManager kv(kc);
  SchedulerConfig sc;
  sc.max_num_batched_tokens = 7;
  Scheduler sched(sc, kv);
  auto mk = [](int64_t id, std::vector<int32_t> t) {
    auto r = std::make_shared<Request>();
    r->request_id = id;
    r->token_ids = std::move(t);
    r->max_tokens = 1;
    return r;
  };
  std::vector<int32_t> a(18);
  for (size_t i = 0; i < a.size(); ++i) a[i] = int32_t(i + 10);
  ASSERT_TRUE(sched.add_request(mk(1, a)));
  std::vector<int32_t> chunks;
  while (sched.has_unfinished()) {
    const SchedulerOutput out = sched.schedule();
    ASSERT_EQ(out.scheduled.size(), 1u);
    const auto& s = out.scheduled[0];
    chunks.push_back(s.num_scheduled_tokens);
    kv.take_state_snapshot(1, s.req->num_computed_tokens + s.num_scheduled_tokens);
    sched.update_from_output(out, {{1, 0}});
  }
  EXPECT_EQ(chunks, (std::vector<int32_t>{4, 4, 4, 4, 2}));  // budget 7, cut to block ends; the tail
  EXPECT_EQ(kv.stats().num_state_snapshots, 4);
  // Shares 10 tokens: hit at the snapshot at 8, first chunk [8, 15) cut to 12.
  std::vector<int32_t> b(a.begin(), a.begin() + 10);
  b.insert(b.end(), {1, 2, 3, 4, 5, 6});
  ASSERT_TRUE(sched.add_request(mk(2, b)));
  SchedulerOutput out = sched.schedule();
  EXPECT_EQ(out.scheduled[0].req->num_computed_tokens, 8);
  EXPECT_EQ(out.scheduled[0].req->state_snapshot, 1);  // the second snapshot taken (ids 0, 1, ...)
  EXPECT_EQ(out.scheduled[0].num_scheduled_tokens, 4);
}

}  // namespace
}  // namespace oxyd::sched
