// ThreadPool: every index covered exactly once, repeated short jobs, and a pool of one.
#include <gtest/gtest.h>

#include <atomic>
#include <vector>

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

}  // namespace
}  // namespace oxyd
