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
//   (backend/cpu/matmul_pack.h). resident_weight_bytes() gives the sum.
// * KV, per attention layer and sequence, K and V each: tokens × kv_heads × head_vector_bytes,
//     tokens = round_up(ctx, bs): the server sizes its paged pool in whole contexts for every
//     layer (one block table per sequence serves all layers), sliding-window layers included.
//     kv_bytes_windowed is the figure with sliding layers at round_up(min(ctx, window + bs), bs)
//     (a window straddles at most one extra block), what a windowed pool would need.
//     head_vector_bytes(d) = d × 4 (f32: the server's default, server::kDefaultKvDType, and
//     EstimateParams::kv_dtype's), d × 2 (f16/bf16), or for --kv-quant b bits ceil(d × b / 8) + 4 (b-bit codes +
//     one f32 L2 norm; lossless=4, balanced=3, aggressive=2; docs/architecture.md §4; core/kv_quant.h).
//   Layers that reuse another layer's KV (Gemma 4 num_kv_shared_layers) hold none.
// * recurrent state, per linear-attention (Gated DeltaNet) layer and sequence, in f32:
//     Hv × dk × dv (delta-rule state) + (2·Hk·dk + Hv·dv) × (kernel − 1) (conv state).
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
#include <string>
#include <vector>

#include "core/dtype.h"
#include "loader/gguf.h"
#include "loader/model_config.h"

namespace oxyd::hub {

enum class KvDtype { F16, BF16, F32 };

/// Bytes of activation scratch one matmul of m rows × k inputs needs against a weight of the
/// named dtype ("Q4_K", "BF16", ...); 0 when the kernel reads f32 activations directly.
using MatmulScratchFn = std::function<int64_t(const std::string& weight_dtype, int64_t m, int64_t k)>;
/// Bytes a GGUF model's packed matmul weights hold beyond their file rows, from its header.
using PackedExtraFn =
    std::function<int64_t(const loader::ModelConfig& config, const std::vector<loader::GgufTensorInfo>& tensors)>;

struct EstimateParams {
  int64_t context_len = 4096;
  int64_t num_sequences = 1;
  KvDtype kv_dtype = KvDtype::F32;  // the server's default (server::kDefaultKvDType; tests/serving)
  int kv_quant_bits = 0;            // 0 = off; 4 lossless, 3 balanced, 2 aggressive
  int64_t block_size = 16;          // paged-KV block (server::ModelOptions::block_size)
  int64_t max_batch_tokens = 1024;  // scheduler token budget per step (max_num_batched_tokens)
  bool windowed_sliding_kv = false; // true: sliding layers at their window (not the engine today)
  MatmulScratchFn matmul_scratch;   // null: default_matmul_scratch
  PackedExtraFn packed_extra;       // null: weights counted as stored
};

/// The largest scratch any CPU matmul kernel prepares (AMX: bf16 rows + packed tiles) for
/// quantized and BF16 weights, 0 for F32/F16: (2·m + 2·round_up(m, 32)) × round_up(k, 32) + 64.
int64_t default_matmul_scratch(const std::string& weight_dtype, int64_t m, int64_t k);

/// "off" → 0, "lossless" → 4, "balanced" → 3, "aggressive" → 2; Error(INVALID_ARGUMENT) otherwise.
int kv_quant_bits_from_name(const std::string& mode);
/// "f16", "bf16", "f32" (case-insensitive); Error(INVALID_ARGUMENT) otherwise.
KvDtype kv_dtype_from_name(const std::string& name);
/// The engine's element type for `dtype`.
DType kv_dtype_to_dtype(KvDtype dtype);
/// Bytes of one K or V head vector of `head_dim` values in the cache.
int64_t kv_head_vector_bytes(int64_t head_dim, KvDtype dtype, int kv_quant_bits);
/// "F16", "Q4 lossless (4-bit + f32 norm)", ...
std::string kv_format_name(const EstimateParams& p);

struct MemoryEstimate {
  int64_t weight_bytes = 0;
  int64_t kv_bytes = 0;       // attention KV as the engine allocates it (see windowed_sliding_kv)
  int64_t kv_bytes_windowed = 0;  // the same with sliding layers at their window
  int64_t state_bytes = 0;    // linear-attention recurrent + conv state
  int64_t runtime_bytes = 0;  // activations of one step + logits
  int64_t total() const { return weight_bytes + kv_bytes + state_bytes + runtime_bytes; }

  int64_t num_full_layers = 0, num_sliding_layers = 0, num_linear_layers = 0, num_shared_kv_layers = 0;
  int64_t sliding_window = 0;
};

/// `tensor_types` (dtype name → tensor count, ModelMeta::tensor_types) picks the matmul scratch;
/// empty = assume quantized weights. Throws Error(INVALID_ARGUMENT) for non-positive
/// context/sequences or a config lacking geometry.
MemoryEstimate estimate_memory(const loader::ModelConfig& cfg, int64_t weight_bytes, const EstimateParams& p,
                               const std::map<std::string, int64_t>& tensor_types = {});

/// One line on what the KV figure covers: "8192 ctx × 4 seq, F16; 30 sliding (512) + 6 full layers".
std::string describe_kv(const MemoryEstimate& e, const EstimateParams& p);

}  // namespace oxyd::hub
