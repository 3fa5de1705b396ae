// Device query, RAII memory/streams and copies for the CUDA backend (see device.h).
#include "backend/cuda/device.h"

#include <atomic>

#include <mutex>

#include "backend/cuda/cuda_check.cuh"

namespace oxyd::backend::cuda {

void throw_cuda_error(cudaError_t err, const char* expr, const char* file, int line) {
  // Clear a sticky-free error so the next unrelated call does not report it again.
  (void)cudaGetLastError();
  const ErrorCode code = err == cudaErrorMemoryAllocation ? ErrorCode::OUT_OF_MEMORY
                                                          : ErrorCode::INTERNAL;
  throw Error(code, std::string("CUDA error ") + cudaGetErrorName(err) + " (" +
                        cudaGetErrorString(err) + ") in `" + expr + "` at " + file + ":" +
                        std::to_string(line));
}

int device_count() {
  int n = 0;
  // No driver (cudaErrorInsufficientDriver), no device (cudaErrorNoDevice) and every other
  // failure mean "no usable GPU" here, not an error.
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return n;
}

bool cuda_available() {
  static std::once_flag once;
  static bool available = false;
  std::call_once(once, [] { available = device_count() > 0; });
  return available;
}

DeviceInfo device_info(int index) {
  const int n = device_count();
  if (index < 0 || index >= n)
    throw Error(ErrorCode::INVALID_ARGUMENT, "CUDA device index " + std::to_string(index) +
                                                 " out of range: " + std::to_string(n) +
                                                 " device(s) present");
  cudaDeviceProp prop{};
  OXYD_CUDA_CHECK(cudaGetDeviceProperties(&prop, index));
  DeviceInfo info;
  info.index = index;
  info.name = prop.name;
  info.cc_major = prop.major;
  info.cc_minor = prop.minor;
  info.num_sms = prop.multiProcessorCount;
  info.total_bytes = int64_t(prop.totalGlobalMem);
  info.l2_bytes = prop.l2CacheSize;
  info.max_threads_per_block = prop.maxThreadsPerBlock;
  info.shared_bytes_per_block = int64_t(prop.sharedMemPerBlock);
  int current = 0;
  OXYD_CUDA_CHECK(cudaGetDevice(&current));
  OXYD_CUDA_CHECK(cudaSetDevice(index));
  size_t free_bytes = 0, total_bytes = 0;
  const cudaError_t err = cudaMemGetInfo(&free_bytes, &total_bytes);
  OXYD_CUDA_CHECK(cudaSetDevice(current));
  OXYD_CUDA_CHECK(err);
  info.free_bytes = int64_t(free_bytes);
  return info;
}

void set_device(int index) { OXYD_CUDA_CHECK(cudaSetDevice(index)); }

void device_synchronize() { OXYD_CUDA_CHECK(cudaDeviceSynchronize()); }

// ---- Stream ----

Stream::Stream() {
  cudaStream_t s = nullptr;
  OXYD_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  handle_ = s;
}

Stream::~Stream() {
  if (handle_) (void)cudaStreamDestroy(handle_);  // destructors do not throw
}

Stream& Stream::operator=(Stream&& other) noexcept {
  if (this != &other) {
    if (handle_) (void)cudaStreamDestroy(handle_);
    handle_ = other.handle_;
    other.handle_ = nullptr;
  }
  return *this;
}

void Stream::synchronize() const { OXYD_CUDA_CHECK(cudaStreamSynchronize(handle_)); }

bool Stream::done() const {
  const cudaError_t err = cudaStreamQuery(handle_);
  if (err == cudaErrorNotReady) return false;
  OXYD_CUDA_CHECK(err);
  return true;
}

void Stream::wait(const Event& event) const {
  OXYD_CUDA_CHECK(cudaStreamWaitEvent(handle_, event.handle(), 0));
}

// ---- Event ----

Event::Event() {
  cudaEvent_t e = nullptr;
  OXYD_CUDA_CHECK(cudaEventCreate(&e));
  handle_ = e;
}

Event::~Event() {
  if (handle_) (void)cudaEventDestroy(handle_);
}

Event& Event::operator=(Event&& other) noexcept {
  if (this != &other) {
    if (handle_) (void)cudaEventDestroy(handle_);
    handle_ = other.handle_;
    other.handle_ = nullptr;
  }
  return *this;
}

void Event::record(const Stream& stream) { OXYD_CUDA_CHECK(cudaEventRecord(handle_, stream.handle())); }

void Event::synchronize() const { OXYD_CUDA_CHECK(cudaEventSynchronize(handle_)); }

float Event::elapsed_ms(const Event& start) const {
  float ms = 0.0f;
  OXYD_CUDA_CHECK(cudaEventElapsedTime(&ms, start.handle_, handle_));
  return ms;
}

namespace {
std::atomic<uint64_t> g_free_epoch{0};
}  // namespace

int sm_count() {
  static std::atomic<int> cached[64] = {};
  int dev = 0;
  OXYD_CUDA_CHECK(cudaGetDevice(&dev));
  if (dev < 0 || dev >= 64) throw Error(ErrorCode::INTERNAL, "cuda: device index " + std::to_string(dev));
  int n = cached[dev].load(std::memory_order_relaxed);
  if (n == 0) {
    OXYD_CUDA_CHECK(cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, dev));
    cached[dev].store(n, std::memory_order_relaxed);
  }
  return n;
}

uint64_t device_free_epoch() { return g_free_epoch.load(std::memory_order_acquire); }
void note_device_free() { g_free_epoch.fetch_add(1, std::memory_order_acq_rel); }

// ---- DeviceBuffer ----

DeviceBuffer::DeviceBuffer(size_t bytes) : bytes_(bytes) {
  if (bytes == 0) return;
  const cudaError_t err = cudaMalloc(&ptr_, bytes);
  if (err != cudaSuccess) {
    ptr_ = nullptr;
    bytes_ = 0;
    (void)cudaGetLastError();
    if (err == cudaErrorMemoryAllocation)
      throw Error(ErrorCode::OUT_OF_MEMORY, "cudaMalloc of " + std::to_string(bytes) +
                                                " bytes failed: out of device memory");
    throw_cuda_error(err, "cudaMalloc(&ptr_, bytes)", __FILE__, __LINE__);
  }
}

DeviceBuffer::~DeviceBuffer() {
  if (ptr_) (void)cudaFree(ptr_), note_device_free();
}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    if (ptr_) (void)cudaFree(ptr_), note_device_free();
    ptr_ = other.ptr_;
    bytes_ = other.bytes_;
    other.ptr_ = nullptr;
    other.bytes_ = 0;
  }
  return *this;
}

Tensor DeviceBuffer::view(DType dtype, std::initializer_list<int64_t> dims) const {
  Tensor t(dtype, ptr_, dims, Device::CUDA);
  if (t.nbytes() < 0 || size_t(t.nbytes()) > bytes_)
    throw Error(ErrorCode::INVALID_ARGUMENT, "device tensor " + t.shape_str() + " needs " +
                                                 std::to_string(t.nbytes()) + " bytes; buffer holds " +
                                                 std::to_string(bytes_));
  return t;
}

// ---- PinnedBuffer ----

PinnedBuffer::PinnedBuffer(size_t bytes) : bytes_(bytes) {
  if (bytes == 0) return;
  const cudaError_t err = cudaMallocHost(&ptr_, bytes);
  if (err != cudaSuccess) {
    ptr_ = nullptr;
    bytes_ = 0;
    throw_cuda_error(err, "cudaMallocHost(&ptr_, bytes)", __FILE__, __LINE__);
  }
}

PinnedBuffer::~PinnedBuffer() {
  if (ptr_) (void)cudaFreeHost(ptr_);
}

PinnedBuffer& PinnedBuffer::operator=(PinnedBuffer&& other) noexcept {
  if (this != &other) {
    if (ptr_) (void)cudaFreeHost(ptr_);
    ptr_ = other.ptr_;
    bytes_ = other.bytes_;
    other.ptr_ = nullptr;
    other.bytes_ = 0;
  }
  return *this;
}

// ---- copies ----

// cudaMemcpy from pageable host memory may return once the data is staged, before the DMA into
// device memory is done; a kernel on one of our non-blocking streams does not wait for the legacy
// stream, so it could read the old bytes (seen on the H200 under 4 concurrent test processes:
// outputs of 0 where the input had not landed yet). Waiting on the legacy stream makes the copy
// complete when this returns, as the synchronous API promises callers.
void copy_to_device(void* dst, const void* src, size_t bytes) {
  if (!bytes) return;
  OXYD_CUDA_CHECK(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice));
  OXYD_CUDA_CHECK(cudaStreamSynchronize(cudaStreamLegacy));
}
void copy_to_host(void* dst, const void* src, size_t bytes) {
  if (bytes) OXYD_CUDA_CHECK(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost));
}
void copy_device_to_device(void* dst, const void* src, size_t bytes) {
  if (!bytes) return;
  OXYD_CUDA_CHECK(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToDevice));  // async w.r.t. host
  OXYD_CUDA_CHECK(cudaStreamSynchronize(cudaStreamLegacy));
}
void copy_to_device_async(void* dst, const void* src, size_t bytes, const Stream& stream) {
  if (bytes)
    OXYD_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, stream.handle()));
}
void copy_to_host_async(void* dst, const void* src, size_t bytes, const Stream& stream) {
  if (bytes)
    OXYD_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, stream.handle()));
}
void copy_device_to_device_async(void* dst, const void* src, size_t bytes, const Stream& stream) {
  if (bytes)
    OXYD_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream.handle()));
}
void memset_async(void* dst, int value, size_t bytes, const Stream& stream) {
  if (bytes) OXYD_CUDA_CHECK(cudaMemsetAsync(dst, value, bytes, stream.handle()));
}

}  // namespace oxyd::backend::cuda
