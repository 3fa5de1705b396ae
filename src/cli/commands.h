// Registration of the CLI verbs that live in their own files (cmd_<verb>.cc). Each adds its
// subcommand, flags (a flag beats its OXYDLLM_* environment variable) and a callback; a callback
// stores its exit status in `exit_code` and reports failures by throwing oxyd::Error.
#pragma once

#include <CLI/CLI.hpp>

#include <string>

#include "core/dtype.h"
#include "engine/device_plan.h"

namespace oxyd::cli {

void register_pull(CLI::App& app, int& exit_code);
void register_list(CLI::App& app, int& exit_code);
void register_rm(CLI::App& app, int& exit_code);
void register_show(CLI::App& app, int& exit_code);
void register_estimate(CLI::App& app, int& exit_code);
void register_run(CLI::App& app, int& exit_code);
void register_start(CLI::App& app, int& exit_code);

/// Adds --device (cpu | cuda | auto, env OXYDLLM_DEVICE) and --gpu-memory-utilization (env
/// OXYDLLM_GPU_MEMORY_UTILIZATION) bound to `device` and `util` (cli/device_flags.cc).
void add_device_options(CLI::App* cmd, std::string& device, double& util);
/// Parses --device (Error(INVALID_ARGUMENT) when bad) and, unless it is cpu, registers the CUDA
/// backend where this build has one and a GPU is present; elsewhere auto falls back to the CPU
/// and cuda fails at load, both saying why (engine/device_plan.h).
engine::DeviceChoice prepare_device(const std::string& device);
/// --dtype, shared by `start` and `run`: "auto" (weights as stored) or "bf16" (F32 layer weights
/// held as BF16 on the CPU); parse_dtype returns whether bf16, and throws Error(INVALID_ARGUMENT)
/// for another value.
void add_dtype_option(CLI::App* cmd, std::string& dtype);
bool parse_dtype(const std::string& dtype);

/// Adds --models-dir (env OXYDLLM_MODELS_DIR) bound to `dir`.
void add_models_dir_option(CLI::App* cmd, std::string& dir);
/// The flag/env value, else ~/.oxydllm/models.
std::string models_dir_or_default(const std::string& dir);

}  // namespace oxyd::cli
