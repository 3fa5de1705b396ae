// EngineCore::step (see engine_core.h). Each request samples with its own RequestSampler, so its
// tokens do not depend on what else is batched; a preempted request keeps its sampler and only
// recomputes KV.
#include "engine/engine_core.h"

#include "core/error.h"

namespace oxyd::engine {

EngineCore::EngineCore(sched::SchedulerConfig sched_config, kv::BlockManagerConfig kv_config, ModelExecutor& model)
    : kv_(std::move(kv_config)), sched_(sched_config, kv_), model_(model) {}

void EngineCore::validate(const EngineRequest& r) const {
  for (int32_t t : r.prompt_token_ids)
    if (t < 0 || t >= model_.vocab_size())
      throw_error(ErrorCode::INVALID_ARGUMENT, "prompt token id " + std::to_string(t) + " is outside the vocabulary [0, " +
                                                   std::to_string(model_.vocab_size()) + ")");
  r.sampling.validate(model_.vocab_size());
  sched_.check_request(int32_t(r.prompt_token_ids.size()), r.max_tokens);
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
  auto sampler = std::make_unique<sample::RequestSampler>(r.sampling, model_.vocab_size(), r.prompt_token_ids, default_seed);
  if (!sched_.add_request(req)) return false;
  Live live{std::move(req), std::move(sampler), {}, false};
  if (r.prompt_logprobs >= 0) live.prompt_logprobs.resize(r.prompt_token_ids.size() - 1);
  live_[r.request_id] = std::move(live);
  return true;
}

std::vector<RequestOutput> EngineCore::step() {
  std::vector<RequestOutput> outputs;
  const sched::SchedulerOutput so = sched_.schedule();
  for (int64_t id : so.finished_ids) {  // aborted
    outputs.push_back({id, {}, FinishReason::ABORT, 0, 0});
    live_.erase(id);
  }
  if (so.scheduled.empty()) return outputs;

  const runner::ForwardBatch batch = runner::build_forward_batch(so, kv_);
  num_tokens_computed_ += batch.num_tokens();
  num_generated_tokens_ += int64_t(batch.sampled_request_ids.size());
  const int32_t vocab = model_.vocab_size();
  logits_.resize(batch.logits_indices.size() * size_t(vocab));  // sized, not cleared: execute fills every row
  model_.execute(batch, logits_);

  std::unordered_map<int64_t, int32_t> sampled;
  std::unordered_map<int64_t, sample::SampleResult> results;
  for (size_t i = 0; i < batch.sampled_request_ids.size(); ++i) {
    const int64_t id = batch.sampled_request_ids[i];
    auto& live = live_.at(id);
    sample::SampleResult r = live.sampler->sample(std::span<const float>(logits_).subspan(i * size_t(vocab), size_t(vocab)));
    sampled[id] = r.token;
    results[id] = std::move(r);
  }
  for (size_t i = 0; i < batch.prompt_logits_request_ids.size(); ++i) {
    Live& live = live_.at(batch.prompt_logits_request_ids[i]);
    const int32_t p = batch.prompt_logits_positions[i];
    const size_t row = size_t(batch.num_sampled()) + i;
    sample::SampleResult& lp = live.prompt_logprobs[size_t(p)];  // a recompute overwrites, same values
    lp.token = live.req->token_ids[size_t(p + 1)];
    sample::raw_logprobs(std::span<const float>(logits_).subspan(row * size_t(vocab), size_t(vocab)), lp.token,
                         live.req->prompt_logprobs, lp);
  }
  const auto finished = sched_.update_from_output(so, sampled);
  for (auto& [id, r] : results) {
    const sched::Request& req = *live_.at(id).req;
    RequestOutput out{id, {std::move(r)}, FinishReason::NONE, req.num_prompt_tokens, std::max(0, req.num_cached_tokens)};
    if (req.status == sched::RequestStatus::FINISHED_STOPPED) out.finish_reason = FinishReason::STOP;
    if (req.status == sched::RequestStatus::FINISHED_LENGTH) out.finish_reason = FinishReason::LENGTH;
    Live& live = live_.at(id);
    if (!live.prompt_logprobs.empty() && !live.prompt_logprobs_sent) {
      out.prompt_logprobs = live.prompt_logprobs;
      live.prompt_logprobs_sent = true;
    }
    outputs.push_back(std::move(out));
  }
  for (const auto& req : finished) live_.erase(req->request_id);
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
