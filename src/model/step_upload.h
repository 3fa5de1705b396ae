// The host arrays of one step (a ForwardBatch's positions and block table, token ids, rows picked
// per step) as I32 tensors of the model's device. On the CPU they alias the host memory: no copy.
// Elsewhere add() gathers them into one host staging vector and flush() copies it to the device in
// one call, before any op reads them.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <span>
#include <vector>

#include "backend/backend.h"
#include "core/tensor.h"

namespace oxyd::model {

class StepUpload {
 public:
  /// Starts a step on device d with room for `capacity` ints (at least the sum of what add() takes).
  void begin(Device d, int64_t capacity);
  /// s as an I32 tensor of shape dims (numel(dims) == s.size()) on the device. On the CPU the
  /// tensor is s itself, so s must outlive its use.
  Tensor add(std::span<const int32_t> s, std::initializer_list<int64_t> dims);
  Tensor add(std::span<const int32_t> s) { return add(s, {static_cast<int64_t>(s.size())}); }
  /// Copies what add() gathered since begin() to the device (nothing on the CPU).
  void flush();

 private:
  Device device_ = Device::CPU;
  std::vector<int32_t> staging_;
  backend::Allocation buf_;
  int64_t capacity_ = 0;
};

}  // namespace oxyd::model
