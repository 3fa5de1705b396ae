// OXYD_CUDA_CHECK: turns a failing CUDA runtime call into oxyd::Error with the CUDA error name,
// its description, the call expression and the call site. Used only by backend/cuda sources;
// an allocation failure maps to OUT_OF_MEMORY, everything else to INTERNAL.
#pragma once

#include <cuda_runtime.h>

namespace oxyd::backend::cuda {

[[noreturn]] void throw_cuda_error(cudaError_t err, const char* expr, const char* file, int line);

}  // namespace oxyd::backend::cuda

#define OXYD_CUDA_CHECK(expr)                                                          \
  do {                                                                                 \
    const cudaError_t oxyd_cuda_err_ = (expr);                                         \
    if (oxyd_cuda_err_ != cudaSuccess)                                                 \
      ::oxyd::backend::cuda::throw_cuda_error(oxyd_cuda_err_, #expr, __FILE__, __LINE__); \
  } while (0)

/// After a kernel launch: reports a bad launch configuration at the launch site. It does not
/// synchronize, so errors inside the kernel surface at the next synchronizing call.
#define OXYD_CUDA_CHECK_LAUNCH() OXYD_CUDA_CHECK(cudaGetLastError())
