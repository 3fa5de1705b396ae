// The CUDA Backend (backend/backend.h's device seam on an NVIDIA GPU): every op of ops/ on device
// memory, queued in order on one stream of device 0, with the kernels of this folder. Memory is
// cudaMalloc'd; weights reach the device by model::Weights' upload (allocate + copy_from_host),
// so no packed copies are made (wants_packed is false). Host-visible results cross back only
// through copy_to_host, which waits for the stream. Quantized KV formats are UNSUPPORTED here.
// Host-only header: it does not include cuda_runtime.h.
#pragma once

#include "backend/backend.h"

namespace oxyd::backend::cuda {

/// Creates the CUDA backend once and registers it for Device::CUDA when a CUDA device is present
/// (cuda_available()); returns it, or nullptr (nothing registered) without a device. Thread-safe.
Backend* register_cuda_backend();

}  // namespace oxyd::backend::cuda
