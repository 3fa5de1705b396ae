#include "core/thread_pool.h"

#include "core/error.h"

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <new>

#if defined(__x86_64__)
#include <immintrin.h>
#define OXYD_PAUSE() _mm_pause()
#else
#define OXYD_PAUSE() std::this_thread::yield()
#endif

namespace oxyd {
namespace {
constexpr int kSpinIters = 1 << 16;
// Spinning threads yield the core every kYieldEvery pauses: when the machine is oversubscribed
// (HTTP threads, another process) the thread we wait for may be the one waiting for a core, and a
// pure pause loop would hold that core for a whole time slice. With nothing else runnable a
// yield returns at once, so the uncontended cost is a syscall per kYieldEvery pauses.
constexpr int kYieldEvery = 64;

inline void spin_pause(int spins) {
  if ((spins & (kYieldEvery - 1)) == kYieldEvery - 1)
    std::this_thread::yield();
  else
    OXYD_PAUSE();
}
std::unique_ptr<ThreadPool> g_pool;
std::atomic<ThreadPool*> g_pool_ptr{nullptr};  // g_pool, read without the lock
std::mutex g_pool_mu;
// The scratch of the pool thread the calling thread is running as: a worker's own for its life,
// thread 0's of the pool whose run() the caller is inside; null elsewhere.
thread_local ThreadScratch* t_scratch = nullptr;
}  // namespace

ThreadScratch& this_thread_scratch() {
  if (t_scratch) return *t_scratch;
  ThreadPool& pool = ThreadPool::global();
  OXYD_CHECK(pool.holds_turn(), "thread scratch used outside a pool job by a thread without the pool's turn");
  return pool.scratch(0);
}

ThreadPool::Turn::Turn(ThreadPool& pool) : pool_(pool) {
  pool_.turn_mu_.lock();
  if (pool_.turn_depth_++ == 0) pool_.holder_.store(std::this_thread::get_id(), std::memory_order_relaxed);
}

ThreadPool::Turn::~Turn() {
  if (--pool_.turn_depth_ == 0) pool_.holder_.store(std::thread::id(), std::memory_order_relaxed);
  pool_.turn_mu_.unlock();
}

ThreadScratch::~ThreadScratch() {
  for (void* p : p_) std::free(p);
}

uint8_t* ThreadScratch::get(int slot, size_t bytes) {
  reserve(slot, bytes);
  used_[slot] = std::max(used_[slot], bytes);
  return static_cast<uint8_t*>(p_[slot]);
}

void ThreadScratch::reserve(int slot, size_t bytes) {
  if (held_[slot] >= bytes) return;
  std::free(p_[slot]);
  p_[slot] = std::aligned_alloc(64, (bytes + 63) / 64 * 64);
  if (!p_[slot]) throw std::bad_alloc();
  held_[slot] = bytes;
}

ThreadPool::ThreadPool(int num_threads)
    : num_threads_(std::max(1, num_threads)), scratch_(std::make_unique<ThreadScratch[]>(size_t(num_threads_))) {
  for (int i = 1; i < num_threads_; ++i) threads_.emplace_back([this, i] { worker(i); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_.store(true);
    generation_.fetch_add(1);
  }
  cv_.notify_all();
  for (auto& t : threads_) t.join();
}

void ThreadPool::run(const std::function<void(int, int)>& fn) {
  const Turn turn(*this);
  // The caller runs as thread 0 (restored after: run() may nest inside another pool's job).
  struct AsThread0 {
    ThreadScratch* saved;
    explicit AsThread0(ThreadScratch* s) : saved(t_scratch) { t_scratch = s; }
    ~AsThread0() { t_scratch = saved; }
  } as_thread0(&scratch_[0]);
  if (num_threads_ == 1) {
    fn(0, 1);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    job_ = &fn;
    pending_.store(num_threads_ - 1);
    generation_.fetch_add(1, std::memory_order_release);
  }
  cv_.notify_all();
  fn(0, num_threads_);
  for (int spins = 0; pending_.load(std::memory_order_acquire) != 0; ++spins) spin_pause(spins);
}

void ThreadPool::worker(int idx) {
  t_scratch = &scratch_[idx];
  uint64_t seen = 0;
  for (;;) {
    int spins = 0;
    while (generation_.load(std::memory_order_acquire) == seen && spins < kSpinIters) spin_pause(spins++);
    if (generation_.load(std::memory_order_acquire) == seen) {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return generation_.load() != seen; });
    }
    seen = generation_.load(std::memory_order_acquire);
    if (stop_.load()) return;
    (*job_)(idx, num_threads_);
    pending_.fetch_sub(1, std::memory_order_acq_rel);
  }
}

void ThreadPool::spin_pause(int spins) { oxyd::spin_pause(spins); }

ThreadPool& ThreadPool::global() {
  if (ThreadPool* p = g_pool_ptr.load(std::memory_order_acquire)) return *p;
  std::lock_guard<std::mutex> lock(g_pool_mu);
  if (!g_pool) {
    int n = int(std::thread::hardware_concurrency());
    if (const char* env = std::getenv("OXYD_NUM_THREADS")) n = std::atoi(env);
    g_pool = std::make_unique<ThreadPool>(n > 0 ? n : 1);
    g_pool_ptr.store(g_pool.get(), std::memory_order_release);
  }
  return *g_pool;
}

void ThreadPool::set_global_threads(int num_threads) {
  std::lock_guard<std::mutex> lock(g_pool_mu);
  g_pool_ptr.store(nullptr, std::memory_order_release);
  g_pool = std::make_unique<ThreadPool>(num_threads);
  g_pool_ptr.store(g_pool.get(), std::memory_order_release);
}

void parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  ThreadPool& pool = ThreadPool::global();
  // Called inside a job on a worker: inline, as that worker (the job's caller holds the turn).
  if (t_scratch && !pool.holds_turn()) {
    fn(0, n);
    return;
  }
  const int64_t max_parts = std::max<int64_t>(1, n / std::max<int64_t>(1, grain));
  const int parts = int(std::min<int64_t>(pool.num_threads(), max_parts));
  // Inline too, fn runs as thread 0 (its kernels may use thread 0's scratch): under the turn.
  const ThreadPool::Turn turn(pool);
  if (parts <= 1) {
    fn(0, n);
    return;
  }
  pool.run([&](int idx, int num) {
    if (idx >= parts) return;
    const int64_t begin = n * idx / parts, end = n * (idx + 1) / parts;
    if (begin < end) fn(begin, end);
  });
}

}  // namespace oxyd
