// plan_device (engine/device_plan.h) over a fake DeviceProbe: the --device / --gpu-memory-utilization
// rules, with every budget worked out by hand here (vLLM's rule: utilization · total − memory held
// by others − weights − workspaces).
#include "engine/device_plan.h"

#include <gtest/gtest.h>

#include <optional>

#include "core/error.h"

namespace oxyd::engine {
namespace {

constexpr int64_t kMiB = int64_t(1) << 20, kGiB = int64_t(1) << 30;

class FakeProbe final : public DeviceProbe {
 public:
  bool present = false;
  int64_t free_b = 0, total_b = 0;
  mutable int asked = 0;  // memory questions asked
  bool cuda_present() const override { return present; }
  int64_t cuda_free_bytes() const override { return ++asked, free_b; }
  int64_t cuda_total_bytes() const override { return ++asked, total_b; }
};

FakeProbe gpu(int64_t total, int64_t free_b) {
  FakeProbe p;
  p.present = true, p.total_b = total, p.free_b = free_b;
  return p;
}

DevicePlanRequest model(DeviceChoice c, int64_t weights, int64_t ws, int64_t min_kv) {
  DevicePlanRequest r;
  r.choice = c, r.weight_bytes = weights, r.workspace_bytes = ws, r.min_kv_bytes = min_kv;
  return r;
}

std::optional<ErrorCode> code_of(const DevicePlanRequest& r, const DeviceProbe& p) {
  try {
    plan_device(r, p);
  } catch (const Error& e) {
    return e.code();
  }
  return std::nullopt;
}

TEST(DevicePlan, ParsesTheFlag) {
  EXPECT_EQ(parse_device_choice("cpu"), DeviceChoice::CPU);
  EXPECT_EQ(parse_device_choice("cuda"), DeviceChoice::CUDA);
  EXPECT_EQ(parse_device_choice("auto"), DeviceChoice::AUTO);
  for (const char* bad : {"", "gpu", "CUDA", "cuda:0"}) EXPECT_THROW(parse_device_choice(bad), Error) << bad;
  EXPECT_EQ(device_choice_name(DeviceChoice::AUTO), "auto");
}

TEST(DevicePlan, CpuNeverAsksTheDevice) {
  FakeProbe p = gpu(80 * kGiB, 80 * kGiB);
  const DevicePlan d = plan_device(model(DeviceChoice::CPU, kGiB, 0, 0), p);
  EXPECT_EQ(d.device, Device::CPU);
  EXPECT_EQ(d.kv_budget_bytes, 0);
  EXPECT_EQ(p.asked, 0);
}

TEST(DevicePlan, AutoWithoutGpuFallsBackAndSaysWhy) {
  FakeProbe none;
  const DevicePlan d = plan_device(model(DeviceChoice::AUTO, kGiB, 0, 0), none);
  EXPECT_EQ(d.device, Device::CPU);
  EXPECT_NE(d.reason.find("no CUDA device"), std::string::npos) << d.reason;
  EXPECT_NE(d.reason.find("auto"), std::string::npos) << d.reason;
}

TEST(DevicePlan, CudaWithoutGpuIsUnsupported) {
  FakeProbe none;
  EXPECT_EQ(code_of(model(DeviceChoice::CUDA, kGiB, 0, 0), none), ErrorCode::UNSUPPORTED);
}

TEST(DevicePlan, BudgetIsUtilizationOfTotalLessOthersWeightsAndWorkspaces) {
  // 80 GiB card, 2 GiB held by another process; 0.9 → 72 GiB allowed; −2 − 16 (weights) − 1
  // (workspaces) = 53 GiB for the KV pool.
  FakeProbe p = gpu(80 * kGiB, 78 * kGiB);
  const DevicePlan d = plan_device(model(DeviceChoice::AUTO, 16 * kGiB, kGiB, kGiB), p);
  EXPECT_EQ(d.device, Device::CUDA);
  EXPECT_EQ(d.kv_budget_bytes, 53 * kGiB);
  EXPECT_NE(d.reason.find("device cuda"), std::string::npos) << d.reason;
  // Another utilization: 0.5 → 40 − 2 − 16 − 1 = 21 GiB.
  DevicePlanRequest r = model(DeviceChoice::CUDA, 16 * kGiB, kGiB, kGiB);
  r.gpu_memory_utilization = 0.5;
  EXPECT_EQ(plan_device(r, p).kv_budget_bytes, 21 * kGiB);
}

TEST(DevicePlan, UserKvBudgetIsKeptWhenItFits) {
  FakeProbe p = gpu(80 * kGiB, 80 * kGiB);
  DevicePlanRequest r = model(DeviceChoice::AUTO, 16 * kGiB, kGiB, kGiB);
  r.kv_cache_bytes = 512 * kMiB;
  EXPECT_EQ(plan_device(r, p).kv_budget_bytes, 512 * kMiB);
  r.kv_cache_bytes = 60 * kGiB;  // 72 − 16 − 1 = 55 GiB of room
  const DevicePlan d = plan_device(r, p);
  EXPECT_EQ(d.device, Device::CPU);
  EXPECT_NE(d.reason.find("does not fit"), std::string::npos) << d.reason;
}

TEST(DevicePlan, TooBigFallsBackOnAutoAndFailsOnCuda) {
  // 24 GiB card, free 23: 0.9 · 24 = 21.6 GiB allowed − 1 held − 20 weights − 0.5 ws = 0.1 GiB < 1 GiB KV.
  FakeProbe p = gpu(24 * kGiB, 23 * kGiB);
  const DevicePlanRequest r = model(DeviceChoice::AUTO, 20 * kGiB, kGiB / 2, kGiB);
  const DevicePlan d = plan_device(r, p);
  EXPECT_EQ(d.device, Device::CPU);
  EXPECT_NE(d.reason.find("does not fit"), std::string::npos) << d.reason;
  EXPECT_NE(d.reason.find("20480 MiB"), std::string::npos) << d.reason;  // the weights, named
  DevicePlanRequest c = r;
  c.choice = DeviceChoice::CUDA;
  EXPECT_EQ(code_of(c, p), ErrorCode::OUT_OF_MEMORY);
  // Exactly enough: room = min_kv fits (≥, not >).
  FakeProbe q = gpu(10 * kGiB, 10 * kGiB);  // floor(0.9 · 10 GiB) − 8 GiB ≥ 1 GiB − 1
  const DevicePlan e = plan_device(model(DeviceChoice::AUTO, 8 * kGiB, 0, kGiB - 1), q);
  EXPECT_EQ(e.device, Device::CUDA);
  EXPECT_EQ(e.kv_budget_bytes, int64_t(double(10 * kGiB) * 0.9) - 8 * kGiB);
}

TEST(DevicePlan, UtilizationOutsideRangeIsRejected) {
  FakeProbe p = gpu(kGiB, kGiB);
  for (double u : {0.0, -0.5, 1.01}) {
    DevicePlanRequest r = model(DeviceChoice::AUTO, 0, 0, 0);
    r.gpu_memory_utilization = u;
    EXPECT_EQ(code_of(r, p), ErrorCode::INVALID_ARGUMENT) << u;
  }
}

}  // namespace
}  // namespace oxyd::engine
