// CUDA device runtime for oxydllm: device query, RAII device memory and streams, host↔device
// copies. cuda_available() is the one probe callers use; it returns false (never aborts) when
// there is no driver or no GPU, so CUDA builds still run on CPU-only machines. Every CUDA
// failure becomes an oxyd::Error carrying the CUDA error string and the failing call site.
// This header does not include cuda_runtime.h, so host-only code can use it cheaply.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>

#include "core/tensor.h"

struct CUstream_st;  // cudaStream_t is `CUstream_st*` in the CUDA runtime
struct CUevent_st;   // cudaEvent_t is `CUevent_st*`

namespace oxyd::backend::cuda {

using StreamHandle = CUstream_st*;

/// True when the CUDA runtime finds a driver and at least one device. Cached after the first
/// call; thread-safe. Never throws.
bool cuda_available();

/// Number of CUDA devices; 0 when there is no driver or no device. Never throws.
int device_count();

struct DeviceInfo {
  int index = 0;
  std::string name;              // e.g. "NVIDIA H200"
  int cc_major = 0, cc_minor = 0; // compute capability, e.g. 9.0
  int num_sms = 0;               // streaming multiprocessors
  int64_t total_bytes = 0;       // global memory
  int64_t free_bytes = 0;        // free global memory when queried
  int64_t l2_bytes = 0;
  int max_threads_per_block = 0;
  int64_t shared_bytes_per_block = 0;
};

/// Properties of device `index`; throws Error(INVALID_ARGUMENT) for an index out of range.
DeviceInfo device_info(int index = 0);
/// Streaming multiprocessors of the calling thread's current device, read once per device (kernel
/// launches size their grids by it on every call).
int sm_count();
/// Makes `index` the current device of the calling thread.
void set_device(int index);
/// Blocks until all work on the current device has finished; surfaces asynchronous errors.
void device_synchronize();

/// Device frees so far in this process (DeviceBuffer, the CUDA backend's allocations): a CUDA
/// graph recorded at another count may name freed memory (Backend::graph_memory_epoch).
uint64_t device_free_epoch();
/// Counts one free (called by whatever frees device memory).
void note_device_free();

class Event;

/// A CUDA stream owned by this object (created non-blocking); move-only.
class Stream {
 public:
  Stream();
  ~Stream();
  Stream(Stream&& other) noexcept : handle_(other.handle_) { other.handle_ = nullptr; }
  Stream& operator=(Stream&& other) noexcept;
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  StreamHandle handle() const { return handle_; }
  /// Blocks until all work queued on this stream has finished; throws on an asynchronous error.
  void synchronize() const;
  /// True when all queued work has finished (cudaStreamQuery), without blocking.
  bool done() const;
  /// Work queued on this stream after this call waits for `event` (no host blocking).
  void wait(const Event& event) const;

 private:
  StreamHandle handle_ = nullptr;
};

/// A CUDA event with timing enabled; move-only. Orders work across streams (Stream::wait) and
/// times GPU work (elapsed_ms between two recorded events).
class Event {
 public:
  Event();
  ~Event();
  Event(Event&& other) noexcept : handle_(other.handle_) { other.handle_ = nullptr; }
  Event& operator=(Event&& other) noexcept;
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;

  CUevent_st* handle() const { return handle_; }
  /// Captures the work queued on `stream` so far.
  void record(const Stream& stream);
  /// Blocks until the recorded work has finished.
  void synchronize() const;
  /// Milliseconds of GPU time from `start` to this event; both recorded and finished.
  float elapsed_ms(const Event& start) const;

 private:
  CUevent_st* handle_ = nullptr;
};

/// Device memory from cudaMalloc, freed on destruction; move-only. Size 0 holds no memory.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& other) noexcept : ptr_(other.ptr_), bytes_(other.bytes_) {
    other.ptr_ = nullptr;
    other.bytes_ = 0;
  }
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  void* data() const { return ptr_; }
  size_t size() const { return bytes_; }
  template <typename T> T* as() const { return static_cast<T*>(ptr_); }
  /// A Tensor view (device CUDA) of this memory; throws if the shape needs more bytes than held.
  Tensor view(DType dtype, std::initializer_list<int64_t> dims) const;

 private:
  void* ptr_ = nullptr;
  size_t bytes_ = 0;
};

/// Synchronous copies (they return when the data has arrived).
void copy_to_device(void* dst_device, const void* src_host, size_t bytes);
void copy_to_host(void* dst_host, const void* src_device, size_t bytes);
void copy_device_to_device(void* dst_device, const void* src_device, size_t bytes);
/// Asynchronous copies queued on `stream`. The host memory must stay valid until the stream
/// reaches the copy; it overlaps with compute only when the host memory is pinned.
void copy_to_device_async(void* dst_device, const void* src_host, size_t bytes, const Stream& stream);
void copy_to_host_async(void* dst_host, const void* src_device, size_t bytes, const Stream& stream);
void copy_device_to_device_async(void* dst_device, const void* src_device, size_t bytes,
                                 const Stream& stream);
void memset_async(void* dst_device, int value, size_t bytes, const Stream& stream);

/// Page-locked host memory (cudaMallocHost), for asynchronous copies that really overlap.
class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  explicit PinnedBuffer(size_t bytes);
  ~PinnedBuffer();
  PinnedBuffer(PinnedBuffer&& other) noexcept : ptr_(other.ptr_), bytes_(other.bytes_) {
    other.ptr_ = nullptr;
    other.bytes_ = 0;
  }
  PinnedBuffer& operator=(PinnedBuffer&& other) noexcept;
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;

  void* data() const { return ptr_; }
  size_t size() const { return bytes_; }
  template <typename T> T* as() const { return static_cast<T*>(ptr_); }

 private:
  void* ptr_ = nullptr;
  size_t bytes_ = 0;
};

}  // namespace oxyd::backend::cuda
