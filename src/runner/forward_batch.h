// ForwardBatch: the flat per-step batch the model consumes (docs/architecture.md §3, vLLM v1 layout), built
// from a SchedulerOutput and the block manager's block tables. Host vectors only; the runner
// copies them to the device. Out-of-window block-table entries stay kv::kNullBlock (-1): the
// attention op never reads them (it validates only blocks inside the window).
#pragma once

#include <cstdint>
#include <vector>

#include "kv/block_manager.h"
#include "sched/scheduler.h"

namespace oxyd::runner {

struct ForwardBatch {
  std::vector<int32_t> token_ids;        // [num_tokens]
  std::vector<int32_t> positions;        // [num_tokens]
  std::vector<int32_t> query_start_loc;  // [num_reqs + 1]
  std::vector<int32_t> seq_lens;         // [num_reqs] tokens in the cache after this step
  std::vector<int32_t> block_table;      // [num_reqs, max_blocks_per_req] row-major
  int32_t max_blocks_per_req = 0;
  std::vector<int32_t> slot_mapping;     // [num_tokens]
  std::vector<int32_t> logits_indices;   // [num_sampled] flat token index whose logits are sampled
  std::vector<int64_t> sampled_request_ids;  // [num_sampled] the request of each logits row
  // Prompt-logprob rows follow the sampled rows in logits_indices: row num_sampled + i is the
  // logits at prompt position prompt_logits_positions[i] of prompt_logits_request_ids[i].
  std::vector<int64_t> prompt_logits_request_ids;
  std::vector<int32_t> prompt_logits_positions;

  int32_t num_tokens() const { return int32_t(token_ids.size()); }
  int32_t num_reqs() const { return int32_t(seq_lens.size()); }
  int32_t num_sampled() const { return int32_t(sampled_request_ids.size()); }
};

/// Requests whose step ends at their last token get a logits row; a prefill chunk short of the
/// end does not.
ForwardBatch build_forward_batch(const sched::SchedulerOutput& out, const kv::BlockManager& kv);

}  // namespace oxyd::runner
