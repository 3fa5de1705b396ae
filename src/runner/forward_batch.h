// build_forward_batch: one step's batch (docs/architecture.md §3, vLLM v1 layout) from a
// SchedulerOutput and the block manager's block tables. The StepBatch owns the host arrays; its
// `fwd` is the model's ForwardBatch viewing them (the one batch type: nothing is copied or
// translated on the way to the model). Out-of-window block-table entries stay kv::kNullBlock (-1):
// the attention op never reads them (it validates only blocks inside the window).
#pragma once

#include <cstdint>
#include <vector>

#include "kv/block_manager.h"
#include "model/forward_batch.h"
#include "sched/scheduler.h"

namespace oxyd::runner {

/// Movable, not copyable: `fwd` points into the vectors' buffers, which a move hands over intact.
struct StepBatch {
  std::vector<int32_t> token_ids;        // [num_tokens]
  std::vector<int32_t> positions;        // [num_tokens]
  std::vector<int32_t> query_start_loc;  // [num_reqs + 1]
  std::vector<int32_t> seq_lens;         // [num_reqs] tokens in the cache after this step
  std::vector<int32_t> block_table;      // [num_reqs, max_blocks_per_req] row-major
  int32_t max_blocks_per_req = 0;
  std::vector<int32_t> slot_mapping;     // [num_tokens]
  std::vector<int32_t> logits_indices;   // [num_logits] flat token index whose logits are needed
  std::vector<int64_t> sampled_request_ids;  // [num_sampled] the request of each sampled logits row
  // Prompt-logprob rows follow the sampled rows in logits_indices: row num_sampled + i is the
  // logits at prompt position prompt_logits_positions[i] of prompt_logits_request_ids[i].
  std::vector<int64_t> prompt_logits_request_ids;
  std::vector<int32_t> prompt_logits_positions;
  std::vector<int32_t> state_slots;      // [num_reqs] recurrent-state slots (hybrid models; set by the engine)
  std::vector<int32_t> rope_lens;        // [num_reqs] each request's num_tokens() (ForwardBatch::rope_lens)
  model::ForwardBatch fwd;  // the model's view of the arrays above (set by build_forward_batch)

  StepBatch() = default;
  StepBatch(StepBatch&&) = default;
  StepBatch& operator=(StepBatch&&) = default;
  StepBatch(const StepBatch&) = delete;
  StepBatch& operator=(const StepBatch&) = delete;

  int32_t num_tokens() const { return int32_t(token_ids.size()); }
  int32_t num_reqs() const { return int32_t(seq_lens.size()); }
  int32_t num_sampled() const { return int32_t(sampled_request_ids.size()); }
};

/// Requests whose step ends at their last token get a logits row; a prefill chunk short of the
/// end does not.
StepBatch build_forward_batch(const sched::SchedulerOutput& out, const kv::BlockManager& kv);

}  // namespace oxyd::runner
