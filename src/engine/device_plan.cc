// plan_device (see device_plan.h).
#include "engine/device_plan.h"

#include <cmath>
#include <cstdio>

#include "core/error.h"

namespace oxyd::engine {
namespace {

std::string mib(int64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f MiB", double(bytes) / double(1 << 20));
  return buf;
}

}  // namespace

DeviceChoice parse_device_choice(std::string_view s) {
  if (s == "cpu") return DeviceChoice::CPU;
  if (s == "cuda") return DeviceChoice::CUDA;
  if (s == "auto") return DeviceChoice::AUTO;
  throw Error(ErrorCode::INVALID_ARGUMENT, "--device must be cpu, cuda or auto, got '" + std::string(s) + "'");
}

std::string_view device_choice_name(DeviceChoice c) {
  switch (c) {
    case DeviceChoice::CPU: return "cpu";
    case DeviceChoice::CUDA: return "cuda";
    case DeviceChoice::AUTO: return "auto";
  }
  return "?";
}

DevicePlan plan_device(const DevicePlanRequest& r, const DeviceProbe& probe) {
  if (!(r.gpu_memory_utilization > 0 && r.gpu_memory_utilization <= 1))
    throw Error(ErrorCode::INVALID_ARGUMENT,
                "--gpu-memory-utilization must be in (0, 1], got " + std::to_string(r.gpu_memory_utilization));
  DevicePlan cpu;
  if (r.choice == DeviceChoice::CPU) {
    cpu.reason = "device cpu (--device cpu)";
    return cpu;
  }
  const bool forced = r.choice == DeviceChoice::CUDA;
  if (!probe.cuda_present()) {
    const std::string why = "no CUDA device found (no NVIDIA driver or GPU, or a build without CUDA)";
    if (forced) throw Error(ErrorCode::UNSUPPORTED, "--device cuda: " + why);
    cpu.reason = "device cpu (--device auto: " + why + ")";
    return cpu;
  }
  const int64_t total = probe.cuda_total_bytes(), free_b = probe.cuda_free_bytes();
  // The engine's share of the device, less what others already hold (vLLM's rule).
  const int64_t allowed = int64_t(std::floor(double(total) * r.gpu_memory_utilization));
  const int64_t used_by_others = total - free_b;
  const int64_t room = allowed - used_by_others - r.weight_bytes - r.workspace_bytes;
  const int64_t need_kv = std::max(r.min_kv_bytes, r.kv_cache_bytes);
  if (room < need_kv) {
    const std::string why = "the model does not fit the GPU: weights " + mib(r.weight_bytes) + " + workspaces " +
                            mib(r.workspace_bytes) + " + KV " + mib(need_kv) + " > " +
                            std::to_string(int(std::lround(r.gpu_memory_utilization * 100))) + "% of " + mib(total) +
                            " less " + mib(used_by_others) + " in use (--gpu-memory-utilization)";
    if (forced) throw Error(ErrorCode::OUT_OF_MEMORY, "--device cuda: " + why);
    cpu.reason = "device cpu (--device auto: " + why + ")";
    return cpu;
  }
  DevicePlan gpu;
  gpu.device = Device::CUDA;
  gpu.kv_budget_bytes = r.kv_cache_bytes > 0 ? r.kv_cache_bytes : room;
  gpu.reason = "device cuda (--device " + std::string(device_choice_name(r.choice)) + "): KV pool " +
               mib(gpu.kv_budget_bytes) + " of " + mib(total) + " (weights " + mib(r.weight_bytes) + ")";
  return gpu;
}

}  // namespace oxyd::engine
