// Vocabulary shared by every backend (reference, cpu, cuda) and ops/: op variants and the inputs
// of paged attention. Header only, no code: backend functions assume what ops/ validated (shapes,
// dtypes, index ranges) and never check again. Index tensors are I32 everywhere.
#pragma once

#include <cstdint>

#include "core/kv_format.h"
#include "core/tensor.h"

namespace oxyd::backend {

/// RoPE pairing (docs/architecture.md §9). NEOX = HF rotate_half: pairs (i, i + rot_dim/2).
/// INTERLEAVED = GPT-J / ggml NORM: pairs (2i, 2i + 1).
enum class RopeStyle : uint8_t { NEOX, INTERLEAVED };

/// Activation of activation() and of the gate in glu(): SILU (SwiGLU), GELU_ERF (exact gelu),
/// GELU_TANH (gelu_pytorch_tanh; GeGLU of Gemma), SIGMOID (the output gate of Qwen3.5's attention).
enum class Activation : uint8_t { SILU, GELU_ERF, GELU_TANH, SIGMOID };

/// How a mixture-of-experts router turns one token's logits [num_experts] into its top_k experts
/// (ids) and their weights. Selection is by logit, descending; equal logits go to the lowest
/// expert index first (torch.topk on CPU does not promise this, so goldens avoid exact ties).
///   SOFTMAX: w = softmax(logits)[ids] (Qwen3-MoE, OLMoE, Mixtral)
///   SIGMOID: w = sigmoid(logits[ids])
///   and then, if norm_topk_prob, w /= Σ w.
///   softmax_after_topk (gpt-oss): w = softmax over the k selected logits (scoring ignored).
///   Last, if expert_scale has data (Gemma 4's per-expert scale, F32 [E] on the logits' device):
///   w (rounded to F32) *= expert_scale[id].
/// ids and weights come out in rank order (best first); callers sum expert outputs in that order.
enum class RouterScoring : uint8_t { SOFTMAX, SIGMOID };
struct RouterParams {
  RouterScoring scoring = RouterScoring::SOFTMAX;
  int top_k = 1;
  bool norm_topk_prob = false;
  bool softmax_after_topk = false;
  Tensor expert_scale;  // absent: data == nullptr
};

/// One expert's gated MLP: gate / up [I, H], down [H, I]; absent biases have data == nullptr.
struct ExpertWeights {
  Tensor gate, up, down;
  Tensor gate_bias, up_bias, down_bias;  // [I], [I], [H]
};

/// The expert MLPs of one MoE layer over the rows grouped by expert (moe_group). Expert e owns
/// rows [offsets[e], offsets[e + 1]) of xs; for each of them
///   ys[r] = down_e(act(xs[r]·gate_eᵀ + gate_bias_e) ⊙ (xs[r]·up_eᵀ + up_bias_e)) + down_bias_e
/// where act is `act` (glu), or gpt-oss's clamped SwiGLU (glu_oai with swiglu_alpha) when
/// swiglu_limit > 0. Every row's result is that of its expert alone (batch-invariant); experts
/// without rows are never read. gate / up are scratch of [N, I].
struct MoeExpertsParams {
  Tensor xs;       // [N, H] F32
  Tensor offsets;  // [E + 1] I32, non-decreasing, offsets[E] = N
  const ExpertWeights* experts = nullptr;  // [E]
  Activation act = Activation::SILU;
  float swiglu_limit = 0.0f, swiglu_alpha = 1.702f;
  Tensor gate, up;  // [N, I] F32 scratch
  Tensor ys;        // [N, H] F32
};

/// One paged-attention call: one layer, one step, queries of many requests packed flat (vLLM v1
/// layout, docs/architecture.md §3). Request r owns query rows [query_start_loc[r], query_start_loc[r+1]);
/// its query_len queries sit at the LAST query_len positions of its seq_lens[r] cached tokens
/// (the step's own K/V are already in the cache). Token t of request r lives in cache block
/// block_table[r, t / block_size] at offset t % block_size.
/// Query head h reads KV head h / (num_heads / num_kv_heads). Scores are
/// s = scale·q·k, then s = cap·tanh(s/cap) when logit_softcap > 0, then the causal mask
/// (key k visible from query position p iff k ≤ p and, when sliding_window > 0, p − k <
/// sliding_window), then softmax in fp32 with an optional per-head sink column that is dropped.
/// kv_format Q4 / Q3 / Q2: the caches are U8 [num_blocks, block_size, num_kv_heads, row_bytes], each
/// head vector in core/kv_quant.h's format (kv_format_row_bytes(kv_format, head_dim) bytes), and K/V
/// are read as their reconstruction.
struct AttentionParams {
  Tensor q;                // [num_tokens, num_heads, head_dim] F32
  Tensor k_cache;          // [num_blocks, block_size, num_kv_heads, head_dim] F32 | F16 | BF16,
                           // (kv_format_dtype(kv_format)), or U8 [..., kv_format_row_bytes]
  Tensor v_cache;          // same shape and dtype as k_cache
  Tensor query_start_loc;  // [num_reqs + 1] I32, 0 = first ≤ ... ≤ last = num_tokens
  Tensor seq_lens;         // [num_reqs] I32, cached tokens of request r including this step's
  Tensor block_table;      // [num_reqs, max_blocks_per_req] I32, block ids into the caches
  Tensor sinks;            // [num_heads] F32 sink logits, or data == nullptr for none
  Tensor out;              // [num_tokens, num_heads, head_dim] F32, must not alias q
  float scale = 1.0f;      // multiplies q·k (usually head_dim^-½)
  int sliding_window = 0;  // > 0: keys older than this many positions are masked
  float logit_softcap = 0; // > 0: cap·tanh(s/cap) on the scaled scores, before the mask
  KvFormat kv_format = KvFormat::F32;  // what the caches hold (core/kv_format.h)
  // false: every query of request r sees all seq_lens[r] keys (encoders' bidirectional attention,
  // one request per sequence); true: query i sees the keys up to its position
  // seq_lens[r] − query_len + i. Non-causal attention takes no sliding window.
  bool causal = true;

  bool has_sinks() const { return sinks.data != nullptr; }
  int64_t num_reqs() const { return seq_lens.dim(0); }
  int64_t num_tokens() const { return q.dim(0); }
  int64_t num_heads() const { return q.dim(1); }
  int64_t head_dim() const { return q.dim(2); }
  int64_t num_blocks() const { return k_cache.dim(0); }
  int64_t block_size() const { return k_cache.dim(1); }
  int64_t num_kv_heads() const { return k_cache.dim(2); }
  int64_t max_blocks_per_req() const { return block_table.dim(1); }
};

}  // namespace oxyd::backend
