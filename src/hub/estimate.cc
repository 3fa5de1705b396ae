#include "hub/estimate.h"

#include <algorithm>
#include <climits>
#include <cstdio>
#include <fstream>

#include "core/dtype.h"
#include "core/error.h"
#include "hub/progress.h"
#include "ops/dispatch.h"

namespace oxyd::hub {
namespace {

int64_t round_up(int64_t x, int64_t m) { return (x + m - 1) / m * m; }


}  // namespace

std::string kv_format_name(const EstimateParams& p) { return kv_format_description(p.kv_format); }

int64_t cpu_matmul_scratch(const std::string& weight_dtype, int64_t m, int64_t k) {
  const std::optional<DType> dt = dtype_from_name(weight_dtype);
  return dt ? ops::device_backend(Device::CPU).matmul_scratch_bytes(*dt, m, k) : 0;
}

MemoryEstimate estimate_memory(const loader::ModelConfig& c, int64_t weight_bytes, const EstimateParams& p,
                               const std::map<std::string, int64_t>& tensor_types) {
  if (p.context_len <= 0 || p.num_sequences <= 0 || p.block_size <= 0 || p.max_batch_tokens <= 0)
    throw_error(ErrorCode::INVALID_ARGUMENT, "estimate: --context-len and --num-sequences must be positive");
  const int64_t L = c.num_hidden_layers;
  if (L <= 0 || c.hidden_size <= 0 || c.num_attention_heads <= 0 || c.head_dim <= 0)
    throw_error(ErrorCode::INVALID_ARGUMENT, c.source + ": the config lacks the layer geometry an estimate needs");
  MemoryEstimate e;
  e.weight_bytes = weight_bytes;
  e.sliding_window = c.sliding_window.value_or(0);

  const int64_t first_shared = L - c.num_kv_shared_layers;
  int64_t max_q_dim = c.num_attention_heads * c.head_dim, max_kv_dim = 0, gdn_width = 0;
  for (int64_t i = 0; i < L; ++i) {
    const std::string& type = i < int64_t(c.layer_types.size()) ? c.layer_types[size_t(i)] : std::string(loader::kFullAttention);
    if (type == loader::kLinearAttention) {
      ++e.num_linear_layers;
      const int64_t hk = c.linear_num_key_heads, dk = c.linear_key_head_dim;
      const int64_t hv = c.linear_num_value_heads, dv = c.linear_value_head_dim;
      const int64_t conv_dim = 2 * hk * dk + hv * dv;
      const int64_t per_seq = (hv * dk * dv + conv_dim * std::max<int64_t>(0, c.linear_conv_kernel_dim - 1)) * 4;
      e.state_bytes += per_seq * (p.num_sequences + (p.prefix_caching ? num_state_snapshots_for(p.num_sequences) : 0));
      gdn_width = std::max(gdn_width, 2 * conv_dim + 2 * hv * dv + 2 * hv);  // conv in / out, z, core, a, b
      continue;
    }
    const bool sliding = type == loader::kSlidingAttention && c.sliding_window && *c.sliding_window > 0;
    const bool global_geometry = !sliding && c.global_head_dim > 0;  // Gemma 4 full layers
    const int64_t head_dim = global_geometry ? c.global_head_dim : c.head_dim;
    int64_t kv_heads = c.num_key_value_heads;
    if (!c.num_key_value_heads_per_layer.empty()) kv_heads = c.num_key_value_heads_per_layer[size_t(i)];
    else if (global_geometry && c.num_global_key_value_heads > 0) kv_heads = c.num_global_key_value_heads;
    max_q_dim = std::max(max_q_dim, c.num_attention_heads * head_dim);
    max_kv_dim = std::max(max_kv_dim, kv_heads * head_dim);
    if (sliding) ++e.num_sliding_layers;
    else ++e.num_full_layers;
    if (c.num_kv_shared_layers > 0 && i >= first_shared) {
      ++e.num_shared_kv_layers;
      continue;
    }
    const int64_t one = 2 * kv_heads * kv_format_row_bytes(p.kv_format, head_dim);
    e.kv_bytes_per_token += one;
    const int64_t per_token = one * p.num_sequences;
    const int64_t full = round_up(p.context_len, p.block_size);
    const int64_t windowed = sliding ? round_up(std::min(p.context_len, *c.sliding_window + p.block_size), p.block_size) : full;
    if (p.kv_pool_tokens > 0) {  // the server's pool: every layer holds every pooled token
      e.kv_bytes += p.kv_pool_tokens * one;
      e.kv_bytes_windowed += std::min(p.kv_pool_tokens, windowed * p.num_sequences) * one;
      continue;
    }
    e.kv_bytes += (p.windowed_sliding_kv ? windowed : full) * per_token;
    e.kv_bytes_windowed += windowed * per_token;
  }

  // Dense MLP width, unless every layer is an MoE layer (transformers' rule: no mlp_only_layers,
  // decoder_sparse_step 1; Gemma 4's MoE block sits beside a dense MLP).
  const bool any_dense = c.num_experts <= 0 || c.enable_moe_block || !c.mlp_only_layers.empty() || c.decoder_sparse_step > 1;
  int64_t ffn = any_dense ? c.intermediate_size : 0;
  if (any_dense && int64_t(c.layer_types.size()) == L)  // per-layer widths (double-wide MLPs)
    for (int64_t i = 0; i < L; ++i) ffn = std::max(ffn, c.layer_dims(i).intermediate_size);
  // MoE: the grouped experts' gate / up [k·I] per token; a shared expert's [I_s] reuse them.
  if (c.num_experts > 0)
    ffn = std::max({ffn, c.num_experts_per_tok * c.moe_intermediate_size, c.shared_expert_intermediate_size});
  const int64_t H = c.hidden_size;
  const int64_t T = std::min(p.max_batch_tokens, p.context_len * p.num_sequences);
  const int64_t R = std::min(p.num_sequences, T);
  // MoE layers also hold the router logits [E], ids / weights / rows / gather [4k] and the gathered
  // expert inputs and outputs [2·k·H] per token, and E + 1 expert offsets (model/layers/moe.h); a
  // shared expert one more weight, row and output [2 + H]. The DeltaNet buffers and a gated
  // attention's gate (model::Transformer::gated_width) are held beside the dense ones; the gate:
  // q_proj holding twice the query rows (hybrid Qwen3.5 layers).
  const int64_t shexp = c.shared_expert_intermediate_size > 0 ? 2 + H : 0;
  const int64_t moe =
      c.num_experts > 0 ? c.num_experts + 4 * c.num_experts_per_tok + 2 * c.num_experts_per_tok * H + shexp : 0;
  const int64_t gate = e.num_linear_layers > 0 ? c.num_attention_heads * c.head_dim : 0;
  // An MoE block beside the dense MLP holds the router input and the experts' branch [2·H]; per-layer
  // input embeddings hold [T, L·P] twice and one layer's input and gate [2·P].
  const int64_t beside = c.num_experts > 0 && c.enable_moe_block ? 2 * H : 0;
  const int64_t P = c.hidden_size_per_layer_input, ple = P > 0 ? 2 * L * P + 2 * P : 0;
  const int64_t per_token = 2 * H + 2 * max_q_dim + 2 * max_kv_dim + 2 * ffn + gdn_width + gate + moe + beside + ple;
  const int64_t floats = T * per_token + R * H + R * c.vocab_size + (c.num_experts > 0 ? c.num_experts + 1 : 0);
  // Largest matmul scratch: layer matmuls on T rows (k = hidden, q_dim or ffn), the head on R.
  const MatmulScratchFn& fn = p.matmul_scratch ? p.matmul_scratch : MatmulScratchFn(cpu_matmul_scratch);
  int64_t scratch = 0;
  auto each_type = [&](auto&& f) {
    if (tensor_types.empty()) return f(std::string("Q8_0"));
    for (const auto& [t, n] : tensor_types) f(t);
  };
  each_type([&](const std::string& t) {
    for (int64_t k : {H, max_q_dim, ffn}) scratch = std::max(scratch, fn(t, T, k));
    scratch = std::max(scratch, fn(t, R, H));
    if (c.num_experts > 0) {  // the grouped expert matmuls prepare all T·k gathered rows at once
      const int64_t N = T * c.num_experts_per_tok;
      scratch = std::max({scratch, fn(t, N, H), fn(t, N, c.moe_intermediate_size)});
    }
  });
  e.runtime_bytes = floats * 4 + scratch;
  return e;
}

KvPlan plan_kv_pool(const KvPlanRequest& r, const std::string& id) {
  auto gib = [](int64_t b) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.2f GiB", double(b) / double(int64_t(1) << 30));
    return std::string(buf);
  };
  if (r.bytes_per_token <= 0 || r.block_size <= 0 || r.max_context_len < 0 || r.max_num_seqs < 0 ||
      r.kv_cache_bytes < 0)
    throw_error(ErrorCode::INVALID_ARGUMENT, "model " + id + ": KV sizes must be positive (0 = auto)");
  KvPlan k;
  k.block_size = r.block_size;
  const int64_t bs = r.block_size, block_bytes = bs * r.bytes_per_token;
  int64_t ctx = r.trained_context > 0 ? r.trained_context : 4096;
  if (r.max_context_len > 0) {
    ctx = r.trained_context > 0 ? std::min(r.max_context_len, r.trained_context) : r.max_context_len;
  } else if (r.memory_cap_bytes > 0) {
    const int64_t fit = r.memory_cap_bytes / block_bytes * bs;  // whole blocks
    if (fit < bs)
      throw_error(ErrorCode::OUT_OF_MEMORY, "model " + id + ": not even one KV block of " + std::to_string(bs) +
                                                " tokens (" + std::to_string(block_bytes) + " bytes) fits in " +
                                                std::to_string(r.memory_cap_bytes) + " bytes");
    ctx = std::min(ctx, fit);
  }
  k.context_len = ctx;
  const int64_t one_ctx_blocks = (ctx + bs - 1) / bs, one_ctx_bytes = one_ctx_blocks * block_bytes;
  int64_t budget = r.kv_cache_bytes;
  if (budget == 0) {
    const int64_t want_tokens = r.max_num_seqs > 0 ? r.max_num_seqs * one_ctx_blocks * bs
                                                   : std::max(one_ctx_blocks * bs, kAutoRunningSeqs * kAutoAvgSeqTokens);
    const int64_t want = (want_tokens + bs - 1) / bs * block_bytes;
    budget = std::max(r.memory_cap_bytes > 0 ? std::min(want, r.memory_cap_bytes) : want, one_ctx_bytes);
    if (r.memory_available > 0 && one_ctx_bytes > r.memory_available)
      throw_error(ErrorCode::OUT_OF_MEMORY, "model " + id + ": one full context of " + std::to_string(ctx) +
                                                " tokens needs " + std::to_string(one_ctx_bytes) + " bytes (" +
                                                gib(one_ctx_bytes) + ") of KV cache but only " +
                                                std::to_string(r.memory_available) + " bytes (" +
                                                gib(r.memory_available) +
                                                ") of memory are available; lower the context length");
  }
  k.num_blocks = std::min<int64_t>(budget / block_bytes, INT32_MAX);
  if (k.num_blocks < one_ctx_blocks)
    throw_error(ErrorCode::OUT_OF_MEMORY, "model " + id + ": a KV cache of " + std::to_string(budget) +
                                              " bytes holds " + std::to_string(k.num_blocks * bs) +
                                              " tokens but one full context of " + std::to_string(ctx) +
                                              " tokens needs " + std::to_string(one_ctx_bytes) +
                                              " bytes; raise the KV cache size or lower the context length");
  k.pool_bytes = k.num_blocks * block_bytes;
  int64_t seqs = r.max_num_seqs;
  if (seqs == 0) seqs = std::max<int64_t>(k.num_blocks / one_ctx_blocks, kAutoRunningSeqs);
  k.max_num_seqs = std::clamp<int64_t>(seqs, 1, std::min<int64_t>(256, k.num_blocks));
  return k;
}

EstimateParams with_server_pool(const loader::ModelConfig& cfg, EstimateParams p) {
  if (!p.server_kv) return p;
  EstimateParams one = p;
  one.server_kv.reset();
  one.context_len = p.block_size;
  one.num_sequences = 1;
  one.kv_pool_tokens = 0;
  KvPlanRequest r;
  r.bytes_per_token = estimate_memory(cfg, 0, one).kv_bytes_per_token;
  r.trained_context = cfg.max_position_embeddings;
  r.max_context_len = p.server_kv->max_context_len;
  r.max_num_seqs = p.server_kv->max_num_seqs;
  r.kv_cache_bytes = p.server_kv->kv_cache_bytes;
  r.block_size = p.block_size;
  r.memory_available = mem_available_bytes();
  r.memory_cap_bytes = kv_memory_cap(r.memory_available);
  const KvPlan k = plan_kv_pool(r, cfg.source);
  p.context_len = k.context_len;
  p.num_sequences = k.max_num_seqs;
  p.kv_pool_tokens = k.pool_tokens();
  return p;
}

int64_t mem_available_bytes() {
  std::ifstream f("/proc/meminfo");
  std::string key, unit;
  int64_t kb = 0;
  while (f >> key >> kb >> unit)
    if (key == "MemAvailable:") return kb * 1024;
  return 0;
}

int64_t kv_memory_cap(int64_t mem_available) { return mem_available > 0 ? mem_available / 4 : 0; }

std::string describe_kv(const MemoryEstimate& e, const EstimateParams& p) {
  std::string s = p.kv_pool_tokens > 0
                      ? std::to_string(p.kv_pool_tokens) + "-token pool (" + std::to_string(p.kv_pool_tokens / p.block_size) +
                            " blocks of " + std::to_string(p.block_size) + "), " + std::to_string(p.context_len) +
                            " ctx, " + std::to_string(p.num_sequences) + " seq max, " + kv_format_name(p) + "; "
                      : std::to_string(p.context_len) + " ctx × " + std::to_string(p.num_sequences) + " seq, " +
                            kv_format_name(p) + "; ";
  std::string layers;
  auto add = [&](int64_t n, const std::string& what) {
    if (n > 0) layers += (layers.empty() ? "" : " + ") + std::to_string(n) + " " + what;
  };
  add(e.num_full_layers, "full");
  add(e.num_sliding_layers, "sliding (window " + std::to_string(e.sliding_window) + ")");
  add(e.num_linear_layers, "linear-attention (state)");
  s += layers + " layers";
  if (e.num_sliding_layers && e.kv_bytes != e.kv_bytes_windowed)
    s += "; the paged pool is sized for whole contexts on every layer (" + format_bytes(e.kv_bytes_windowed) + " with sliding layers at their window)";
  if (e.num_shared_kv_layers) s += ", " + std::to_string(e.num_shared_kv_layers) + " reuse another layer's KV";
  return s;
}

}  // namespace oxyd::hub
