// Transformer: the one flag-driven decoder for every family (Llama, Mistral, Qwen2/3, Gemma 1–3,
// Phi-3, Granite; mixture-of-experts MLPs per layer: Qwen3-MoE, OLMoE). Family differences arrive as ArchSpec flags and ModelConfig values,
// never as branches on a family name. forward() runs one flat ForwardBatch against a paged
// KvCache and returns logits for the rows in logits_indices. Not thread-safe (one engine thread).
#pragma once

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "loader/model_config.h"
#include "model/arch.h"
#include "model/forward_batch.h"
#include "model/kv_cache.h"
#include "model/layers/attention.h"
#include "model/layers/gated_delta_net.h"
#include "model/layers/mlp.h"
#include "model/layers/moe.h"
#include "model/step_graphs.h"
#include "model/step_upload.h"
#include "model/weights.h"

namespace oxyd::model {

/// Host bytes a loaded model holds (the KV cache is separate: KvCache::bytes()).
struct MemoryUsage {
  int64_t weights_mapped = 0;  // file bytes used in place through the mapping (Weights::mapped_bytes)
  int64_t weights_owned = 0;   // copies made at load (Weights::owned_bytes)
  int64_t workspace = 0;       // forward() buffers + the calling thread's matmul scratch
  int64_t workspace_used = 0;  // of which the last step used (the scratch: the largest call's)
  int64_t total() const { return weights_mapped + weights_owned + workspace; }
};

/// The input of Transformer::encode / embed: num_seqs whole sequences packed back to back
/// (no padding). Sequence s owns rows [seq_start[s], seq_start[s+1]).
struct EncodeBatch {
  std::span<const int32_t> token_ids;       // [num_tokens]
  std::span<const int32_t> token_type_ids;  // [num_tokens], or empty: all type 0 (encoders only)
  std::span<const int32_t> seq_start;       // [num_seqs + 1], 0 = first < ... < last = num_tokens
  int64_t num_tokens() const { return static_cast<int64_t>(token_ids.size()); }
  int64_t num_seqs() const { return static_cast<int64_t>(seq_start.size()) - 1; }
};

class Transformer {
 public:
  /// Loads a GGUF file or a Hugging Face directory (config.json + *.safetensors). `device`: where
  /// the forward pass runs; its backend (ops::device_backend) must be registered. Off the CPU the
  /// weights, RoPE tables, workspaces, KV cache and logits live in that device's memory, and each
  /// step uploads its batch metadata once; forward() still returns the logits on the device.
  /// `f32_as_bf16`: Weights::load's (--dtype bf16).
  static std::unique_ptr<Transformer> load(const std::string& path, Device device = Device::CPU, bool f32_as_bf16 = false);
  /// The device the forward pass runs on.
  Device device() const { return device_; }

  const loader::ModelConfig& config() const { return config_; }
  const ArchSpec& spec() const { return *spec_; }
  const Weights& weights() const { return *weights_; }
  /// Layer `l`'s attention window in tokens; 0 = full attention.
  int sliding_window(int64_t l) const { return attn_[static_cast<size_t>(l)].sliding_window; }

  /// A cache sized for this model, holding `format` (core/kv_format.h); with linear_attention
  /// layers also `num_state_slots` recurrent-state slots (ForwardBatch::state_slots index them).
  KvCache make_kv_cache(int64_t num_blocks, int64_t block_size, KvFormat format = KvFormat::F32,
                        int64_t num_state_slots = kDefaultStateSlots) const;
  static constexpr int64_t kDefaultStateSlots = 16;
  /// K and V bytes of one token over the layers that keep their own (make_kv_cache's layout:
  /// each layer's KV heads × head_dim; KV-sharing and linear_attention layers keep none).
  int64_t kv_bytes_per_token(KvFormat format) const;
  /// Whether some layer is a linear_attention (Gated DeltaNet) layer.
  bool has_linear_attention() const { return has_linear_; }
  /// > 0: some layer's RoPE table depends on the sequence length (transformers' longrope): a
  /// sequence of at most this many tokens uses one table for every position, a longer one another.
  /// Its KV must then be recomputed once it grows past this length (sched::SchedulerConfig). 0: none.
  int64_t rope_switch_len() const { return rope_switch_len_; }

  /// Runs one step. Returns logits [num_logits, vocab_size] F32, row i for token
  /// batch.logits_indices[i]; valid until the next forward().
  Tensor forward(const ForwardBatch& batch, KvCache& cache);

  ~Transformer();
  /// Decode steps as backend graphs (model/step_graphs.h): on by default off the CPU for a model
  /// whose decode step makes no choice on host data (no linear_attention layer, whose state
  /// zeroing does; no length-switched RoPE), unless OXYD_STEP_GRAPHS=0. A step whose ops read the
  /// device back (Backend::moe_experts' default loop) fails its capture and runs eagerly.
  /// enable_step_graphs(false) turns them off (releasing any held); true turns them back on
  /// where the model allows them.
  void enable_step_graphs(bool on);
  bool step_graphs_enabled() const { return graphs_on_; }
  const StepGraphs& step_graphs() const { return graphs_; }

  /// Whether the model only encodes (ArchSpec::encoder): forward() is then Error(UNSUPPORTED).
  bool is_encoder() const { return spec_->encoder; }
  /// Whether embed() has a pooling to apply (an encoder, or a decoder with a sentence-transformers
  /// pooling / GGUF pooling_type), and whether it scores pairs (classification head).
  bool can_embed() const;
  bool can_rank() const { return config_.num_labels > 0; }
  /// The longest sequence encode() takes: the position table (less ModelConfig::position_offset)
  /// for encoders, max_position_embeddings for decoders (0 = unknown: no limit).
  int64_t max_input_tokens() const;
  /// Runs every sequence of `b` in one pass without a KV cache: bidirectional attention for an
  /// encoder, causal for a decoder (each sequence from position 0). Returns the final hidden states
  /// [num_tokens, H] F32 on the weights' device (after the final norm for a decoder); valid until
  /// the next encode() / forward(). Error(INVALID_ARGUMENT) for a sequence longer than
  /// max_input_tokens(), an empty one, or a token type outside the type table.
  Tensor encode(const EncodeBatch& b);
  /// encode() then the model's pooling (loader/sentence_transformers.h: mean, CLS, last token),
  /// L2-normalised when the model says so: [num_seqs, H] row-major on the host. A model with a
  /// classification head (can_rank) returns its logits [num_seqs, num_labels] instead.
  std::vector<float> embed(const EncodeBatch& b);
  /// A decoder reranker (ModelConfig::rank_label_tokens): the ids of its label tokens, whose
  /// logits are its labels. embed() on such a model throws until this is called.
  void set_rank_label_ids(const std::vector<int32_t>& ids);
  /// Floats per row of embed()'s result.
  int64_t embedding_size() const { return can_rank() ? config_.num_labels : config_.hidden_size; }

  /// What this model holds now. The workspace counts allocated capacity, and the matmul scratch
  /// of the calling thread: call it on the thread that runs forward().
  MemoryUsage memory_usage() const;
  /// Workspace bytes for steps of at most `max_num_tokens` tokens and `max_num_logits` logits
  /// rows: activations [T, hidden | q | kv | intermediate] f32, the logits [R, vocab] f32, and the
  /// largest matmul activation scratch. memory_usage().workspace equals it after
  /// reserve_workspace(), or after one such largest step from empty buffers.
  int64_t workspace_bytes(int64_t max_num_tokens, int64_t max_num_logits) const;
  /// Allocates that workspace now (the matmul scratch for the calling thread now, and for any
  /// other thread on its first forward()), so that steps within those limits never grow it; a
  /// larger step reserves again for its size. Call it at load with the engine's step budget so
  /// that the memory in use is reached before the first request.
  void reserve_workspace(int64_t max_num_tokens, int64_t max_num_logits);

 private:
  Transformer() = default;
  void validate(const ForwardBatch& b, const KvCache& cache) const;
  /// Floats per token of the workspaces beyond the dense ones: attention output gate, DeltaNet.
  int64_t gated_width() const;
  /// The layer loops over the batch in x_ (h_ as the branch buffer); `shared_kv`: every layer
  /// writes and reads layer 0 of `cache` (encode's one-pass scratch).
  void run_decoder_layers(const layers::BatchMeta& meta, KvCache& cache, bool shared_kv, int64_t T,
                          const Tensor& state_slots);
  void run_encoder_layers(const layers::BatchMeta& meta, KvCache& cache, int64_t T);
  Device device_ = Device::CPU;
  loader::ModelConfig config_;
  std::unique_ptr<KvCache> encode_cache_;  // encode(): one layer of K/V for the batch, reused
  const ArchSpec* spec_ = nullptr;
  std::unique_ptr<Weights> weights_;
  std::vector<layers::RopeTable> rope_;      // per layer
  std::vector<layers::AttentionSpec> attn_;  // per layer (points into rope_)
  layers::AttentionWorkspace attn_ws_;
  layers::MlpWorkspace mlp_ws_;
  layers::MoeSpec moe_;          // routing and expert activation of the MoE layers
  layers::MoeWorkspace moe_ws_;
  layers::LinearAttentionSpec lin_;          // linear_attention layers (has_linear_)
  layers::LinearAttentionWorkspace lin_ws_;
  bool has_linear_ = false;
  int64_t rope_switch_len_ = 0;
  std::vector<int64_t> kv_layer_;            // per layer: whose K/V it attends (LayerDims::kv_layer)
  Workspace x_, h_, sel_;                    // residual stream, normed / branch output, selected rows
  std::vector<int32_t> rank_label_ids_;      // set_rank_label_ids
  Workspace rank_logits_;                    // [num_seqs, vocab]: a decoder reranker's last-token logits
  Workspace moe_in_, moe_out_;               // ArchSpec::moe_beside_dense: router input, experts' branch [T, H]
  Workspace ple_, ple_tmp_, ple_l_, ple_g_;  // PLE: [T, L·P] ×2, this layer's [T, P], its gate [T, P]
  std::vector<int32_t> ple_rows_;            // rows of ple_ viewed [T·L, P]: layer l reads [l·T, (l+1)·T)
  Tensor ple_rows_dev_;                      // ple_rows_ on the model's device for this step
  StepUpload upload_;                        // this step's host arrays on the model's device
  StepGraphs graphs_;                        // decode steps captured as backend graphs
  bool graphs_allowed_ = false, graphs_on_ = false;
  std::vector<int32_t> padded_table_;        // a graph step's block table at its padded width
  backend::Allocation logits_;  // memory of the backend of the weights' device
  // Workspace reserved for steps of up to ws_tokens_ tokens / ws_logits_ rows; forward() raises
  // it to each larger step exactly (no vector growth slack). The matmul scratch is per thread.
  int64_t ws_tokens_ = 0, ws_logits_ = 0, reserved_scratch_bytes_ = 0, last_num_logits_ = 0;
};

}  // namespace oxyd::model
