// EngineCore: the synchronous serving loop of one model, step() = schedule → execute → sample →
// update (nano-vllm's three calls plus sampling). No threads, no text: the front end owns the
// request queue, detokenization (tokenizer::StreamDecoder) and stop strings (StopChecker), and
// calls abort_request when a stop string matches or a client leaves.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "grammar/grammar.h"
#include "kv/block_manager.h"
#include "runner/forward_batch.h"
#include "runner/model_executor.h"
#include "sample/sampler.h"
#include "sched/scheduler.h"

namespace oxyd::engine {

/// What runs the forward (runner/model_executor.h): runner::ModelRunner over a real model; tests
/// use fakes.
using ModelExecutor = runner::ModelExecutor;

struct EngineRequest {
  int64_t request_id = 0;
  std::vector<int32_t> prompt_token_ids;
  sample::SamplingParams sampling;
  int32_t max_tokens = 16;  // -1: up to the context (the scheduler clamps to what is left)
  std::vector<int32_t> stop_token_ids;  // EOS/EOT + user ids; `ignore_eos` = leave EOS out; with
                                        // sampling.min_tokens they cannot be sampled before it
  uint64_t cache_salt = 0;
  int32_t prompt_logprobs = -1;  // >= 0: logprob of every prompt token after the first + top-k
  /// Constrained decoding: each sampled token is masked by and advances this grammar (one matcher
  /// per request, kept across preemption, which recomputes KV only). nullptr: unconstrained.
  std::shared_ptr<const grammar::CompiledGrammar> grammar = nullptr;
};

/// ERROR: the model step threw for this request even run alone; the engine ended it and keeps
/// serving the others (a step that fails is retried in halves to find the culprits).
enum class FinishReason { NONE, STOP, LENGTH, ABORT, ERROR };

/// One step's news for one request.
struct RequestOutput {
  int64_t request_id;
  std::vector<sample::SampleResult> new_tokens;  // this step's tokens (0 or 1)
  FinishReason finish_reason = FinishReason::NONE;
  int32_t num_prompt_tokens = 0;
  int32_t num_cached_tokens = 0;  // prompt tokens served from the prefix cache
  /// With the first token, when asked: entry i scores prompt token i+1 (raw logprobs).
  std::vector<sample::SampleResult> prompt_logprobs = {};
  std::string error = {};  // with FinishReason::ERROR: what failed
  /// With STOP: the last token is text (it completed the request's grammar), not a stop id.
  bool last_token_is_text = false;
};

/// Gauges and counters for /metrics.
struct EngineStats {
  int32_t num_running = 0, num_waiting = 0;
  int32_t kv_blocks_total = 0, kv_blocks_used = 0;
  kv::PrefixCacheStats prefix_cache;
  int64_t num_preemptions = 0;
  int64_t num_generated_tokens = 0;
  int64_t num_prompt_tokens_computed = 0;  // prefill work actually done (cache hits excluded)
};

class EngineCore {
 public:
  EngineCore(sched::SchedulerConfig sched_config, kv::BlockManagerConfig kv_config, ModelExecutor& model);

  /// Validates (throws Error INVALID_ARGUMENT) and queues. False if the queue is full.
  bool add_request(const EngineRequest& req, uint64_t default_seed);
  /// add_request's checks only, the one validation of a request's limits: token ids in the
  /// vocabulary; prompt, context, KV fit and max_tokens (Scheduler::check_request); min_tokens and
  /// sampling fields (SamplingParams::validate). Touches no mutable state (safe from a front-end thread).
  void validate(const EngineRequest& req) const;
  void abort_request(int64_t request_id) { sched_.abort_request(request_id); }
  /// One engine iteration. Returns outputs of requests that got a token or finished. When the
  /// model throws, the step's requests are re-run in halves (batch order) until the ones that fail
  /// alone are found: those end with FinishReason::ERROR and the message, and so do the requests
  /// that read their unwritten blocks as prefix hits in the same step; the rest go on. Throws
  /// only for an error outside the model step (scheduler state).
  std::vector<RequestOutput> step();
  bool has_unfinished() const { return sched_.has_unfinished(); }
  const kv::BlockManager& kv() const { return kv_; }
  const sched::Scheduler& scheduler() const { return sched_; }
  EngineStats stats() const;

 private:
  struct Live {
    std::shared_ptr<sched::Request> req;
    std::unique_ptr<sample::RequestSampler> sampler;
    std::vector<sample::SampleResult> prompt_logprobs = {};  // [num_prompt_tokens - 1]
    bool prompt_logprobs_sent = false;
  };
  struct StepResults {
    std::unordered_map<int64_t, int32_t> sampled;               // for update_from_output
    std::unordered_map<int64_t, sample::SampleResult> results;  // the token and its logprobs
    std::unordered_map<int64_t, std::string> failed;            // request → what failed
    std::unordered_set<int64_t> bad_kv;  // failed requests whose KV of this step is unwritten or wrong
  };
  /// One forward over `part` (a slice of this step's batch) and its sampling. Throws when the
  /// model does (nothing recorded); a sampling error fails only its request.
  void forward(std::span<const sched::ScheduledRequest> part, StepResults& st);
  /// forward(), bisecting `part` on a throw down to the requests that fail alone. A model with
  /// recurrent-state slots is not re-run (its states may have advanced): the whole part fails.
  void forward_isolating(std::span<const sched::ScheduledRequest> part, StepResults& st);
  /// Fails, transitively, the requests of `so` that read (as prefix-cache hits) blocks a bad_kv
  /// request was writing in this step: they would otherwise read unwritten KV (n > 1 choices of
  /// one prompt share its blocks from the step they are admitted in).
  void fail_readers_of_bad_kv(const sched::SchedulerOutput& so, StepResults& st);

  /// Ends a request's life here: its Live entry and its recurrent-state slot.
  void drop(int64_t request_id);

  kv::BlockManager kv_;
  sched::Scheduler sched_;
  ModelExecutor& model_;
  std::unordered_map<int64_t, Live> live_;
  // Recurrent-state slots (models with linear_attention layers): one per request from its first
  // forward until it finishes or is preempted (it then restarts at position 0, from a zero state).
  std::unordered_map<int64_t, int32_t> state_slot_;
  std::vector<int32_t> free_state_slots_;
  int32_t first_snapshot_slot_ = 0;  // kv snapshot id s lives in model state slot first_snapshot_slot_ + s
  std::vector<float> logits_;
  std::vector<int32_t> argmax_ids_;  // a step's argmax ids (ModelExecutor::run_argmax)
  int64_t num_generated_tokens_ = 0;
  int64_t num_tokens_computed_ = 0;
  size_t num_scheduled_ = 0;  // this step's batch size (for the failure log line)
};

}  // namespace oxyd::engine
