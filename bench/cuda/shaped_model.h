// Random-weight GGUFs with the exact tensor shapes of real models, for speed measurements only
// (bench/cuda/model_bench.cc). Written in C++ so that the lent GPU machine, which has no network
// and no Python packages, makes them itself: tools/gen_qwen3_shaped_gguf.py's counterpart without
// the tokenizer (the benchmark feeds token ids).
//
// Weights are N(0, 0.02), norms 1. To make a 16 GB file in seconds, not minutes of quantizing,
// every 2-D tensor is cut from one pool of 2^22 random weights quantized once per type (starting
// at a block that depends on the tensor's name, wrapping around): the bytes a kernel streams are
// as many and as random-looking as a real model's; only their values repeat. Types: F16 (every
// 2-D weight), or Q4_K (every 2-D weight Q4_K, token_embd and output Q6_K, as the Q4_K tiny
// goldens the CUDA whole-model tests run); norms F32.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/dtype.h"

namespace oxyd::bench {

struct ModelShape {
  const char* name;  // "llama-1b", "qwen3-8b", "tiny"
  const char* arch;  // GGUF general.architecture
  int64_t layers, hidden, heads, kv_heads, head_dim, ffn, vocab;
  bool tied;     // no output.weight: the LM head reads token_embd
  bool qk_norm;  // per-head q/k RMSNorm (Qwen3)
  double rope_theta;
};

/// Llama-3.2-1B, Qwen3-8B, and "tiny" (2 layers, hidden 256: a CPU check of the whole path).
const ModelShape* find_shape(std::string_view name);
/// "llama-1b, qwen3-8b, tiny", for usage messages.
std::string shape_names();

/// "F16" | "Q4_K" → the type of the file's 2-D weights; throws Error(INVALID_ARGUMENT) otherwise.
DType shaped_weight_type(std::string_view name);

/// Writes the GGUF of `shape` with `type` weights to `path` (one tensor in memory at a time, pool
/// quantized on `threads` threads). Returns the file's size in bytes.
int64_t write_shaped_gguf(const std::string& path, const ModelShape& shape, DType type, uint64_t seed = 0,
                          int threads = 0);

}  // namespace oxyd::bench
