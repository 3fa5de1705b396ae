// Workspace: one growable F32 scratch array of the model (residual stream, attention and MLP
// buffers) in the memory of its device's backend (ops::device_backend), as the KV pool and the
// logits are: a device backend runs the forward pass on its own memory. resize(n) keeps the
// allocation while it is large enough, else allocates anew WITHOUT copying: every workspace is
// written before it is read within a step. reserve(n) allocates ahead (peak memory at load).
#pragma once

#include <cstdint>
#include <initializer_list>

#include "backend/backend.h"
#include "core/tensor.h"
#include "ops/dispatch.h"

namespace oxyd::model {

class Workspace {
 public:
  void set_device(Device d) {
    if (d != device_) alloc_ = backend::Allocation(), size_ = 0;
    device_ = d;
  }
  void reserve(int64_t n) {
    const size_t need = static_cast<size_t>(n) * sizeof(float);
    if (need > alloc_.size()) alloc_ = ops::device_backend(device_).allocate(need);
  }
  void resize(int64_t n) {
    reserve(n);
    size_ = n;
  }
  float* data() const { return alloc_.as<float>(); }
  int64_t size() const { return size_; }
  int64_t capacity_bytes() const { return static_cast<int64_t>(alloc_.size()); }
  int64_t size_bytes() const { return size_ * static_cast<int64_t>(sizeof(float)); }
  /// The first numel(dims) floats as a tensor of this device.
  Tensor view(std::initializer_list<int64_t> dims) const { return Tensor(DType::F32, data(), dims, device_); }

 private:
  Device device_ = Device::CPU;
  backend::Allocation alloc_;
  int64_t size_ = 0;
};

}  // namespace oxyd::model
