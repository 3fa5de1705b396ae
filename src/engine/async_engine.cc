// AsyncEngine (see async_engine.h): the engine thread drains adds/aborts under the lock, then
// steps without it, then hands each output to its stream.
#include "engine/async_engine.h"

#include <cstdio>

#include "core/error.h"

namespace oxyd::engine {

bool RequestStream::next(RequestOutput& out) {
  std::unique_lock lock(mu_);
  cv_.wait(lock, [&] { return !q_.empty() || done_; });
  if (q_.empty()) return false;
  out = std::move(q_.front());
  q_.pop_front();
  return true;
}

RequestStream::Wait RequestStream::next_until(RequestOutput& out, std::chrono::steady_clock::time_point deadline) {
  std::unique_lock lock(mu_);
  if (!cv_.wait_until(lock, deadline, [&] { return !q_.empty() || done_; })) return Wait::TIMEOUT;
  if (q_.empty()) return Wait::END;
  out = std::move(q_.front());
  q_.pop_front();
  return Wait::OUTPUT;
}

void RequestStream::push(RequestOutput out, bool queue_full) {
  {
    std::lock_guard lock(mu_);
    queue_full_ = queue_full_ || queue_full;
    if (out.finish_reason != FinishReason::NONE) done_ = true;
    q_.push_back(std::move(out));
  }
  cv_.notify_all();
}

AsyncEngine::AsyncEngine(sched::SchedulerConfig sched_config, kv::BlockManagerConfig kv_config, ModelExecutor& model)
    : core_(sched_config, std::move(kv_config), model), thread_([this] { loop(); }) {
  std::lock_guard lock(mu_);
  stats_ = core_.stats();  // pool size etc. before the first step
}

AsyncEngine::~AsyncEngine() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
  for (auto& [id, s] : streams_) s->push({id, {}, FinishReason::ABORT, 0, 0});
}

std::shared_ptr<RequestStream> AsyncEngine::submit(const EngineRequest& req, uint64_t default_seed) {
  core_.validate(req);
  auto stream = std::make_shared<RequestStream>();
  {
    std::lock_guard lock(mu_);
    if (streams_.count(req.request_id))
      throw_error(ErrorCode::INVALID_ARGUMENT, "request id " + std::to_string(req.request_id) + " is already in use");
    streams_[req.request_id] = stream;
    pending_adds_.emplace_back(req, default_seed);
  }
  cv_.notify_all();
  return stream;
}

void AsyncEngine::abort(int64_t request_id) {
  {
    std::lock_guard lock(mu_);
    pending_aborts_.push_back(request_id);
  }
  cv_.notify_all();
}

EngineStats AsyncEngine::stats() {
  std::lock_guard lock(mu_);
  return stats_;
}

void AsyncEngine::loop() {
  for (;;) {
    std::vector<RequestOutput> outputs;
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [&] { return stop_ || !pending_adds_.empty() || !pending_aborts_.empty() || core_.has_unfinished(); });
      if (stop_) return;
      for (auto& [req, seed] : pending_adds_) {
        bool added = false;
        RequestOutput end{req.request_id, {}, FinishReason::ABORT, 0, 0};
        try {
          added = core_.add_request(req, seed);
        } catch (const std::exception& e) {  // submit() validated it; never let it kill the thread
          end.finish_reason = FinishReason::ERROR;
          end.error = e.what();
        }
        if (!added) {
          const bool queue_full = end.finish_reason == FinishReason::ABORT;
          streams_[req.request_id]->push(std::move(end), queue_full);
          streams_.erase(req.request_id);
        }
      }
      pending_adds_.clear();
      for (int64_t id : pending_aborts_) core_.abort_request(id);
      pending_aborts_.clear();
    }
    bool failed = false;
    std::string error;
    if (core_.has_unfinished()) {
      try {
        outputs = core_.step();
      } catch (const std::exception& e) {
        failed = true;  // not a model error (step() isolates those): end every request, keep serving
        error = e.what();
        std::fprintf(stderr, "oxydllm: engine step failed, ending %zu request(s): %s\n", streams_.size(), e.what());
      }
    }
    std::lock_guard lock(mu_);
    stats_ = core_.stats();
    if (failed) {
      for (auto& [id, s] : streams_) {
        core_.abort_request(id);
        RequestOutput out{id, {}, FinishReason::ERROR, 0, 0};
        out.error = error;
        s->push(std::move(out));
      }
      streams_.clear();
      continue;
    }
    for (auto& o : outputs) {
      auto it = streams_.find(o.request_id);
      if (it == streams_.end()) continue;
      const bool done = o.finish_reason != FinishReason::NONE;
      it->second->push(std::move(o));
      if (done) streams_.erase(it);
    }
  }
}

}  // namespace oxyd::engine
