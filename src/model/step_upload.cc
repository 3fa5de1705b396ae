// StepUpload (see step_upload.h).
#include "model/step_upload.h"

#include <string>

#include "core/error.h"
#include "ops/dispatch.h"
#include "ops/elementwise.h"

namespace oxyd::model {

void StepUpload::begin(Device d, int64_t capacity) {
  device_ = d;
  staging_.clear();
  capacity_ = capacity;
  if (d == Device::CPU) return;
  const size_t need = sizeof(int32_t) * static_cast<size_t>(capacity);
  if (need > buf_.size()) buf_ = ops::device_backend(d).allocate(need);
  staging_.reserve(static_cast<size_t>(capacity));
}

Tensor StepUpload::add(std::span<const int32_t> s, std::initializer_list<int64_t> dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  if (n != static_cast<int64_t>(s.size()))
    throw_error(ErrorCode::INTERNAL, "StepUpload: " + std::to_string(s.size()) + " ints for a shape of " +
                                         std::to_string(n));
  if (device_ == Device::CPU) return Tensor(DType::I32, const_cast<int32_t*>(s.data()), dims);
  const int64_t at = static_cast<int64_t>(staging_.size());
  if (at + n > capacity_)
    throw_error(ErrorCode::INTERNAL, "StepUpload: " + std::to_string(at + n) + " ints exceed the step's " +
                                         std::to_string(capacity_));
  staging_.insert(staging_.end(), s.begin(), s.end());
  return Tensor(DType::I32, buf_.as<int32_t>() + at, dims, device_);
}

void StepUpload::flush() {
  if (device_ == Device::CPU || staging_.empty()) return;
  ops::copy_from_host(staging_.data(),
                      Tensor(DType::I32, buf_.data(), {static_cast<int64_t>(staging_.size())}, device_));
}

}  // namespace oxyd::model
