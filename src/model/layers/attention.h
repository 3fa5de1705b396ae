// Self-attention block of one decoder layer over the flat batch: projections (+bias), optional
// per-head q/k RMSNorm, RoPE, K/V written into the paged cache at slot_mapping, paged attention
// (with per-head sink logits when the layer has them), output projection (+bias). Knows nothing of families: every variation is a field of AttentionSpec.
#pragma once

#include <span>
#include <vector>

#include "backend/op_params.h"
#include "core/tensor.h"
#include "model/weights.h"
#include "model/workspace.h"

namespace oxyd::model::layers {

/// RoPE tables of one layer (computed once at load).
struct RopeTable {
  std::vector<float> inv_freq;      // [rot/2]
  std::vector<float> freq_factors;  // [rot/2] per-pair divisors, or empty
  float attention_factor = 1.0f;    // multiplies cos and sin
  backend::RopeStyle style = backend::RopeStyle::NEOX;
  /// Length-dependent tables (transformers' longrope, Phi-3.5 / Phi-4-mini): a request whose
  /// BatchMeta::rope_lens entry is at most switch_len rotates with short_inv_freq, a longer one
  /// (or any, when rope_lens is empty) with inv_freq. Every key of a sequence must carry the table of its current length: the
  /// scheduler recomputes a sequence's KV once it grows past switch_len. Empty: inv_freq always.
  std::vector<float> short_inv_freq;  // [rot/2]
  int64_t switch_len = 0;
  /// The vectors above as F32 tensors of the model's device (place_rope_table); factors and
  /// short_inv have data == nullptr where their vector is empty.
  Tensor inv, factors, short_inv;
  backend::Allocation device_copy;  // their memory, off the CPU
};

/// Makes t's tensors from its final vectors: views of them on the CPU (t must not move after),
/// one copy in d's memory elsewhere.
void place_rope_table(RopeTable& t, Device d);

struct AttentionSpec {
  int64_t num_heads = 0, num_kv_heads = 0, head_dim = 0;
  float rms_norm_eps = 1e-6f;  // q/k norms
  float scale = 1.0f;          // on q·k
  float logit_softcap = 0.0f;  // > 0: cap·tanh(s/cap)
  int sliding_window = 0;      // > 0: keys older than this are masked
  bool qk_norm_full_width = false;  // q_norm / k_norm over [nh·hd] / [nkv·hd], not per head (OLMoE)
  float clip_qkv = 0.0f;       // > 0: q, k, v clamped to ±clip_qkv after the q/k norms (OLMoE)
  // > 0: q after RoPE times 1 + temperature_beta·ln(1 + floor(pos / temperature_floor)) (llama 4 /
  // Ministral 3 llama_4_scaling_beta over original_max_position_embeddings)
  float temperature_beta = 0.0f;
  int64_t temperature_floor = 0;
  bool v_norm = false;          // v RMS-normed per head without a weight (ArchSpec::attn_v_norm)
  // The layer computes only q and attends the K/V another layer wrote this step (the caches
  // passed are that layer's; ModelConfig::LayerDims::kv_layer).
  bool reuse_kv = false;
  const RopeTable* rope = nullptr;  // nullptr: no RoPE (absolute position embeddings)
};

/// The batch metadata every layer shares (I32 views of ForwardBatch).
struct BatchMeta {
  Tensor positions;        // [num_tokens]
  Tensor query_start_loc;  // [num_reqs + 1]
  Tensor seq_lens;         // [num_reqs]
  Tensor block_table;      // [num_reqs, max_blocks_per_req]
  Tensor slot_mapping;     // [num_tokens]
  std::span<const int32_t> rope_lens;  // [num_reqs] host: picks length-dependent RoPE tables
  std::span<const int32_t> host_query_start_loc;  // [num_reqs + 1] host copy, read with rope_lens
  bool causal = true;  // false: bidirectional (encoders; AttentionParams::causal)
};

/// Scratch reused across layers and steps (grows, never shrinks).
struct AttentionWorkspace {
  Workspace q, k, v, out, gate;
};

/// h [T, H] (normed input) → out [T, H] (o_proj output, before any post-norm or residual).
/// k_cache / v_cache: this layer's [num_blocks, block_size, num_kv_heads, head_dim], or with
/// a quantized KvFormat its U8 form (model/kv_cache.h).
void self_attention(const LayerWeights& w, const AttentionSpec& spec, const BatchMeta& meta,
                    const Tensor& k_cache, const Tensor& v_cache, KvFormat kv_format, const Tensor& h,
                    AttentionWorkspace& ws, const Tensor& out);

}  // namespace oxyd::model::layers
