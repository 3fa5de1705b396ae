// --device / --gpu-memory-utilization, shared by `start` and `run`, and the one place the CUDA
// backend is registered (only where the build has CUDA: OXYD_HAVE_CUDA).
#include "cli/commands.h"

#include "core/error.h"

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

void add_dtype_option(CLI::App* cmd, std::string& dtype) {
  cmd->add_option("--dtype", dtype,
                  "weights: auto (as the checkpoint stores them) or bf16 (F32 linear weights of the layers "
                  "held as BF16 on the CPU: half their memory and, with AVX512-BF16, about twice the matmul "
                  "rate; activations meet them rounded to bf16, e.g. all-MiniLM-L6-v2 embeddings within "
                  "cosine 0.9999 of F32)")
      ->envname("OXYDLLM_DTYPE")
      ->capture_default_str();
}

bool parse_dtype(const std::string& dtype) {
  if (dtype != "auto" && dtype != "bf16")
    throw Error(ErrorCode::INVALID_ARGUMENT, "--dtype must be auto or bf16, got '" + dtype + "'");
  return dtype == "bf16";
}

engine::DeviceChoice prepare_device(const std::string& device) {
  const engine::DeviceChoice c = engine::parse_device_choice(device);
#ifdef OXYD_HAVE_CUDA
  if (c != engine::DeviceChoice::CPU) backend::cuda::register_cuda_backend();
#endif
  return c;
}

}  // namespace oxyd::cli
