// sched::Request — one generation request as the scheduler sees it (vLLM v1 vocabulary): its token
// ids, how many of them have KV computed (num_computed_tokens), status, and stop limits. No text,
// no sampling state: detokenization and stop strings live in engine/, sampling in sample/.
#pragma once

#include <cstdint>
#include <vector>

namespace oxyd::sched {

enum class RequestStatus { WAITING, RUNNING, PREEMPTED, FINISHED_STOPPED, FINISHED_LENGTH, FINISHED_ABORTED };

inline bool is_finished(RequestStatus s) { return s >= RequestStatus::FINISHED_STOPPED; }

struct Request {
  int64_t request_id = 0;
  std::vector<int32_t> token_ids;   // prompt followed by output
  int32_t num_prompt_tokens = 0;
  int32_t num_computed_tokens = 0;  // tokens whose KV is in the cache
  int32_t max_tokens = 16;          // output tokens
  std::vector<int32_t> stop_token_ids;  // EOS/EOT and user stop ids
  uint64_t cache_salt = 0;
  RequestStatus status = RequestStatus::WAITING;
  int32_t num_cached_tokens = -1;   // prefix-cache hit at first admission (-1: not yet admitted)
  int32_t state_snapshot = -1;      // recurrent-state models: the snapshot a prefix hit resumes from,
                                    // set at admission and consumed by that step's forward
  int32_t num_preemptions = 0;
  int32_t prompt_logprobs = -1;     // >= 0: logits of every prompt position are needed (echo),
                                    // so the prefix cache is not used for this request
  bool kv_past_rope_switch = false; // SchedulerConfig::rope_switch_len: the cached KV was computed
                                    // while the request was longer than it
  bool stop_after_token = false;    // the engine's sampler ended it (a grammar complete where no
                                    // stop id exists): the next token stops it as a stop id would

  int32_t num_tokens() const { return int32_t(token_ids.size()); }
  int32_t num_output_tokens() const { return num_tokens() - num_prompt_tokens; }
};

}  // namespace oxyd::sched
