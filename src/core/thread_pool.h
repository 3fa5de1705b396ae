// ThreadPool: a persistent set of worker threads for the CPU backend's compute kernels. The
// caller is thread 0 and takes part; run() returns when every thread has finished its share.
// Workers spin briefly between jobs (decode issues thousands of short jobs per second) and then
// sleep on a condition variable. One job at a time: run() is not reentrant and is meant to be
// called from a single thread (the engine thread).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace oxyd {

class ThreadPool {
 public:
  /// num_threads counts the caller; 1 means run everything inline.
  explicit ThreadPool(int num_threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int num_threads() const { return num_threads_; }
  /// Runs fn(thread_idx, num_threads) on every thread, the caller as thread 0.
  void run(const std::function<void(int, int)>& fn);

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
