// ThreadScratch: the working memory each ThreadPool thread owns (core/thread_pool.h). Kept apart
// from the pool so that kernel files built with ISA flags reach it without the pool's std
// templates (an inline copy instantiated under AVX-512 flags could be the one the linker keeps).
#pragma once

#include <cstddef>
#include <cstdint>

namespace oxyd {

/// Working memory one pool thread owns for the kernels it runs: kSlots buffers, 64-byte aligned,
/// that only grow. Slot numbers are the backend's own (backend/cpu/scratch_slots.h is the table of
/// who uses which). Contents last within one job, or across the jobs of one turn for thread 0's
/// (the caller's).
class ThreadScratch {
 public:
  static constexpr int kSlots = 16;
  ThreadScratch() = default;
  ~ThreadScratch();
  ThreadScratch(const ThreadScratch&) = delete;
  ThreadScratch& operator=(const ThreadScratch&) = delete;

  /// At least `bytes` bytes of slot `slot`; grows (losing the contents) to exactly that when it
  /// holds less, and records `bytes` as used.
  uint8_t* get(int slot, size_t bytes);
  /// get() as an array of `count` T (T trivially copyable; the contents are not initialized).
  template <typename T>
  T* get_as(int slot, size_t count) {
    return reinterpret_cast<T*>(get(slot, count * sizeof(T)));
  }
  /// Grows slot `slot` to hold at least `bytes` bytes now, without counting them as used.
  void reserve(int slot, size_t bytes);
  /// Bytes slot `slot` holds, and the most one get() has asked of it.
  size_t held(int slot) const { return held_[slot]; }
  size_t used(int slot) const { return used_[slot]; }

 private:
  void* p_[kSlots] = {};
  size_t held_[kSlots] = {};
  size_t used_[kSlots] = {};
};

/// The scratch of the calling thread's pool thread: a ThreadPool worker's own, or thread 0's of
/// the global pool for the thread that holds its turn (ThreadPool::take_turn; every op that uses
/// thread 0's scratch takes the turn first). Defined in core/thread_pool.cc; throws an internal
/// error on a thread that is neither, rather than share thread 0's scratch with the turn's holder.
ThreadScratch& this_thread_scratch();

}  // namespace oxyd
