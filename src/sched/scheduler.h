// Token-budget scheduler without prefill/decode phases (vLLM v1): each step every running request
// catches its num_computed_tokens up to its num_tokens (decode = 1 token, prefill = a chunk),
// running requests first, then waiting ones join while blocks, max_num_seqs and the budget allow.
// Out of blocks → the newest running request is preempted (blocks freed, recomputed later).
// Invariant: scheduled tokens of a request are exactly [num_computed_tokens, +num_scheduled).
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <unordered_map>
#include <vector>

#include "kv/block_manager.h"
#include "sched/request.h"

namespace oxyd::sched {

struct SchedulerConfig {
  int32_t max_num_seqs = 256;
  int32_t max_num_batched_tokens = 2048;  // token budget per step
  int32_t max_model_len = 4096;           // prompt + output
  int32_t max_queued_requests = 0;        // 0 = unbounded; full → add_request returns false
  /// > 0: the model rotates a sequence of at most this many tokens with one RoPE table and a
  /// longer one with another, every key included (model::Transformer::rope_switch_len). A request
  /// whose KV was computed on the short side and now has more tokens is recomputed from its first
  /// token, as transformers' generate does there; prefix-cache blocks are looked up and registered
  /// per side (the side is mixed into the salt).
  int32_t rope_switch_len = 0;
};

struct ScheduledRequest {
  Request* req;
  int32_t num_scheduled_tokens;
};

struct SchedulerOutput {
  std::vector<ScheduledRequest> scheduled;  // in batch order
  std::vector<int64_t> preempted_ids;
  std::vector<int64_t> finished_ids;        // aborted since the last step (blocks already freed)
  int32_t total_num_scheduled_tokens = 0;
};

/// Owned by the engine thread; not thread-safe (the engine queues add/abort calls).
class Scheduler {
 public:
  Scheduler(SchedulerConfig config, kv::BlockManager& kv);

  /// Queues a request; its max_tokens (-1: up to the context) is clamped to what the context and,
  /// without a sliding window, the KV pool leave. Throws as check_request. False if the queue is full.
  bool add_request(std::shared_ptr<Request> req);
  /// The one place the request limits are checked: the prompt is not empty, fits the context
  /// (max_model_len - 1, both numbers in the message) and the whole KV pool; max_tokens is >= 1
  /// or -1. Throws Error(INVALID_ARGUMENT). Const: callable from another thread (the config is
  /// immutable).
  void check_request(int32_t num_prompt_tokens, int32_t max_tokens) const;
  /// Marks a request aborted; the next schedule() frees its blocks.
  void abort_request(int64_t request_id);

  SchedulerOutput schedule();
  /// After the forward: advances num_computed_tokens; a request that reached its last token gets
  /// `sampled[request_id]` appended and is checked against stop ids / max_tokens / max_model_len.
  /// Returns the requests finished by this step (their blocks are freed).
  std::vector<std::shared_ptr<Request>> update_from_output(const SchedulerOutput& out,
                                                           const std::unordered_map<int64_t, int32_t>& sampled);

  int32_t num_running() const { return int32_t(running_.size()); }
  int32_t num_waiting() const { return int32_t(waiting_.size()); }
  int64_t num_preemptions() const { return num_preemptions_; }
  bool has_unfinished() const { return !running_.empty() || !waiting_.empty() || !aborted_.empty(); }

 private:
  void preempt(std::shared_ptr<Request> req, SchedulerOutput& out);
  /// Recurrent-state models with snapshots: a chunk of n tokens after the first num_computed is cut
  /// to end at the last block end inside it, if any (the state is snapshotted only there).
  int32_t align_to_block_end(int32_t num_computed, int32_t n) const {
    if (!kv_.snapshots_at_block_ends()) return n;
    const int32_t end = (num_computed + n) / kv_.block_size() * kv_.block_size();
    return end > num_computed ? end - num_computed : n;
  }
  bool past_rope_switch(const Request& r) const {
    return config_.rope_switch_len > 0 && r.num_tokens() > config_.rope_switch_len;
  }
  /// The prefix-cache salt of a request's blocks: its own, with the RoPE side mixed in.
  uint64_t block_salt(const Request& r) const {
    return past_rope_switch(r) ? r.cache_salt ^ 0x9e3779b97f4a7c15ull : r.cache_salt;
  }

  SchedulerConfig config_;
  kv::BlockManager& kv_;
  std::deque<std::shared_ptr<Request>> waiting_;
  std::vector<std::shared_ptr<Request>> running_;  // admission order: back = newest
  std::vector<int64_t> aborted_;
  int64_t num_preemptions_ = 0;
};

}  // namespace oxyd::sched
