// EmbeddingQueue (see embedding_queue.h).
#include "engine/embedding_queue.h"

#include "core/error.h"
#include "model/transformer.h"

namespace oxyd::engine {

EmbeddingQueue::EmbeddingQueue(model::Transformer& model, int64_t max_batch_tokens, int32_t max_queued)
    : model_(model), max_batch_tokens_(std::max<int64_t>(1, max_batch_tokens)), max_queued_(max_queued) {
  thread_ = std::thread([this] { loop(); });
}

EmbeddingQueue::~EmbeddingQueue() {
  {
    std::lock_guard<std::mutex> lk(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
  for (Job& j : queue_)
    j.result.set_exception(std::make_exception_ptr(Error(ErrorCode::INTERNAL, "the model is shutting down")));
}

std::future<std::vector<float>> EmbeddingQueue::submit(EmbeddingInput in) {
  Job job;
  for (const auto& s : in.ids) job.tokens += static_cast<int64_t>(s.size());
  job.in = std::move(in);
  std::future<std::vector<float>> f = job.result.get_future();
  {
    std::lock_guard<std::mutex> lk(mu_);
    if (static_cast<int32_t>(queue_.size()) >= max_queued_)
      throw Error(ErrorCode::OUT_OF_MEMORY, "the embedding queue is full (" + std::to_string(max_queued_) +
                                                " requests waiting); retry later");
    queue_.push_back(std::move(job));
  }
  cv_.notify_one();
  return f;
}

int64_t EmbeddingQueue::num_steps() const {
  std::lock_guard<std::mutex> lk(mu_);
  return steps_;
}

int64_t EmbeddingQueue::num_dropped() const {
  std::lock_guard<std::mutex> lk(mu_);
  return dropped_;
}

void EmbeddingQueue::loop() {
  for (;;) {
    std::vector<Job> batch;
    {
      std::unique_lock<std::mutex> lk(mu_);
      cv_.wait(lk, [&] { return stop_ || !queue_.empty(); });
      if (stop_) return;
      int64_t tokens = 0;
      const auto now = std::chrono::steady_clock::now();
      while (!queue_.empty() && (batch.empty() || tokens + queue_.front().tokens <= max_batch_tokens_)) {
        Job& front = queue_.front();
        const bool gone = front.in.cancelled && front.in.cancelled->load();
        if (gone || now >= front.in.deadline) {  // nobody will read its rows: never run it
          front.result.set_exception(std::make_exception_ptr(Error(
              ErrorCode::INVALID_ARGUMENT, gone ? "the request was cancelled while it waited in the embedding queue"
                                                : "the request waited in the embedding queue past its deadline")));
          queue_.pop_front();
          ++dropped_;
          continue;
        }
        tokens += queue_.front().tokens;
        batch.push_back(std::move(queue_.front()));
        queue_.pop_front();
      }
    }
    if (batch.empty()) continue;  // every waiting request was dropped
    // One packed pass over every sequence of the batch.
    std::vector<int32_t> ids, types, starts{0};
    bool any_types = false;
    for (const Job& j : batch) any_types = any_types || !j.in.types.empty();
    for (const Job& j : batch)
      for (size_t s = 0; s < j.in.ids.size(); ++s) {
        ids.insert(ids.end(), j.in.ids[s].begin(), j.in.ids[s].end());
        if (any_types) {
          if (j.in.types.empty()) types.insert(types.end(), j.in.ids[s].size(), 0);
          else types.insert(types.end(), j.in.types[s].begin(), j.in.types[s].end());
        }
        starts.push_back(static_cast<int32_t>(ids.size()));
      }
    try {
      const std::vector<float> rows = model_.embed({ids, types, starts});
      const size_t D = static_cast<size_t>(model_.embedding_size());
      size_t at = 0;
      for (Job& j : batch) {
        const size_t n = j.in.ids.size() * D;
        j.result.set_value(std::vector<float>(rows.begin() + long(at), rows.begin() + long(at + n)));
        at += n;
      }
    } catch (...) {
      // Inputs were validated on submit; a failure here fails the whole pass.
      for (Job& j : batch) j.result.set_exception(std::current_exception());
    }
    std::lock_guard<std::mutex> lk(mu_);
    ++steps_;
  }
}

}  // namespace oxyd::engine
