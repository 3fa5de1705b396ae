// ModelRunner: the ModelExecutor over a real model::Transformer and its paged KvCache. It runs
// forward() on the runner's batch as it is (model::ForwardBatch) and hands back the logits rows
// in the model's own output buffer. The cache is allocated once, at construction, for `num_blocks`.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "backend/backend.h"
#include "core/dtype.h"
#include "model/kv_cache.h"
#include "model/transformer.h"
#include "runner/model_executor.h"

namespace oxyd::runner {

/// Bytes of K+V one token occupies in the cache over all layers in `format`.
int64_t kv_bytes_per_token(const model::Transformer& m, KvFormat format);

class ModelRunner final : public ModelExecutor {
 public:
  /// num_state_slots: recurrent-state slots for a model with linear_attention layers (at least the
  /// engine's max_num_seqs); ignored for other models.
  ModelRunner(model::Transformer& m, int64_t num_blocks, int32_t block_size, KvFormat format = KvFormat::F32,
              int64_t num_state_slots = model::Transformer::kDefaultStateSlots);
  int32_t vocab_size() const override;
  int32_t num_state_slots() const override { return int32_t(cache_.num_state_slots()); }
  void copy_state(int32_t src_slot, int32_t dst_slot) override { cache_.copy_state(src_slot, dst_slot); }
  void execute(const model::ForwardBatch& batch, std::vector<float>& logits) override;
  /// The logits in the model's own output buffer (no copy; valid until the next forward), or, for
  /// a model on another device, copied back into `scratch`.
  std::span<const float> run(const model::ForwardBatch& batch, std::vector<float>& scratch) override;
  /// Off the CPU: the argmax taken on the device (ops::argmax_rows), only the ids copied back (a
  /// vocabulary row is 0.6 MB on Qwen3, 39 MB for 64 requests). On the CPU: false (the host scans
  /// its own logits).
  bool run_argmax(const model::ForwardBatch& batch, int32_t cols, std::vector<int32_t>& ids) override;
  bool forward_on_host() const override { return model_.device() == Device::CPU; }
  int64_t kv_cache_bytes() const { return kv_cache_bytes_; }

 private:
  model::Transformer& model_;
  model::KvCache cache_;
  int64_t kv_cache_bytes_ = 0;
  backend::Allocation argmax_ids_;  // run_argmax's ids on the model's device
};

}  // namespace oxyd::runner
