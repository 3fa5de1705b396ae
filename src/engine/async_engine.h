// AsyncEngine: one engine thread per model running EngineCore::step() while there is work, and a
// RequestStream per request through which its outputs return. submit() validates on the caller's
// thread (so bad requests fail synchronously) and queues; abort() (client gone, stop string) is
// applied at the next step. A model error ends only the requests that fail alone (EngineCore::step
// isolates them) with FinishReason::ERROR; should step() itself still throw (scheduler state), every
// request in the engine ends with ERROR. Either way the loop goes on serving. Thread-safe; the
// destructor aborts and joins.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_map>

#include "engine/engine_core.h"

namespace oxyd::engine {

/// Outputs of one request, in order. next() blocks until an output or the end.
class RequestStream {
 public:
  /// False once the request finished and every output was read.
  bool next(RequestOutput& out);
  enum class Wait { OUTPUT, END, TIMEOUT };
  /// next() that gives up at `deadline` (TIMEOUT, `out` untouched).
  Wait next_until(RequestOutput& out, std::chrono::steady_clock::time_point deadline);
  bool rejected_queue_full() const { return queue_full_; }

 private:
  friend class AsyncEngine;
  void push(RequestOutput out, bool queue_full = false);
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<RequestOutput> q_;
  bool done_ = false;
  bool queue_full_ = false;
};

class AsyncEngine {
 public:
  AsyncEngine(sched::SchedulerConfig sched_config, kv::BlockManagerConfig kv_config, ModelExecutor& model);
  ~AsyncEngine();

  /// Throws Error(INVALID_ARGUMENT) for a bad request. A full queue gives a stream that ends at
  /// once with FinishReason::ABORT and rejected_queue_full() (HTTP 429 upstream).
  std::shared_ptr<RequestStream> submit(const EngineRequest& req, uint64_t default_seed);
  void abort(int64_t request_id);
  /// Snapshot taken after the last step (thread-safe).
  EngineStats stats();

 private:
  void loop();

  EngineCore core_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::pair<EngineRequest, uint64_t>> pending_adds_;
  std::deque<int64_t> pending_aborts_;
  std::unordered_map<int64_t, std::shared_ptr<RequestStream>> streams_;
  bool stop_ = false;
  EngineStats stats_;  // guarded by mu_
  std::thread thread_;
};

}  // namespace oxyd::engine
