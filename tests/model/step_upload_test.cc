// model::StepUpload: a step's host arrays as tensors of the model's device. On the CPU they are the
// host arrays themselves (no copy); on another device (test::HostDevice of tests/archs, host memory
// behind a CUDA tag) every array lands at its own offset of one buffer after exactly one copy, and a step
// that asks for more than it reserved is an INTERNAL error, not a write past the buffer.
#include <gtest/gtest.h>

#include <vector>

#include "core/error.h"
#include "../archs/host_device.h"
#include "model/step_upload.h"

namespace oxyd::model::test {
namespace {

TEST(StepUpload, AliasesHostArraysOnTheCpu) {
  std::vector<int32_t> a = {1, 2, 3}, b = {4, 5, 6, 7, 8, 9};
  StepUpload up;
  up.begin(Device::CPU, 9);
  const Tensor ta = up.add(a), tb = up.add(b, {2, 3});
  up.flush();
  EXPECT_EQ(ta.data, a.data());
  EXPECT_EQ(tb.data, b.data());
  EXPECT_EQ(tb.device, Device::CPU);
  EXPECT_EQ(tb.dim(0), 2);
  EXPECT_EQ(tb.dim(1), 3);
}

TEST(StepUpload, OneCopyPerStepOnAnotherDevice) {
  test::HostDevice dev;
  backend::register_backend(dev);
  std::vector<int32_t> a = {1, 2, 3}, b = {4, 5, 6, 7, 8, 9}, empty;
  StepUpload up;
  for (int step = 0; step < 3; ++step) {
    up.begin(Device::CUDA, 9 + step);
    const Tensor ta = up.add(a), te = up.add(empty), tb = up.add(b, {3, 2});
    EXPECT_EQ(ta.device, Device::CUDA);
    EXPECT_NE(ta.data, a.data());
    EXPECT_EQ(te.numel(), 0);
    up.flush();
    EXPECT_EQ(dev.uploads, step + 1);
    EXPECT_EQ(std::vector<int32_t>(ta.ptr<int32_t>(), ta.ptr<int32_t>() + 3), a);
    EXPECT_EQ(std::vector<int32_t>(tb.ptr<int32_t>(), tb.ptr<int32_t>() + 6), b);
    EXPECT_EQ(tb.ptr<int32_t>(), ta.ptr<int32_t>() + 3);
  }
  
  up.begin(Device::CUDA, 4);
  up.add(a);
  try {
    up.add(b);
    ADD_FAILURE() << "no error for more ints than reserved";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::INTERNAL);
  }
  try {
    up.add(a, {2, 2});
    ADD_FAILURE() << "no error for a shape that does not hold the array";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::INTERNAL);
  }
  backend::unregister_backend(dev);
}

}  // namespace
}  // namespace oxyd::model::test
