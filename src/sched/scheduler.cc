// Scheduler::schedule / update_from_output (see scheduler.h). Running requests are served in
// admission order so the oldest make progress; preemption takes the newest (running_.back()).
#include "sched/scheduler.h"

#include <algorithm>
#include <string>

#include "core/error.h"

namespace oxyd::sched {

Scheduler::Scheduler(SchedulerConfig config, kv::BlockManager& kv) : config_(config), kv_(kv) {
  if (config_.max_num_seqs <= 0 || config_.max_num_batched_tokens <= 0 || config_.max_model_len <= 1)
    throw_error(ErrorCode::INVALID_ARGUMENT, "sched: max_num_seqs and max_num_batched_tokens must be > 0 "
                                             "and max_model_len > 1");
}

void Scheduler::check_request(int32_t n, int32_t max_tokens) const {
  auto bad = [](const std::string& m) { throw_error(ErrorCode::INVALID_ARGUMENT, m); };
  if (n == 0) bad("the prompt is empty");
  const int32_t ctx = config_.max_model_len;
  if (n >= ctx)
    bad("the prompt has " + std::to_string(n) + " tokens but the context is " + std::to_string(ctx) +
        " tokens (this model's maximum context length; at least one must be left for the completion)");
  if (max_tokens == 0 || max_tokens < -1) bad("max_tokens must be >= 1, got " + std::to_string(max_tokens));
  const int64_t pool_tokens = int64_t(kv_.num_blocks()) * kv_.block_size();
  if (n + 1 > pool_tokens)
    bad("the prompt has " + std::to_string(n) + " tokens but the KV cache holds only " + std::to_string(pool_tokens));
}

bool Scheduler::add_request(std::shared_ptr<Request> req) {
  const int32_t n = req->num_prompt_tokens = req->num_tokens();
  check_request(n, req->max_tokens);
  if (config_.max_queued_requests > 0 && int32_t(waiting_.size()) >= config_.max_queued_requests) return false;
  // Without a sliding window a request alone must fit the pool, or it would preempt itself forever.
  const int64_t pool_tokens = int64_t(kv_.num_blocks()) * kv_.block_size();
  const int64_t limit = kv_.sliding_window() ? config_.max_model_len : std::min<int64_t>(config_.max_model_len, pool_tokens);
  req->max_tokens = int32_t(req->max_tokens < 0 ? limit - n : std::min<int64_t>(req->max_tokens, limit - n));
  req->status = RequestStatus::WAITING;
  waiting_.push_back(std::move(req));
  return true;
}

void Scheduler::abort_request(int64_t request_id) { aborted_.push_back(request_id); }

void Scheduler::preempt(std::shared_ptr<Request> req, SchedulerOutput& out) {
  kv_.free(req->request_id);
  req->status = RequestStatus::PREEMPTED;
  req->num_computed_tokens = 0;
  ++req->num_preemptions;
  ++num_preemptions_;
  out.preempted_ids.push_back(req->request_id);
  waiting_.push_front(std::move(req));
}

SchedulerOutput Scheduler::schedule() {
  SchedulerOutput out;
  for (int64_t id : aborted_) {
    auto match = [id](const std::shared_ptr<Request>& r) { return r->request_id == id; };
    auto set_aborted = [&](auto& q) {
      auto it = std::find_if(q.begin(), q.end(), match);
      if (it == q.end()) return false;
      (*it)->status = RequestStatus::FINISHED_ABORTED;
      q.erase(it);
      return true;
    };
    if (set_aborted(running_) || set_aborted(waiting_)) out.finished_ids.push_back(id);
    kv_.free(id);
  }
  aborted_.clear();

  int32_t budget = config_.max_num_batched_tokens;
  bool preempted = false;
  for (size_t i = 0; i < running_.size() && budget > 0;) {
    const std::shared_ptr<Request> req = running_[i];
    int32_t n = std::min(req->num_tokens() - req->num_computed_tokens, budget);
    if (n <= 0) {
      ++i;
      continue;
    }
    // Its KV carries the short RoPE table and it has just grown past the switch: recompute all.
    const bool recompute = req->num_computed_tokens > 0 && !req->kv_past_rope_switch && past_rope_switch(*req);
    if (recompute) {
      kv_.free(req->request_id);
      req->num_computed_tokens = 0;
      req->kv_past_rope_switch = true;
      n = std::min(req->num_tokens(), budget);
    }
    n = align_to_block_end(req->num_computed_tokens, n);
    kv_.remove_skipped_blocks(req->request_id, req->num_computed_tokens);
    bool ok = false;
    while (!(ok = kv_.allocate_slots(req->request_id, req->token_ids, req->num_computed_tokens, n, nullptr,
                                     block_salt(*req)))) {
      std::shared_ptr<Request> victim = running_.back();  // index >= i: never an already-scheduled one
      running_.pop_back();
      preempt(victim, out);
      preempted = true;
      if (victim == req) break;
    }
    if (!ok) break;
    out.scheduled.push_back({req.get(), n});
    budget -= n;
    ++i;
  }

  // Admit waiting requests (not in a step that had to preempt: blocks are short).
  while (!preempted && !waiting_.empty() && budget > 0 && int32_t(running_.size()) < config_.max_num_seqs) {
    const std::shared_ptr<Request> req = waiting_.front();
    const kv::ComputedBlocks hit = req->prompt_logprobs >= 0 ? kv::ComputedBlocks{}
                                                             : kv_.get_computed_blocks(req->token_ids, block_salt(*req));
    int32_t n = align_to_block_end(hit.num_computed_tokens, std::min(req->num_tokens() - hit.num_computed_tokens, budget));
    // Cached blocks matched past the last snapshot (a shared prompt prefix whose end no request has
    // snapshotted): end this chunk there, so its state is kept and the next request hits it.
    if (kv_.snapshots_at_block_ends() && hit.num_computed_tokens + n > hit.num_matched_tokens &&
        hit.num_matched_tokens > hit.num_computed_tokens)
      n = hit.num_matched_tokens - hit.num_computed_tokens;
    if (!kv_.allocate_slots(req->request_id, req->token_ids, hit.num_computed_tokens, n, &hit, block_salt(*req)))
      break;
    req->kv_past_rope_switch = past_rope_switch(*req);
    waiting_.pop_front();
    req->num_computed_tokens = hit.num_computed_tokens;
    req->state_snapshot = hit.state_snapshot;
    if (req->num_cached_tokens < 0) req->num_cached_tokens = hit.num_computed_tokens;
    req->status = RequestStatus::RUNNING;
    running_.push_back(req);
    out.scheduled.push_back({req.get(), n});
    budget -= n;
  }
  out.total_num_scheduled_tokens = config_.max_num_batched_tokens - budget;
  return out;
}

std::vector<std::shared_ptr<Request>> Scheduler::update_from_output(
    const SchedulerOutput& out, const std::unordered_map<int64_t, int32_t>& sampled) {
  std::vector<std::shared_ptr<Request>> finished;
  for (const auto& s : out.scheduled) {
    Request* r = s.req;
    r->num_computed_tokens += s.num_scheduled_tokens;
    if (r->num_computed_tokens < r->num_tokens()) continue;  // a prefill chunk short of the end
    const auto tok = sampled.find(r->request_id);
    OXYD_CHECK(tok != sampled.end(), "sched: no sampled token for a request at its last token");
    r->token_ids.push_back(tok->second);
    const bool stop = r->stop_after_token || std::find(r->stop_token_ids.begin(), r->stop_token_ids.end(),
                                                       tok->second) != r->stop_token_ids.end();
    if (stop) r->status = RequestStatus::FINISHED_STOPPED;
    else if (r->num_output_tokens() >= r->max_tokens || r->num_tokens() >= config_.max_model_len)
      r->status = RequestStatus::FINISHED_LENGTH;
    else continue;
    kv_.free(r->request_id);
    const auto it = std::find_if(running_.begin(), running_.end(), [r](const auto& p) { return p.get() == r; });
    finished.push_back(*it);
    running_.erase(it);
  }
  return finished;
}

}  // namespace oxyd::sched
