// EngineCore::step (see engine_core.h). Each request samples with its own RequestSampler, so its
// tokens do not depend on what else is batched; a preempted request keeps its sampler and only
// recomputes KV. A step whose forward throws is retried in halves (forward_isolating) so only the
// requests that fail alone end with ERROR; the others' tokens are those of an unbroken step.
#include "engine/engine_core.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <thread>

#include "core/error.h"
#include "core/thread_pool.h"

namespace oxyd::engine {

namespace {
// A model with recurrent states can resume a prefix hit only from a state snapshot: without a
// snapshot pool its hits would skip the state's tokens, so the cache is off.
kv::BlockManagerConfig checked_kv_config(kv::BlockManagerConfig c, const ModelExecutor& model) {
  if (model.num_state_slots() > 0 && c.num_state_snapshots == 0) c.enable_prefix_caching = false;
  return c;
}
}  // namespace

EngineCore::EngineCore(sched::SchedulerConfig sched_config, kv::BlockManagerConfig kv_config, ModelExecutor& model)
    : kv_(checked_kv_config(std::move(kv_config), model)), sched_(sched_config, kv_), model_(model) {
  // Slots [0, first_snapshot_slot_) for running requests, the rest back kv's state snapshots.
  first_snapshot_slot_ = model_.num_state_slots() - kv_.num_state_snapshots();
  if (first_snapshot_slot_ < 0 || (kv_.num_state_snapshots() > 0 && first_snapshot_slot_ == 0))
    throw_error(ErrorCode::INVALID_ARGUMENT, "engine: " + std::to_string(kv_.num_state_snapshots()) +
                                                 " state snapshots need more than as many model state slots (" +
                                                 std::to_string(model_.num_state_slots()) + ")");
  for (int32_t s = first_snapshot_slot_ - 1; s >= 0; --s) free_state_slots_.push_back(s);
}

void EngineCore::drop(int64_t request_id) {
  live_.erase(request_id);
  if (auto it = state_slot_.find(request_id); it != state_slot_.end()) {
    free_state_slots_.push_back(it->second);
    state_slot_.erase(it);
  }
}

// The one validation of a request: token ids here, prompt/context/KV/max_tokens in the scheduler,
// min_tokens and the sampling fields in SamplingParams (in the order a client reads them).
void EngineCore::validate(const EngineRequest& r) const {
  for (int32_t t : r.prompt_token_ids)
    if (t < 0 || t >= model_.vocab_size())
      throw_error(ErrorCode::INVALID_ARGUMENT, "prompt token id " + std::to_string(t) + " is outside the vocabulary [0, " +
                                                   std::to_string(model_.vocab_size()) + ")");
  sched_.check_request(int32_t(r.prompt_token_ids.size()), r.max_tokens);
  r.sampling.validate(model_.vocab_size(), r.max_tokens);
}

bool EngineCore::add_request(const EngineRequest& r, uint64_t default_seed) {
  if (live_.count(r.request_id))
    throw_error(ErrorCode::INVALID_ARGUMENT, "request id " + std::to_string(r.request_id) + " is already running");
  validate(r);
  auto req = std::make_shared<sched::Request>();
  req->request_id = r.request_id;
  req->token_ids = r.prompt_token_ids;
  req->max_tokens = r.max_tokens;
  req->stop_token_ids = r.stop_token_ids;
  req->cache_salt = r.cache_salt;
  req->prompt_logprobs = std::min(r.prompt_logprobs, sample::kMaxTopLogprobs);
  sample::SamplingParams sp = r.sampling;
  if (sp.min_tokens > 0 && sp.min_tokens_stop_ids.empty()) sp.min_tokens_stop_ids = r.stop_token_ids;  // vLLM
  auto sampler = std::make_unique<sample::RequestSampler>(std::move(sp), model_.vocab_size(), r.prompt_token_ids, default_seed);
  if (r.grammar) sampler->set_grammar(std::make_unique<grammar::Matcher>(r.grammar, r.stop_token_ids,
                                                                      /*terminate_when_complete=*/r.stop_token_ids.empty()));
  if (!sched_.add_request(req)) return false;
  Live live{std::move(req), std::move(sampler), {}, false};
  if (r.prompt_logprobs >= 0) live.prompt_logprobs.resize(r.prompt_token_ids.size() - 1);
  live_[r.request_id] = std::move(live);
  return true;
}

void EngineCore::forward(std::span<const sched::ScheduledRequest> part, StepResults& st) {
  sched::SchedulerOutput so;
  so.scheduled.assign(part.begin(), part.end());
  runner::StepBatch batch = runner::build_forward_batch(so, kv_);
  if (model_.num_state_slots() > 0) {
    for (const sched::ScheduledRequest& s : part) {
      auto it = state_slot_.find(s.req->request_id);
      if (it == state_slot_.end()) {
        if (free_state_slots_.empty())
          throw Error(ErrorCode::INTERNAL, "no recurrent-state slot free (" + std::to_string(model_.num_state_slots()) +
                                               " slots for max_num_seqs running requests)");
        it = state_slot_.emplace(s.req->request_id, free_state_slots_.back()).first;
        free_state_slots_.pop_back();
      }
      if (s.req->state_snapshot >= 0) {  // admitted on a prefix-cache hit: resume from its snapshot
        model_.copy_state(first_snapshot_slot_ + s.req->state_snapshot, it->second);
        s.req->state_snapshot = -1;
      }
      batch.state_slots.push_back(it->second);
    }
    batch.fwd.state_slots = batch.state_slots;
  }
  const int32_t vocab = model_.vocab_size();
  // Grammar masks of this step's constrained requests are computed on a worker while the forward
  // pass runs (issue 25: mask time off the step's critical path); each matcher keeps its mask for
  // sample(). The engine thread touches no matcher until get(). Only where a core is free for the
  // worker: on a CPU forward that uses every core, the worker would take a core from the pool's
  // threads, which all wait for the slowest at each barrier, to save the masks' ~1% of a step
  // (16 masks of ~25 µs in a ~30 ms step). OXYD_GRAMMAR_OVERLAP=0 / 1 forces inline / the worker.
  static const int forced = [] {  // -1: not forced
    const char* e = std::getenv("OXYD_GRAMMAR_OVERLAP");
    return e ? int(std::string(e) != "0") : -1;
  }();
  static const int cores = int(std::thread::hardware_concurrency());
  const bool overlap = forced >= 0 ? forced == 1 : !model_.forward_on_host() || cores > ThreadPool::global().num_threads();
  std::vector<grammar::Matcher*> constrained;
  for (int64_t id : overlap ? batch.sampled_request_ids : std::vector<int64_t>{}) {
    auto it = live_.find(id);
    grammar::Matcher* g = it != live_.end() ? it->second.sampler->grammar() : nullptr;
    if (g && !g->is_terminated()) constrained.push_back(g);
  }
  std::future<void> masks;
  if (!constrained.empty())
    masks = std::async(std::launch::async, [&constrained] {
      std::vector<int32_t> words;
      for (grammar::Matcher* g : constrained) {
        words.resize(size_t((g->vocab_size() + 31) / 32));
        g->fill_bitmask(words);
      }
    });
  // Every row greedy with nothing but its argmax to take (and no prompt logprobs): the executor
  // may take the argmax where the logits are, and only the ids come back.
  int32_t argmax_cols = batch.prompt_logits_request_ids.empty() && constrained.empty() ? -1 : 0;
  for (int64_t id : argmax_cols < 0 ? batch.sampled_request_ids : std::vector<int64_t>{}) {
    auto it = live_.find(id);
    const int32_t c = it != live_.end() ? it->second.sampler->argmax_only_cols() : 0;
    argmax_cols = c > 0 && (argmax_cols < 0 || argmax_cols == c) ? c : 0;
    if (argmax_cols == 0) break;
  }
  const bool argmaxed = argmax_cols > 0 && model_.run_argmax(batch.fwd, argmax_cols, argmax_ids_);
  // A throw in either: nothing of this part was recorded.
  const std::span<const float> logits = argmaxed ? std::span<const float>{} : model_.run(batch.fwd, logits_);
  if (masks.valid()) masks.get();
  num_tokens_computed_ += batch.num_tokens();
  num_generated_tokens_ += int64_t(batch.sampled_request_ids.size());

  for (size_t i = 0; i < batch.sampled_request_ids.size(); ++i) {
    const int64_t id = batch.sampled_request_ids[i];
    try {
      auto& live = live_.at(id);
      sample::SampleResult r = argmaxed ? live.sampler->accept_argmax(argmax_ids_[i])
                                        : live.sampler->sample(logits.subspan(i * size_t(vocab), size_t(vocab)));
      // A grammar that is over (terminated: nothing may follow) ends the request here, also where
      // the request has no stop id to sample.
      if (const grammar::Matcher* g = live.sampler->grammar(); g && g->is_terminated()) live.req->stop_after_token = true;
      st.sampled[id] = r.token;
      st.results[id] = std::move(r);
    } catch (const std::exception& e) {
      st.failed.emplace(id, e.what());
    }
  }
  for (size_t i = 0; i < batch.prompt_logits_request_ids.size(); ++i) {
    const int64_t id = batch.prompt_logits_request_ids[i];
    if (st.failed.count(id)) continue;
    try {
      Live& live = live_.at(id);
      const int32_t p = batch.prompt_logits_positions[i];
      const size_t row = size_t(batch.num_sampled()) + i;
      sample::SampleResult& lp = live.prompt_logprobs[size_t(p)];  // a recompute overwrites, same values
      lp.token = live.req->token_ids[size_t(p + 1)];
      sample::raw_logprobs(logits.subspan(row * size_t(vocab), size_t(vocab)), lp.token,
                           live.req->prompt_logprobs, lp);
    } catch (const std::exception& e) {
      st.failed.emplace(id, e.what());
      st.sampled.erase(id);
      st.results.erase(id);
    }
  }
}

void EngineCore::forward_isolating(std::span<const sched::ScheduledRequest> part, StepResults& st) {
  try {
    forward(part, st);
    return;
  } catch (const std::exception& e) {
    // A hybrid model's recurrent states may already have advanced for some layers of this part:
    // a retry would run on them twice. Every request of the part fails (no bisection).
    if (part.size() == 1 || model_.num_state_slots() > 0) {
      for (const sched::ScheduledRequest& s : part) {
        st.failed.emplace(s.req->request_id, e.what());
        st.bad_kv.insert(s.req->request_id);
      }
      return;
    }
    if (part.size() == num_scheduled_)
      std::fprintf(stderr, "oxydllm: engine step of %zu request(s) failed (%s); retrying them in halves\n",
                   part.size(), e.what());
  }
  // Halves in batch order: a request that reads prefix blocks registered by an earlier one in the
  // same step still finds them written.
  const size_t mid = part.size() / 2;
  forward_isolating(part.first(mid), st);
  forward_isolating(part.subspan(mid), st);
}

void EngineCore::fail_readers_of_bad_kv(const sched::SchedulerOutput& so, StepResults& st) {
  const int32_t bs = kv_.block_size();
  std::unordered_map<int32_t, int64_t> suspect;  // block a bad_kv request was writing in this step → it
  std::unordered_set<int64_t> marked;
  for (bool grew = !st.bad_kv.empty(); grew;) {
    grew = false;
    for (const auto& s : so.scheduled) {
      const int64_t id = s.req->request_id;
      if (!st.bad_kv.count(id) || !marked.insert(id).second) continue;
      const auto ids = kv_.block_ids(id);
      const int32_t first = s.req->num_computed_tokens / bs;
      const int32_t last = (s.req->num_computed_tokens + s.num_scheduled_tokens - 1) / bs;
      for (int32_t b = first; b <= last && b < int32_t(ids.size()); ++b)
        if (ids[size_t(b)] != kv::kNullBlock) suspect.emplace(ids[size_t(b)], id);
    }
    for (const auto& s : so.scheduled) {
      const int64_t id = s.req->request_id;
      if (st.bad_kv.count(id)) continue;
      const auto ids = kv_.block_ids(id);
      const int32_t num_read = std::min<int32_t>(int32_t(ids.size()), s.req->num_computed_tokens / bs);  // full hit blocks
      for (int32_t b = 0; b < num_read; ++b) {
        const auto writer = suspect.find(ids[size_t(b)]);
        if (writer == suspect.end()) continue;
        std::string why = "the model step failed for a request whose prompt prefix this one shares: " +
                          st.failed.at(writer->second);
        st.failed[id] = std::move(why);
        st.bad_kv.insert(id);
        st.sampled.erase(id);
        st.results.erase(id);
        grew = true;
        break;
      }
    }
  }
}

std::vector<RequestOutput> EngineCore::step() {
  std::vector<RequestOutput> outputs;
  sched::SchedulerOutput so = sched_.schedule();
  for (int64_t id : so.finished_ids) {  // aborted
    if (live_.count(id)) outputs.push_back({id, {}, FinishReason::ABORT, 0, 0});
    drop(id);
  }
  for (int64_t id : so.preempted_ids)  // recomputed from position 0 later, in a fresh slot
    if (auto it = state_slot_.find(id); it != state_slot_.end()) {
      free_state_slots_.push_back(it->second);
      state_slot_.erase(it);
    }
  if (so.scheduled.empty()) return outputs;

  StepResults st;
  num_scheduled_ = so.scheduled.size();
  forward_isolating(so.scheduled, st);
  fail_readers_of_bad_kv(so, st);

  // Requests whose forward failed even alone: ended with ERROR, their blocks freed and kept out
  // of the prefix cache (they may never have been written); the scheduler drops them next step.
  if (!st.failed.empty()) {
    std::erase_if(so.scheduled, [&](const sched::ScheduledRequest& s) { return st.failed.count(s.req->request_id) != 0; });
    for (const auto& [id, error] : st.failed) {
      std::fprintf(stderr, "oxydllm: request %lld failed in the model step: %s\n", static_cast<long long>(id),
                   error.c_str());
      const sched::Request& req = *live_.at(id).req;
      RequestOutput out{id, {}, FinishReason::ERROR, req.num_prompt_tokens, std::max(0, req.num_cached_tokens)};
      out.error = error;
      outputs.push_back(std::move(out));
      kv_.free(id, /*drop_cached=*/true);
      sched_.abort_request(id);
      drop(id);
    }
  }
  // Recurrent-state models: the state of a request whose computed tokens now end at a cached
  // block's end is kept as that block's snapshot (before update_from_output frees finished ones).
  if (kv_.snapshots_at_block_ends())
    for (const sched::ScheduledRequest& s : so.scheduled) {
      const int64_t id = s.req->request_id;
      const int32_t snap = kv_.take_state_snapshot(id, s.req->num_computed_tokens + s.num_scheduled_tokens);
      if (snap >= 0) model_.copy_state(state_slot_.at(id), first_snapshot_slot_ + snap);
    }
  const auto finished = sched_.update_from_output(so, st.sampled);
  for (auto& [id, r] : st.results) {
    const sched::Request& req = *live_.at(id).req;
    RequestOutput out{id, {std::move(r)}, FinishReason::NONE, req.num_prompt_tokens, std::max(0, req.num_cached_tokens)};
    if (req.status == sched::RequestStatus::FINISHED_STOPPED) {
      out.finish_reason = FinishReason::STOP;
      out.last_token_is_text = req.stop_after_token && std::find(req.stop_token_ids.begin(), req.stop_token_ids.end(),
                                                                 out.new_tokens[0].token) == req.stop_token_ids.end();
    }
    if (req.status == sched::RequestStatus::FINISHED_LENGTH) out.finish_reason = FinishReason::LENGTH;
    Live& live = live_.at(id);
    if (!live.prompt_logprobs.empty() && !live.prompt_logprobs_sent) {
      out.prompt_logprobs = live.prompt_logprobs;
      live.prompt_logprobs_sent = true;
    }
    outputs.push_back(std::move(out));
  }
  for (const auto& req : finished) drop(req->request_id);
  return outputs;
}

EngineStats EngineCore::stats() const {
  EngineStats s;
  s.num_running = sched_.num_running();
  s.num_waiting = sched_.num_waiting();
  s.kv_blocks_total = kv_.num_blocks();
  s.kv_blocks_used = kv_.num_used_blocks();
  s.prefix_cache = kv_.stats();
  s.num_preemptions = sched_.num_preemptions();
  s.num_generated_tokens = num_generated_tokens_;
  s.num_prompt_tokens_computed = num_tokens_computed_ - num_generated_tokens_;
  return s;
}

}  // namespace oxyd::engine
