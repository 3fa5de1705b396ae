// build_forward_batch: flattens the scheduled requests into token/position/slot arrays and points
// the model's ForwardBatch view at them.
#include "runner/forward_batch.h"

#include <algorithm>

#include "core/error.h"

namespace oxyd::runner {

StepBatch build_forward_batch(const sched::SchedulerOutput& out, const kv::BlockManager& kv) {
  StepBatch b;
  const int32_t bs = kv.block_size();
  for (const auto& s : out.scheduled) b.max_blocks_per_req = std::max(b.max_blocks_per_req, int32_t(kv.block_ids(s.req->request_id).size()));
  b.query_start_loc.push_back(0);
  b.block_table.resize(out.scheduled.size() * size_t(b.max_blocks_per_req));
  for (size_t r = 0; r < out.scheduled.size(); ++r) {
    const sched::Request& req = *out.scheduled[r].req;
    const int32_t start = req.num_computed_tokens, n = out.scheduled[r].num_scheduled_tokens;
    OXYD_CHECK(start + n <= req.num_tokens(), "runner: scheduled past the request's tokens");
    const auto ids = kv.block_ids(req.request_id);
    const size_t t0 = b.token_ids.size();
    b.token_ids.insert(b.token_ids.end(), req.token_ids.begin() + start, req.token_ids.begin() + start + n);
    for (int32_t i = 0; i < n; ++i) b.positions.push_back(start + i);
    b.slot_mapping.resize(t0 + size_t(n));
    kv::fill_slot_mapping(ids, bs, start, n, b.slot_mapping.data() + t0);
    kv::fill_block_table_row(ids, b.max_blocks_per_req, b.block_table.data() + r * size_t(b.max_blocks_per_req));
    b.seq_lens.push_back(start + n);
    b.rope_lens.push_back(req.num_tokens());
    b.query_start_loc.push_back(int32_t(b.token_ids.size()));
    if (start + n == req.num_tokens()) {
      b.logits_indices.push_back(int32_t(b.token_ids.size()) - 1);
      b.sampled_request_ids.push_back(req.request_id);
    }
  }
  // Prompt positions p in [start, end) ∩ [0, num_prompt_tokens - 1): their logits score token p+1.
  size_t t0 = 0;
  for (size_t r = 0; r < out.scheduled.size(); ++r) {
    const sched::Request& req = *out.scheduled[r].req;
    const int32_t start = req.num_computed_tokens, n = out.scheduled[r].num_scheduled_tokens;
    if (req.prompt_logprobs >= 0)
      for (int32_t p = start; p < std::min(start + n, req.num_prompt_tokens - 1); ++p) {
        b.logits_indices.push_back(int32_t(t0) + (p - start));
        b.prompt_logits_request_ids.push_back(req.request_id);
        b.prompt_logits_positions.push_back(p);
      }
    t0 += size_t(n);
  }
  b.fwd = {b.token_ids,    b.positions,    b.query_start_loc, b.seq_lens, b.block_table, b.max_blocks_per_req,
           b.slot_mapping, b.logits_indices, {},  // state_slots: set by the caller for hybrid models
           b.rope_lens};
  return b;
}

}  // namespace oxyd::runner
