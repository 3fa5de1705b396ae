// Workspace: device scratch memory that grows on demand and is reused across calls (split-K
// partials of attention, dequantized weight tiles of the batched matmul). Growing frees the old
// buffer first; cudaFree waits for the device, so kernels still reading it finish before.
// Not thread-safe: one per stream.
#pragma once

#include <cstddef>

#include "backend/cuda/device.h"

namespace oxyd::backend::cuda {

class Workspace {
 public:
  /// At least `bytes` of device memory, 256-byte aligned; valid until the next get() that grows.
  void* get(size_t bytes) {
    if (bytes > buf_.size()) {
      buf_ = DeviceBuffer();
      buf_ = DeviceBuffer((bytes + 255) / 256 * 256);
    }
    return buf_.data();
  }
  size_t size() const { return buf_.size(); }

 private:
  DeviceBuffer buf_;
};

}  // namespace oxyd::backend::cuda
