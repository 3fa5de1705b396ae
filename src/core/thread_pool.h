// ThreadPool: a persistent set of worker threads for the CPU backend's compute kernels. The
// caller is thread 0 and takes part; run() returns when every thread has finished its share.
// Workers spin briefly between jobs (decode issues thousands of short jobs per second) and then
// sleep on a condition variable. One job at a time: callers on several threads (the engines of
// models served side by side) take turns, a job each, or several in a row under take_turn().
// Each pool thread owns a ThreadScratch for the kernels it runs (index 0: the caller's).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "core/thread_scratch.h"

namespace oxyd {

class ThreadPool {
 public:
  /// num_threads counts the caller; 1 means run everything inline.
  explicit ThreadPool(int num_threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int num_threads() const { return num_threads_; }
  /// Runs fn(thread_idx, num_threads) on every thread, the caller as thread 0. Callers on other
  /// threads wait for their turn; fn must not call run() of this pool on another thread.
  void run(const std::function<void(int, int)>& fn);

  /// A held turn (take_turn): the pool is the holder's until the Turn is destroyed.
  class Turn {
   public:
    explicit Turn(ThreadPool& pool);
    ~Turn();
    Turn(const Turn&) = delete;
    Turn& operator=(const Turn&) = delete;

   private:
    ThreadPool& pool_;
  };
  /// Holds this pool for the calling thread until the Turn is destroyed: several run()s in a row
  /// (and thread 0's scratch between them) without another caller's job in between. Reentrant:
  /// run() and take_turn() on the holding thread go ahead.
  Turn take_turn() { return Turn(*this); }
  /// Whether the calling thread holds this pool's turn.
  bool holds_turn() const { return holder_.load(std::memory_order_relaxed) == std::this_thread::get_id(); }
  /// The scratch of pool thread idx (0: the caller holding the turn).
  ThreadScratch& scratch(int idx) { return scratch_[idx]; }

  /// One wait of a spin loop inside a job (e.g. a barrier between two phases of fn): a CPU pause,
  /// and every 64th spin a yield of the core, as the pool's own waits do.
  static void spin_pause(int spins);

  /// Process-wide pool: OXYD_NUM_THREADS if set, else the number of hardware threads.
  static ThreadPool& global();
  /// Replace the global pool's size (call before the first use of global() or between jobs).
  static void set_global_threads(int num_threads);

 private:
  void worker(int idx);

  int num_threads_;
  std::unique_ptr<ThreadScratch[]> scratch_;
  std::recursive_mutex turn_mu_;  // callers take turns (see take_turn)
  std::atomic<std::thread::id> holder_{};  // the thread holding the turn (set and cleared by it)
  int turn_depth_ = 0;                     // the holder's nesting of Turns
  std::vector<std::thread> threads_;
  const std::function<void(int, int)>* job_ = nullptr;
  std::atomic<uint64_t> generation_{0};
  std::atomic<int> pending_{0};
  std::atomic<bool> stop_{false};
  std::mutex mu_;
  std::condition_variable cv_;
};

/// Splits [0, n) into contiguous ranges of at least `grain` items over the global pool and calls
/// fn(begin, end) for each non-empty range.
void parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn);

}  // namespace oxyd
