// Memory estimate for serving a model: weights + KV cache + recurrent state + runtime buffers,
// computed from a ModelConfig and the weights' byte count only (no file data), so it works on
// local files and on remote repos read through GGUF headers. Every term follows what the engine
// allocates (model::Transformer::memory_usage + KvCache::bytes); tests/estimate keeps the two
// within 5% on every tiny model and tools/check_estimate_real.py on the real Gemma 3 270M.
//
// What is counted, exactly (ctx = context_len; S = num_sequences; bs = block_size):
// * weights: the bytes of every tensor as stored (GGUF tensor nbytes; safetensors data bytes).
//   MoE experts are counted whole (all experts resident). Tied embeddings are stored once. (The
//   engine maps the 2-D weights in place and keeps 1-D ones as f32 copies: a few KiB apart.)
//   Plus, with EstimateParams::packed_extra (the CLI's: model::packed_weight_extra_bytes), what the
//   copies the CPU matmul packs its weights into add over the file rows they replace: rows padded
//   to 16, and on AVX2 Q4_K / Q5_K / IQ4_XS 148/144, 180/176, 138/136 bytes per super-block
//   (backend/cpu/matmul/pack.h). resident_weight_bytes() gives the sum.
// * KV, per attention layer and sequence, K and V each: tokens × kv_heads × head_vector_bytes,
//     tokens = round_up(ctx, bs): the server sizes its paged pool in whole contexts for every
//     layer (one block table per sequence serves all layers), sliding-window layers included.
//     kv_bytes_windowed is the figure with sliding layers at round_up(min(ctx, window + bs), bs)
//     (a window straddles at most one extra block), what a windowed pool would need.
//     head_vector_bytes(d) = d × 4 (f32), d × 2 (f16/bf16; bf16 is the server's default,
//     kDefaultKvFormat of core/kv_format.h, and EstimateParams::kv_format's), or for --kv-quant b bits ceil(d × b / 8) + 4 (b-bit codes +
//     one f32 L2 norm; lossless=4, balanced=3, aggressive=2; docs/architecture.md §4; core/kv_quant.h).
//   Layers that reuse another layer's KV (Gemma 4 num_kv_shared_layers) hold none.
// * recurrent state, per linear-attention (Gated DeltaNet) layer and sequence, in f32:
//     Hv × dk × dv (delta-rule state) + (2·Hk·dk + Hv·dv) × (kernel − 1) (conv state); and as
//     many again for the prefix cache's state snapshots (num_state_snapshots_for(S) of them,
//     kept at cached block ends), which the server allocates while prefix caching is on.
// * runtime buffers, for T = min(max_batch_tokens, ctx × S) tokens in a step and R = min(S, T)
//   logits rows (one per sequence): f32 activations T × (2·hidden + 2·q_dim + 2·kv_dim + width)
//   with width = 2 × ffn (ffn = max(dense intermediate, top_k × expert width + shared width)) or
//   the Gated DeltaNet projections if wider, + R × hidden (rows fed to the head) + R × vocab
//   (logits), + the largest matmul activation scratch (matmul_scratch: the CPU backend's figure
//   for this machine; default the AMX prefill layout, the largest any CPU kernel prepares).
//   Attention reads the paged cache with an online softmax, so no T × ctx score matrix exists.
// Not counted: the engine's copy of the logits rows for the sampler (R × vocab × 4 B), the split-
// K partials of long decodes (< 3 × threads × 32 × (head_dim + 2) × 4 B), scheduler tables; with
// --kv-quant, the rotated copy of q (T × q_dim × 4 B) and the F32 blocks a prefill step decodes
// once (≤ 64 MiB, backend/cpu/attention.cc).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "core/kv_format.h"
#include "loader/gguf.h"
#include "loader/model_config.h"

namespace oxyd::hub {


/// Bytes of activation scratch one matmul of m rows × k inputs needs against a weight of the
/// named dtype ("Q4_K", "BF16", ...); 0 when the kernel reads f32 activations directly.
using MatmulScratchFn = std::function<int64_t(const std::string& weight_dtype, int64_t m, int64_t k)>;
/// Bytes a GGUF model's packed matmul weights hold beyond their file rows, from its header.
using PackedExtraFn =
    std::function<int64_t(const loader::ModelConfig& config, const std::vector<loader::GgufTensorInfo>& tensors)>;

/// `oxydllm start`'s KV flags (0 = auto each), for an estimate of what start allocates.
struct ServerKvFlags {
  int64_t max_context_len = 0, max_num_seqs = 0, kv_cache_bytes = 0;
};

/// State snapshots the server keeps for the prefix cache of a model with linear-attention layers
/// (kv::BlockManagerConfig::num_state_snapshots), for `num_sequences` running sequences.
inline int64_t num_state_snapshots_for(int64_t num_sequences) { return num_sequences; }

struct EstimateParams {
  int64_t context_len = 4096;
  int64_t num_sequences = 1;
  KvFormat kv_format = kDefaultKvFormat;  // the server's default (tests/serving KvDtype.DefaultsAgree)
  int64_t block_size = 16;          // paged-KV block (engine::ModelOptions::block_size)
  int64_t max_batch_tokens = 1024;  // scheduler token budget per step (max_num_batched_tokens)
  bool windowed_sliding_kv = false; // true: sliding layers at their window (not the engine today)
  bool prefix_caching = true;       // the server's default: state snapshots counted (above)
  int64_t kv_pool_tokens = 0;       // > 0: the KV term is the server's pool of this many tokens
                                    // (plan_kv_pool) instead of context × sequences
  /// Set: context_len, num_sequences and kv_pool_tokens are resolved from these flags by
  /// plan_kv_pool for each model (with_server_pool), as `oxydllm start` resolves them.
  std::optional<ServerKvFlags> server_kv;
  MatmulScratchFn matmul_scratch;   // null: cpu_matmul_scratch
  PackedExtraFn packed_extra;       // null: weights counted as stored
};

/// The scratch this machine's CPU backend prepares for one matmul of m rows of width k against a
/// weight of that dtype name (GGUF / safetensors spelling); 0 for a name it does not know.
int64_t cpu_matmul_scratch(const std::string& weight_dtype, int64_t m, int64_t k);

/// "F16", "lossless 4-bit + f32 norm", ... (core/kv_format.h kv_format_description).
std::string kv_format_name(const EstimateParams& p);

/// The KV pool `oxydllm start` allocates, from its flags (engine::LLMEngine::create calls this; so
/// does `estimate`, which thus prints exactly what start allocates with the same flags):
///   context   --max-context-len, clamped to the trained context; 0 (auto) = the trained context
///             (4096 when the model does not say), capped to what one sequence's KV fits in the
///             memory cap, in whole blocks
///   pool      --kv-cache-mb when given; else what the concurrency needs: --max-num-seqs full
///             contexts, or (auto) one full context or 64 sequences of 256 tokens, whichever is
///             more; capped at the memory cap (25% of MemAvailable) but never below one context
///   seqs      --max-num-seqs, or (auto) max(pool / one context, 64); at most min(256, blocks)
struct KvPlanRequest {
  int64_t bytes_per_token = 0;     // K+V of one token over all layers (kv_bytes_per_token)
  int64_t trained_context = 0;     // max_position_embeddings (0: unknown)
  int64_t max_context_len = 0;     // 0 = auto
  int64_t max_num_seqs = 0;        // 0 = auto
  int64_t kv_cache_bytes = 0;      // 0 = auto
  int64_t block_size = 16;
  int64_t memory_cap_bytes = 0;    // the auto pool's ceiling; 0 = none
  int64_t memory_available = 0;    // MemAvailable, for the one-context check; 0 = unknown
};
struct KvPlan {
  int64_t context_len = 0, num_blocks = 0, max_num_seqs = 0, pool_bytes = 0, block_size = 16;
  int64_t pool_tokens() const { return num_blocks * block_size; }
};
inline constexpr int64_t kAutoRunningSeqs = 64;    // auto max_num_seqs floor
inline constexpr int64_t kAutoAvgSeqTokens = 256;  // the auto pool's room per running sequence
/// Throws Error(OUT_OF_MEMORY) giving both numbers when one context does not fit, and
/// Error(INVALID_ARGUMENT) for non-positive sizes. `id` names the model in messages.
KvPlan plan_kv_pool(const KvPlanRequest& r, const std::string& id);
/// MemAvailable from /proc/meminfo (0 when unknown) and the auto pool's cap: a quarter of it.
int64_t mem_available_bytes();
int64_t kv_memory_cap(int64_t mem_available);

struct MemoryEstimate {
  int64_t weight_bytes = 0;
  int64_t kv_bytes = 0;       // attention KV as the engine allocates it (see windowed_sliding_kv)
  int64_t kv_bytes_windowed = 0;  // the same with sliding layers at their window
  int64_t state_bytes = 0;    // linear-attention recurrent + conv state
  int64_t runtime_bytes = 0;  // activations of one step + logits
  int64_t kv_bytes_per_token = 0;  // K+V of one token over all layers (the pool's unit)
  int64_t total() const { return weight_bytes + kv_bytes + state_bytes + runtime_bytes; }

  int64_t num_full_layers = 0, num_sliding_layers = 0, num_linear_layers = 0, num_shared_kv_layers = 0;
  int64_t sliding_window = 0;
};

/// `tensor_types` (dtype name → tensor count, ModelMeta::tensor_types) picks the matmul scratch;
/// empty = assume quantized weights. Throws Error(INVALID_ARGUMENT) for non-positive
/// context/sequences or a config lacking geometry.
MemoryEstimate estimate_memory(const loader::ModelConfig& cfg, int64_t weight_bytes, const EstimateParams& p,
                               const std::map<std::string, int64_t>& tensor_types = {});

/// `p` with p.server_kv resolved for `cfg` (plan_kv_pool with this machine's memory cap): the
/// context, the sequences (max_num_seqs) and the pool. Unchanged when p.server_kv is unset.
EstimateParams with_server_pool(const loader::ModelConfig& cfg, EstimateParams p);

/// One line on what the KV figure covers: "8192 ctx × 4 seq, F16; 30 sliding (512) + 6 full layers".
std::string describe_kv(const MemoryEstimate& e, const EstimateParams& p);

}  // namespace oxyd::hub
