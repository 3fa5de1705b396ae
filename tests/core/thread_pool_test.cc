// ThreadPool: every index covered exactly once, repeated short jobs, a pool of one; callers on
// several threads taking turns; the scratch each pool thread owns and how a kernel finds its own
// (this_thread_scratch).
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

#include "core/error.h"
#include "core/thread_pool.h"

namespace oxyd {
namespace {

TEST(ThreadPool, CoversEveryIndexOnce) {
  ThreadPool pool(3);
  for (int rep = 0; rep < 2000; ++rep) {
    std::vector<std::atomic<int>> hits(97);
    pool.run([&](int idx, int num) {
      for (int i = idx; i < 97; i += num) hits[i].fetch_add(1);
    });
    for (auto& h : hits) ASSERT_EQ(h.load(), 1);
  }
}

TEST(ThreadPool, ParallelForRanges) {
  std::vector<int> v(1000, 0);
  parallel_for(1000, 10, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) v[i] += 1;
  });
  for (int x : v) ASSERT_EQ(x, 1);
  ThreadPool one(1);
  int calls = 0;
  one.run([&](int idx, int num) { calls += (idx == 0 && num == 1); });
  EXPECT_EQ(calls, 1);
}

TEST(ThreadPool, CallersOnSeveralThreadsTakeTurns) {
  ThreadPool pool(3);
  constexpr int kCallers = 4, kReps = 500, kItems = 61;
  std::atomic<int> owner{-1};
  std::atomic<int> overlaps{0}, wrong{0};
  auto caller = [&](int c) {
    for (int rep = 0; rep < kReps; ++rep) {
      std::vector<std::atomic<int>> hits(kItems);
      pool.run([&](int idx, int num) {
        owner.store(c);
        for (int i = idx; i < kItems; i += num) hits[i].fetch_add(1);
        if (owner.load() != c) overlaps.fetch_add(1);  // another caller's job ran meanwhile
      });
      for (auto& h : hits) wrong.fetch_add(h.load() != 1);
    }
  };
  std::vector<std::thread> threads;
  for (int c = 0; c < kCallers; ++c) threads.emplace_back(caller, c);
  for (auto& t : threads) t.join();
  EXPECT_EQ(overlaps.load(), 0);
  EXPECT_EQ(wrong.load(), 0);
}

TEST(ThreadPool, TurnKeepsThreadZeroScratchAcrossJobs) {
  ThreadPool pool(2);
  std::atomic<int> wrong{0};
  auto caller = [&](uint8_t c) {
    for (int rep = 0; rep < 300; ++rep) {
      const auto turn = pool.take_turn();
      uint8_t* mine = pool.scratch(0).get(3, 256);
      for (int i = 0; i < 256; ++i) mine[i] = c;
      for (int job = 0; job < 2; ++job)
        pool.run([&](int idx, int) {
          uint8_t* s = pool.scratch(idx).get(0, 1024);  // each pool thread its own
          for (int i = 0; i < 1024; ++i) s[i] = c;
        });
      for (int i = 0; i < 256; ++i) wrong.fetch_add(mine[i] != c);
    }
  };
  std::thread a(caller, uint8_t(1)), b(caller, uint8_t(2));
  a.join();
  b.join();
  EXPECT_EQ(wrong.load(), 0);
}

TEST(ThreadPool, HoldsTurnFollowsNestedTurns) {
  ThreadPool pool(2);
  EXPECT_FALSE(pool.holds_turn());
  {
    const auto outer = pool.take_turn();
    EXPECT_TRUE(pool.holds_turn());
    {
      const auto inner = pool.take_turn();  // reentrant
      EXPECT_TRUE(pool.holds_turn());
    }
    EXPECT_TRUE(pool.holds_turn());  // the outer turn is still held
    bool other_thread_holds = true;
    std::thread([&] { other_thread_holds = pool.holds_turn(); }).join();
    EXPECT_FALSE(other_thread_holds);
  }
  EXPECT_FALSE(pool.holds_turn());
}

TEST(ThreadPool, ThisThreadScratchIsThePoolThreadsOwn) {
  ThreadPool& pool = ThreadPool::global();
  const int n = pool.num_threads();
  std::vector<ThreadScratch*> seen(size_t(n), nullptr);
  pool.run([&](int idx, int) { seen[size_t(idx)] = &this_thread_scratch(); });
  for (int i = 0; i < n; ++i) EXPECT_EQ(seen[size_t(i)], &pool.scratch(i)) << "pool thread " << i;
  {
    const auto turn = pool.take_turn();  // the turn's holder runs as thread 0
    EXPECT_EQ(&this_thread_scratch(), &pool.scratch(0));
  }
  // Outside a job and without the turn, thread 0's scratch may be another caller's: refused.
  EXPECT_THROW(this_thread_scratch(), Error);
  // An inline parallel_for (one part) runs under the turn, as thread 0.
  ThreadScratch* inline_scratch = nullptr;
  parallel_for(1, 1, [&](int64_t, int64_t) { inline_scratch = &this_thread_scratch(); });
  EXPECT_EQ(inline_scratch, &pool.scratch(0));
}

TEST(ThreadPool, ParallelForInsideAJobRunsInlineOnTheWorker) {
  ThreadPool& pool = ThreadPool::global();
  if (pool.num_threads() < 2) GTEST_SKIP() << "needs a pool of at least 2 threads";
  std::atomic<int> wrong{0};
  pool.run([&](int idx, int) {
    if (idx == 0) return;
    int64_t covered = 0;
    parallel_for(100, 1, [&](int64_t b, int64_t e) {
      covered += e - b;
      if (&this_thread_scratch() != &pool.scratch(idx)) wrong.fetch_add(1);
    });
    if (covered != 100) wrong.fetch_add(1);
  });
  EXPECT_EQ(wrong.load(), 0);
}

TEST(ThreadScratch, GrowsOnlyAlignedAndCountsUse) {
  ThreadScratch s;
  EXPECT_EQ(s.held(0), 0u);
  uint8_t* p = s.get(0, 100);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 64, 0u);
  EXPECT_EQ(s.held(0), 100u);
  EXPECT_EQ(s.used(0), 100u);
  EXPECT_EQ(s.get(0, 50), p);  // no shrinking, no reallocation
  EXPECT_EQ(s.used(0), 100u);
  s.reserve(1, 4096);
  EXPECT_EQ(s.held(1), 4096u);
  EXPECT_EQ(s.used(1), 0u);
  EXPECT_EQ(s.held(0), 100u);
}

}  // namespace
}  // namespace oxyd
