// TransformerExecutor: the ModelExecutor over a real model::Transformer and its paged KvCache.
// It converts the runner's host ForwardBatch into the model's span view, runs forward() and
// copies the logits rows out. The cache is allocated once, at construction, for `num_blocks`.
#pragma once

#include <cstdint>
#include <vector>

#include "core/kv_format.h"
#include "engine/engine_core.h"
#include "model/kv_cache.h"
#include "model/transformer.h"

namespace oxyd::engine {

/// Bytes of K+V one token occupies in the cache over all layers in `format`.
int64_t kv_bytes_per_token(const model::Transformer& m, KvFormat format);

class TransformerExecutor final : public ModelExecutor {
 public:
  TransformerExecutor(model::Transformer& m, int64_t num_blocks, int32_t block_size, KvFormat format = KvFormat::F32);
  int32_t vocab_size() const override;
  void execute(const runner::ForwardBatch& batch, std::vector<float>& logits) override;
  /// The logits in the model's own output buffer (no copy; valid until the next forward).
  std::span<const float> run(const runner::ForwardBatch& batch, std::vector<float>& scratch) override;
  int64_t kv_cache_bytes() const { return kv_cache_bytes_; }

 private:
  model::Transformer& model_;
  model::KvCache cache_;
  int64_t kv_cache_bytes_ = 0;
};

}  // namespace oxyd::engine
