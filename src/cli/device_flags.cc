// --device / --gpu-memory-utilization, shared by `start` and `run`, and the one place the CUDA
// backend is registered (only where the build has CUDA: OXYD_HAVE_CUDA).
#include "cli/commands.h"

#ifdef OXYD_HAVE_CUDA
#include "backend/cuda/backend.h"
#endif

namespace oxyd::cli {

void add_device_options(CLI::App* cmd, std::string& device, double& util) {
  cmd->add_option("--device", device,
                  "where the model runs: cpu, cuda, or auto (CUDA when a GPU is present and the model fits, "
                  "else the CPU; the log says why)")
      ->envname("OXYDLLM_DEVICE")
      ->capture_default_str();
  cmd->add_option("--gpu-memory-utilization", util,
                  "share of the GPU's memory the engine may use for weights, workspaces and the KV pool, in (0, 1]")
      ->envname("OXYDLLM_GPU_MEMORY_UTILIZATION")
      ->capture_default_str();
}

engine::DeviceChoice prepare_device(const std::string& device) {
  const engine::DeviceChoice c = engine::parse_device_choice(device);
#ifdef OXYD_HAVE_CUDA
  if (c != engine::DeviceChoice::CPU) backend::cuda::register_cuda_backend();
#endif
  return c;
}

}  // namespace oxyd::cli
