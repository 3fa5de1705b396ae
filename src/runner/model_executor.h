// ModelExecutor: what runs one step's forward for the engine. runner::ModelRunner implements it
// over a real model; engine tests use fakes. The batch is the model's own ForwardBatch (spans over
// the host arrays of a runner::StepBatch), so nothing is translated on the way.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "model/forward_batch.h"

namespace oxyd::runner {

class ModelExecutor {
 public:
  virtual ~ModelExecutor() = default;
  virtual int32_t vocab_size() const = 0;
  /// Recurrent-state slots of a model with linear_attention layers (ForwardBatch::state_slots
  /// indexes them; the engine gives each running request one); 0 for a model without.
  virtual int32_t num_state_slots() const { return 0; }
  /// Copies recurrent-state slot `src` into slot `dst` (every linear_attention layer): the engine
  /// keeps prefix-cache snapshots in slots of their own.
  virtual void copy_state(int32_t src_slot, int32_t dst_slot) {
    (void)src_slot;
    (void)dst_slot;
  }
  /// Whether the forward pass runs on the host's compute threads (the CPU backend's pool), so that
  /// other work during it takes a core from it; false for a model on a device.
  virtual bool forward_on_host() const { return true; }
  /// Runs one batch; fills every row of `logits`, which arrives sized [batch.logits_indices.size(),
  /// vocab_size] row-major with unspecified contents.
  virtual void execute(const model::ForwardBatch& batch, std::vector<float>& logits) = 0;
  /// Runs one batch and returns its logits, [batch.logits_indices.size(), vocab_size] row-major,
  /// valid until the next call. By default they are written into `scratch` through execute(); an
  /// executor whose model keeps them in a buffer of its own returns that (no copy).
  /// For a step whose every logits row needs only its argmax over ids [0, cols) (greedy requests
  /// with nothing else to compute): runs the batch and writes each row's argmax (lowest id on
  /// ties) into `ids`, the logits never leaving the model's device; false, having run nothing,
  /// where this executor does not (the caller then calls run()).
  virtual bool run_argmax(const model::ForwardBatch& batch, int32_t cols, std::vector<int32_t>& ids) {
    (void)batch;
    (void)cols;
    (void)ids;
    return false;
  }
  virtual std::span<const float> run(const model::ForwardBatch& batch, std::vector<float>& scratch) {
    scratch.resize(batch.logits_indices.size() * size_t(vocab_size()));  // sized, not cleared
    execute(batch, scratch);
    return scratch;
  }
};

}  // namespace oxyd::runner
