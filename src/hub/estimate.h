// Memory estimate for serving a model: weights + KV cache + recurrent state + runtime buffers,
// computed from a ModelConfig and the weights' byte count only (no file data), so it works on
// local files and on remote repos read through GGUF headers. Every term is written down below so
// the engine's real allocation can be compared with it once it exists (issue 7: within 5%).
//
// What is counted, exactly (B = bytes; ctx = context_len; S = num_sequences; bs = block_size):
// * weights: the bytes of every tensor as stored (GGUF tensor nbytes; safetensors data bytes).
//   MoE experts are counted whole (all experts resident). Tied embeddings are stored once.
// * KV, per attention layer and sequence, K and V each:
//     tokens(layer) = round_up(ctx, bs) for full attention;
//                     round_up(min(ctx, window + bs), bs) for sliding-window layers (a window
//                     straddles at most one extra block);
//     bytes = tokens × kv_heads(layer) × head_vector_bytes(head_dim(layer)), where
//     head_vector_bytes(d) = d × 2 (f16/bf16), d × 4 (f32), or for --kv-quant b bits:
//     ceil(d × b / 8) + 4 (b-bit codes + one f32 L2 norm per head vector; lossless=4,
//     balanced=3, aggressive=2, DESIGN.md §4, FEATURES-REFERENCE §1.11).
//   Layers that reuse another layer's KV (Gemma 4 num_kv_shared_layers) hold none.
// * recurrent state, per linear-attention (Gated DeltaNet) layer and sequence, in f32:
//     Hv × dk × dv (delta-rule state) + (2·Hk·dk + Hv·dv) × (kernel − 1) (conv state).
// * runtime buffers (f32, reused across layers, so one layer's worth): for T = min(max_batch_tokens,
//   ctx × S) tokens in one step, T × (3·hidden + q_dim + 2·kv_dim + max(ffn_width, gdn_width)) × 4
//   where ffn_width = 2 × max(dense intermediate, top_k × expert width + shared width), plus the
//   logits rows S × vocab × 4. Attention uses the paged cache with an online softmax, so no
//   T × ctx score matrix is counted.
// Checking it against the engine (pending the engine): load with the same EstimateParams and a
// full context allocated, then compare term by term — weights with the resident weight buffers,
// kv_bytes with the KV block pool, state_bytes with the recurrent-state slots, runtime_bytes with
// the step workspace + logits buffer — and the total with the process's device/host usage.
#pragma once

#include <cstdint>
#include <string>

#include "loader/model_config.h"

namespace oxyd::hub {

enum class KvDtype { F16, BF16, F32 };

struct EstimateParams {
  int64_t context_len = 4096;
  int64_t num_sequences = 1;
  KvDtype kv_dtype = KvDtype::F16;
  int kv_quant_bits = 0;            // 0 = off; 4 lossless, 3 balanced, 2 aggressive
  int64_t block_size = 16;          // paged-KV block (oxydLLM's DEFAULT_BLOCK_SIZE)
  int64_t max_batch_tokens = 1024;  // scheduler token budget per step
};

/// "off" → 0, "lossless" → 4, "balanced" → 3, "aggressive" → 2; Error(INVALID_ARGUMENT) otherwise.
int kv_quant_bits_from_name(const std::string& mode);
/// "f16", "bf16", "f32" (case-insensitive); Error(INVALID_ARGUMENT) otherwise.
KvDtype kv_dtype_from_name(const std::string& name);
/// Bytes of one K or V head vector of `head_dim` values in the cache.
int64_t kv_head_vector_bytes(int64_t head_dim, KvDtype dtype, int kv_quant_bits);
/// "F16", "Q4 lossless (4-bit + f32 norm)", ...
std::string kv_format_name(const EstimateParams& p);

struct MemoryEstimate {
  int64_t weight_bytes = 0;
  int64_t kv_bytes = 0;       // attention KV (full + sliding layers)
  int64_t state_bytes = 0;    // linear-attention recurrent + conv state
  int64_t runtime_bytes = 0;  // activations of one step + logits
  int64_t total() const { return weight_bytes + kv_bytes + state_bytes + runtime_bytes; }

  int64_t num_full_layers = 0, num_sliding_layers = 0, num_linear_layers = 0, num_shared_kv_layers = 0;
  int64_t sliding_window = 0;
};

/// Throws Error(INVALID_ARGUMENT) for non-positive context/sequences or a config lacking geometry.
MemoryEstimate estimate_memory(const loader::ModelConfig& cfg, int64_t weight_bytes, const EstimateParams& p);

/// One line on what the KV figure covers: "8192 ctx × 4 seq, F16; 30 sliding (512) + 6 full layers".
std::string describe_kv(const MemoryEstimate& e, const EstimateParams& p);

}  // namespace oxyd::hub
