// Where a model runs (--device cpu | cuda | auto) and, on a GPU, how many bytes its KV pool gets.
// Pure host logic over a DeviceProbe (the registered CUDA backend's memory_info in the engine, a
// fake in tests), so every rule here is tested on CPU machines. The GPU budget follows vLLM's
// --gpu-memory-utilization: the engine may use `utilization` of the device's total memory; what
// other processes hold already (total − free) counts against it, then the weights and the
// activation workspaces; the rest is the KV pool.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/tensor.h"

namespace oxyd::engine {

enum class DeviceChoice : uint8_t { CPU, CUDA, AUTO };

/// "cpu" | "cuda" | "auto" → the choice; throws Error(INVALID_ARGUMENT) naming the flag otherwise.
DeviceChoice parse_device_choice(std::string_view s);
std::string_view device_choice_name(DeviceChoice c);

/// The device questions plan_device asks.
class DeviceProbe {
 public:
  virtual ~DeviceProbe() = default;
  /// Whether a CUDA device (and a backend for it) is there.
  virtual bool cuda_present() const = 0;
  /// Free and total bytes of the CUDA device's memory (called only when cuda_present()).
  virtual int64_t cuda_free_bytes() const = 0;
  virtual int64_t cuda_total_bytes() const = 0;
};

struct DevicePlanRequest {
  DeviceChoice choice = DeviceChoice::AUTO;
  double gpu_memory_utilization = 0.9;  // (0, 1]
  int64_t weight_bytes = 0;             // what the upload puts on the device
  int64_t workspace_bytes = 0;          // activations, logits and scratch of one full step
  int64_t min_kv_bytes = 0;             // the KV of one context: less does not serve a request
  int64_t kv_cache_bytes = 0;           // the user's --kv-cache budget (0 = auto): must fit too
};

struct DevicePlan {
  Device device = Device::CPU;
  /// On CUDA: the KV pool budget (the user's kv_cache_bytes when set, else all the room left).
  /// On the CPU: 0 (the host planner, hub::plan_kv_pool, decides).
  int64_t kv_budget_bytes = 0;
  /// One line for the startup log: why this device (and, on a fall back, why not CUDA).
  std::string reason;
};

/// CPU: always the CPU. CUDA: the GPU, or Error(UNSUPPORTED) without one and Error(OUT_OF_MEMORY)
/// with the byte counts when the model does not fit. AUTO: the GPU when present and the model
/// fits, else the CPU with the reason. Error(INVALID_ARGUMENT) for a utilization outside (0, 1].
DevicePlan plan_device(const DevicePlanRequest& r, const DeviceProbe& probe);

}  // namespace oxyd::engine
