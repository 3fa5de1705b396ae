// StepGraphs' bookkeeping (model/step_graphs.h): which steps qualify, warm-up before a capture,
// replays after it, failed captures never retried, the cap on graphs held, and every graph
// dropped (and handed back for release) when the device's memory epoch moves.
#include <gtest/gtest.h>

#include <vector>

#include "model/step_graphs.h"

namespace oxyd::model {
namespace {

using Action = StepGraphs::Action;

TEST(StepGraphs, PaddedTableWidthIsTheNextPowerOfTwo) {
  EXPECT_EQ(padded_table_width(0), 1);
  EXPECT_EQ(padded_table_width(1), 1);
  EXPECT_EQ(padded_table_width(3), 4);
  EXPECT_EQ(padded_table_width(16), 16);
  EXPECT_EQ(padded_table_width(17), 32);
}

TEST(StepGraphs, OnlyDecodeStepsHaveAKey) {
  const std::vector<int32_t> ids{5, 6, 7}, qsl_decode{0, 1, 2, 3}, qsl_mixed{0, 2, 3}, lens{9, 4, 30};
  const std::vector<int32_t> logits{0, 1, 2}, lens2{9, 4};
  ForwardBatch b;
  b.token_ids = ids;
  b.query_start_loc = qsl_decode;
  b.seq_lens = lens;
  b.max_blocks_per_req = 5;
  b.logits_indices = logits;
  const std::optional<StepGraphKey> k = decode_step_key(b);
  ASSERT_TRUE(k);
  EXPECT_EQ(*k, (StepGraphKey{3, 3, 8, 3}));
  b.query_start_loc = qsl_mixed;  // a request with two tokens: a prefill chunk
  b.seq_lens = lens2;
  EXPECT_FALSE(decode_step_key(b));
  ForwardBatch empty;
  EXPECT_FALSE(decode_step_key(empty));
}

TEST(StepGraphs, WarmUpThenCaptureThenReplay) {
  StepGraphs g(/*max_graphs=*/4, /*warmup=*/1);
  std::vector<int64_t> rel;
  const StepGraphKey a{1, 1, 4, 1}, b{2, 2, 4, 2};
  EXPECT_EQ(g.plan(a, 0, rel).action, Action::EAGER);    // first sight: workspaces grow eagerly
  EXPECT_EQ(g.plan(a, 0, rel).action, Action::CAPTURE);
  g.captured(a, 7);
  for (int i = 0; i < 3; ++i) {
    const StepGraphs::Plan p = g.plan(a, 0, rel);
    EXPECT_EQ(p.action, Action::REPLAY);
    EXPECT_EQ(p.graph, 7);
  }
  EXPECT_EQ(g.plan(b, 0, rel).action, Action::EAGER);  // another key has its own warm-up
  EXPECT_EQ(g.replays(), 3);
  EXPECT_EQ(g.captures(), 1);
  EXPECT_EQ(g.held(), 1);
  EXPECT_TRUE(rel.empty());
}

TEST(StepGraphs, AFailedCaptureIsNotRetried) {
  StepGraphs g(4, 0);
  std::vector<int64_t> rel;
  const StepGraphKey a{1, 1, 1, 1};
  EXPECT_EQ(g.plan(a, 0, rel).action, Action::CAPTURE);  // warmup 0: the first step captures
  g.captured(a, -1);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(g.plan(a, 0, rel).action, Action::EAGER);
  EXPECT_EQ(g.held(), 0);
}

TEST(StepGraphs, AtMostMaxGraphsAreHeld) {
  StepGraphs g(2, 0);
  std::vector<int64_t> rel;
  for (int64_t t = 1; t <= 3; ++t) {
    const StepGraphKey k{t, t, 1, t};
    const StepGraphs::Plan p = g.plan(k, 0, rel);
    if (t <= 2) {
      EXPECT_EQ(p.action, Action::CAPTURE);
      g.captured(k, t);
    } else {
      EXPECT_EQ(p.action, Action::EAGER);
    }
  }
  EXPECT_EQ(g.held(), 2);
}

TEST(StepGraphs, AMovedMemoryEpochDropsEveryGraph) {
  StepGraphs g(4, 1);
  std::vector<int64_t> rel;
  const StepGraphKey a{1, 1, 2, 1}, b{4, 4, 2, 4};
  for (const auto& [k, id] : {std::pair{a, int64_t(3)}, std::pair{b, int64_t(5)}}) {
    g.plan(k, 10, rel);
    ASSERT_EQ(g.plan(k, 10, rel).action, Action::CAPTURE);
    g.captured(k, id);
  }
  EXPECT_EQ(g.plan(a, 10, rel).action, Action::REPLAY);
  EXPECT_EQ(g.plan(a, 11, rel).action, Action::EAGER);  // a free happened: warm up again
  EXPECT_EQ(rel, (std::vector<int64_t>{3, 5}));
  EXPECT_EQ(g.held(), 0);
  EXPECT_EQ(g.plan(a, 11, rel).action, Action::CAPTURE);
  std::vector<int64_t> all;
  g.captured(a, 8);
  g.clear(all);
  EXPECT_EQ(all, (std::vector<int64_t>{8}));
}

}  // namespace
}  // namespace oxyd::model
