// build_forward_batch on two scheduled steps (a prefill + a chunked prefill, then a decode + the
// chunk's rest), against arrays written out by hand from vLLM v1's layout rules.
#include <gtest/gtest.h>

#include "runner/forward_batch.h"

namespace oxyd::runner {
namespace {

using V = std::vector<int32_t>;

TEST(ForwardBatch, TwoStepsByHand) {
  kv::BlockManagerConfig kc;
  kc.num_blocks = 8;
  kc.block_size = 4;
  kv::BlockManager kv(kc);
  sched::SchedulerConfig sc;
  sc.max_num_batched_tokens = 10;
  sched::Scheduler s(sc, kv);
  auto a = std::make_shared<sched::Request>(), b = std::make_shared<sched::Request>();
  a->request_id = 1;
  a->token_ids = {10, 11, 12, 13, 14, 15};
  b->request_id = 2;
  b->token_ids = {20, 21, 22, 23, 24, 25, 26, 27, 28};
  ASSERT_TRUE(s.add_request(a));
  ASSERT_TRUE(s.add_request(b));

  auto out = s.schedule();
  auto fb = build_forward_batch(out, kv);
  EXPECT_EQ(fb.token_ids, (V{10, 11, 12, 13, 14, 15, 20, 21, 22, 23}));
  EXPECT_EQ(fb.positions, (V{0, 1, 2, 3, 4, 5, 0, 1, 2, 3}));
  EXPECT_EQ(fb.query_start_loc, (V{0, 6, 10}));
  EXPECT_EQ(fb.seq_lens, (V{6, 4}));
  EXPECT_EQ(fb.max_blocks_per_req, 2);
  EXPECT_EQ(fb.block_table, (V{0, 1, 2, kv::kNullBlock}));
  EXPECT_EQ(fb.slot_mapping, (V{0, 1, 2, 3, 4, 5, 8, 9, 10, 11}));
  EXPECT_EQ(fb.logits_indices, (V{5}));
  EXPECT_EQ(fb.sampled_request_ids, (std::vector<int64_t>{1}));
  s.update_from_output(out, {{1, 99}});

  out = s.schedule();
  fb = build_forward_batch(out, kv);
  EXPECT_EQ(fb.token_ids, (V{99, 24, 25, 26, 27, 28}));
  EXPECT_EQ(fb.positions, (V{6, 4, 5, 6, 7, 8}));
  EXPECT_EQ(fb.query_start_loc, (V{0, 1, 6}));
  EXPECT_EQ(fb.seq_lens, (V{7, 9}));
  EXPECT_EQ(fb.block_table, (V{0, 1, kv::kNullBlock, 2, 3, 4}));
  EXPECT_EQ(fb.slot_mapping, (V{6, 12, 13, 14, 15, 16}));
  EXPECT_EQ(fb.logits_indices, (V{0, 5}));
  EXPECT_EQ(fb.sampled_request_ids, (std::vector<int64_t>{1, 2}));
}

}  // namespace
}  // namespace oxyd::runner
