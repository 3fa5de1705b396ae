// ThreadScratch: the working memory each ThreadPool thread owns (core/thread_pool.h). Kept apart
// from the pool so that kernel files built with ISA flags reach it without the pool's std
// templates (an inline copy instantiated under AVX-512 flags could be the one the linker keeps).
#pragma once

#include <cstddef>
#include <cstdint>

namespace oxyd {

/// Working memory one pool thread owns for the kernels it runs: kSlots buffers, 64-byte aligned,
/// that only grow. Slot numbers are the kernels' own (backend/cpu/matmul/kernel.h names them).
/// Contents last within one job, or across the jobs of one turn for thread 0's (the caller's).
class ThreadScratch {
 public:
  static constexpr int kSlots = 4;
  ThreadScratch() = default;
  ~ThreadScratch();
  ThreadScratch(const ThreadScratch&) = delete;
  ThreadScratch& operator=(const ThreadScratch&) = delete;

  /// At least `bytes` bytes of slot `slot`; grows (losing the contents) to exactly that when it
  /// holds less, and records `bytes` as used.
  uint8_t* get(int slot, size_t bytes);
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

}  // namespace oxyd
