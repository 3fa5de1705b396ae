// EmbeddingQueue: the engine thread of a model that embeds or ranks (model::Transformer::embed).
// Requests from every client wait in one FIFO; each step takes the oldest requests whose inputs
// fit max_batch_tokens together (always at least one) and runs them as one packed encode pass —
// no KV cache, no blocks, nothing kept between steps. A model embeds or generates, never both, so
// this thread never competes with a scheduler for its model; across models, engine threads
// share the CPU compute pool job by job (core/thread_pool), and the token budget bounds how long
// one embedding pass holds it, so neither kind starves the other. A request whose deadline passes
// while it waits, or whose client left (EmbeddingInput::cancelled), is dropped before it is run.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <future>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace oxyd::model { class Transformer; }

namespace oxyd::engine {

/// One request: its sequences (token ids, optional token types of the same lengths).
struct EmbeddingInput {
  std::vector<std::vector<int32_t>> ids;
  std::vector<std::vector<int32_t>> types;  // empty, or one per sequence
  /// Still waiting at this time: dropped with Error(INVALID_ARGUMENT) "deadline" instead of run.
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
  /// Set (by the client's thread) when nobody waits for the answer any more: dropped unrun.
  std::shared_ptr<std::atomic<bool>> cancelled;
};

class EmbeddingQueue {
 public:
  /// `model` must outlive the queue. max_queued: requests waiting beyond it are rejected.
  EmbeddingQueue(model::Transformer& model, int64_t max_batch_tokens, int32_t max_queued);
  ~EmbeddingQueue();  // fails waiting requests (Error INTERNAL "shutting down") and joins

  /// Queues `in`; the future yields Transformer::embed's rows for its sequences in order
  /// ([num_seqs, embedding_size]) or its exception. Error(OUT_OF_MEMORY) "queue full" when
  /// max_queued requests are waiting (the server answers 429).
  std::future<std::vector<float>> submit(EmbeddingInput in);
  /// Steps run so far, and requests dropped unrun (deadline passed or cancelled) (tests, metrics).
  int64_t num_steps() const;
  int64_t num_dropped() const;

 private:
  struct Job {
    EmbeddingInput in;
    int64_t tokens = 0;
    std::promise<std::vector<float>> result;
  };
  void loop();
  model::Transformer& model_;
  const int64_t max_batch_tokens_;
  const int32_t max_queued_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Job> queue_;
  bool stop_ = false;
  int64_t steps_ = 0, dropped_ = 0;
  std::thread thread_;
};

}  // namespace oxyd::engine
