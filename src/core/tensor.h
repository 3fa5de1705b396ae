// Tensor: a non-owning view of a dense tensor in host or device memory. Shapes are row-major,
// outermost first, like PyTorch and Hugging Face: a Linear weight is [out_features, in_features]
// and its last dim is contiguous (a GGUF `ne` array is this shape reversed). Quantized dtypes
// pack their last dim into blocks, so only whole rows are addressable. Owning storage is
// Buffer (64-byte aligned host memory); mmapped model weights are viewed in place.
#pragma once

#include <array>
#include <cstdint>
#include <cstdlib>
#include <initializer_list>
#include <memory>
#include <string>

#include "core/dtype.h"
#include "core/error.h"

namespace oxyd {

inline constexpr int kMaxDims = 4;

enum class Device : uint8_t { CPU, CUDA };

struct Tensor {
  DType dtype = DType::F32;
  void* data = nullptr;
  int ndim = 0;
  std::array<int64_t, kMaxDims> shape{};  // row-major, shape[ndim-1] contiguous
  Device device = Device::CPU;

  Tensor() = default;
  Tensor(DType t, void* p, std::initializer_list<int64_t> dims, Device dev = Device::CPU)
      : dtype(t), data(p), device(dev) {
    OXYD_CHECK(dims.size() >= 1 && dims.size() <= kMaxDims, "tensor rank must be 1..4");
    for (int64_t d : dims) shape[ndim++] = d;
  }

  int64_t dim(int i) const { return shape[i < 0 ? ndim + i : i]; }
  int64_t numel() const {
    int64_t n = 1;
    for (int i = 0; i < ndim; ++i) n *= shape[i];
    return n;
  }
  int64_t cols() const { return ndim ? shape[ndim - 1] : 0; }  // elements in the contiguous dim
  int64_t rows() const {  // product of the outer dims (no division: cols() may be 0)
    int64_t n = 1;
    for (int i = 0; i + 1 < ndim; ++i) n *= shape[i];
    return ndim ? n : 0;
  }
  int64_t row_bytes() const { return dtype_row_bytes(dtype, cols()); }
  int64_t nbytes() const { return rows() * row_bytes(); }

  template <typename T> T* ptr() const { return static_cast<T*>(data); }
  /// Pointer to the start of row r (over all outer dims flattened).
  template <typename T = uint8_t> T* row(int64_t r) const {
    return reinterpret_cast<T*>(static_cast<uint8_t*>(data) + r * row_bytes());
  }
  std::string shape_str() const {
    std::string s = "[";
    for (int i = 0; i < ndim; ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
    return s + "]";
  }
};

/// Owning, 64-byte aligned host memory (2 MiB-aligned from 2 MiB on, see tensor.cc).
class Buffer {
 public:
  Buffer() = default;
  explicit Buffer(size_t bytes) : bytes_(bytes) {
    if (bytes == 0) return;
    // From 2 MiB on, 2 MiB-aligned so that its whole 2 MiB pages can be huge pages (the tail is not
    // rounded up: it stays on small pages and no memory is wasted).
    const size_t align = bytes >= kHugePage ? kHugePage : 64;
    void* p = nullptr;
    if (::posix_memalign(&p, align, (bytes + 63) / 64 * 64) != 0 || !p)
      throw Error(ErrorCode::OUT_OF_MEMORY, "cannot allocate " + std::to_string(bytes) + " bytes");
    if (align == kHugePage) advise_huge_pages(p, bytes / kHugePage * kHugePage);
    ptr_.reset(static_cast<uint8_t*>(p));
  }
  uint8_t* data() const { return ptr_.get(); }
  size_t size() const { return bytes_; }
  template <typename T> T* as() const { return reinterpret_cast<T*>(ptr_.get()); }

 private:
  static constexpr size_t kHugePage = size_t(2) << 20;
  static void advise_huge_pages(void* p, size_t bytes);
  struct Free { void operator()(uint8_t* p) const { std::free(p); } };
  std::unique_ptr<uint8_t, Free> ptr_;
  size_t bytes_ = 0;
};

}  // namespace oxyd
