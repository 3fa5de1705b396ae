// Transformer: the one flag-driven decoder for every dense family (Llama, Mistral, Qwen2/3,
// Gemma 1–3, Phi-3, Granite). Family differences arrive as ArchSpec flags and ModelConfig values,
// never as branches on a family name. forward() runs one flat ForwardBatch against a paged
// KvCache and returns logits for the rows in logits_indices. Not thread-safe (one engine thread).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "loader/model_config.h"
#include "model/arch.h"
#include "model/forward_batch.h"
#include "model/kv_cache.h"
#include "model/layers/attention.h"
#include "model/layers/mlp.h"
#include "model/weights.h"

namespace oxyd::model {

class Transformer {
 public:
  /// Loads a GGUF file or a Hugging Face directory (config.json + *.safetensors).
  static std::unique_ptr<Transformer> load(const std::string& path);

  const loader::ModelConfig& config() const { return config_; }
  const ArchSpec& spec() const { return *spec_; }
  const Weights& weights() const { return *weights_; }
  /// Layer `l`'s attention window in tokens; 0 = full attention.
  int sliding_window(int64_t l) const { return attn_[static_cast<size_t>(l)].sliding_window; }

  /// A cache sized for this model.
  KvCache make_kv_cache(int64_t num_blocks, int64_t block_size, DType dtype = DType::F32) const;

  /// Runs one step. Returns logits [num_logits, vocab_size] F32, row i for token
  /// batch.logits_indices[i]; valid until the next forward().
  Tensor forward(const ForwardBatch& batch, KvCache& cache);

 private:
  Transformer() = default;
  void validate(const ForwardBatch& b, const KvCache& cache) const;
  loader::ModelConfig config_;
  const ArchSpec* spec_ = nullptr;
  std::unique_ptr<Weights> weights_;
  std::vector<layers::RopeTable> rope_;      // per layer
  std::vector<layers::AttentionSpec> attn_;  // per layer (points into rope_)
  layers::AttentionWorkspace attn_ws_;
  layers::MlpWorkspace mlp_ws_;
  std::vector<float> x_, h_, sel_;           // residual stream, normed / branch output, selected rows
  Buffer logits_;
};

}  // namespace oxyd::model
