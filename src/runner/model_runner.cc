// ModelRunner (see model_runner.h): one Transformer::forward on the batch as built, and the logits
// rows as a view of the model's output buffer (run: the engine samples from it before the next
// forward; execute: a copy). Errors from the model propagate: EngineCore isolates the requests.
#include "runner/model_runner.h"

#include <algorithm>
#include <string>

#include "core/error.h"
#include "ops/dispatch.h"
#include "ops/elementwise.h"

namespace oxyd::runner {
int64_t kv_bytes_per_token(const model::Transformer& m, KvFormat format) {
  // K and V of every layer that keeps its own (model::KvCache's layout; linear_attention layers
  // keep a fixed-size state instead, KV-sharing layers read another layer's).
  return m.kv_bytes_per_token(format);
}

ModelRunner::ModelRunner(model::Transformer& m, int64_t num_blocks, int32_t block_size, KvFormat format,
                         int64_t num_state_slots)
    : model_(m),
      cache_(m.make_kv_cache(num_blocks, block_size, format, num_state_slots)),
      kv_cache_bytes_(num_blocks * block_size * kv_bytes_per_token(m, format)) {}

int32_t ModelRunner::vocab_size() const { return static_cast<int32_t>(model_.config().vocab_size); }

std::span<const float> ModelRunner::run(const model::ForwardBatch& batch, std::vector<float>& scratch) {
  const backend::StepLock step(ops::device_backend(model_.device()));  // the forward and the copy
  const Tensor out = model_.forward(batch, cache_);  // [num_logits, vocab] F32
  const size_t vocab = static_cast<size_t>(vocab_size());
  const size_t n = batch.logits_indices.size() * vocab;
  if (out.dtype != DType::F32 || static_cast<size_t>(out.numel()) != n)
    throw_error(ErrorCode::INTERNAL, "model returned logits " + out.shape_str() + ", expected [" +
                                         std::to_string(batch.logits_indices.size()) + ", " + std::to_string(vocab) + "] F32");
  if (n == 0) return {};
  if (out.device == Device::CPU) return {out.ptr<float>(), n};
  scratch.resize(n);  // another device's logits come back through its backend
  ops::copy_to_host(out, scratch.data());
  return {scratch.data(), n};
}

bool ModelRunner::run_argmax(const model::ForwardBatch& batch, int32_t cols, std::vector<int32_t>& ids) {
  if (model_.device() == Device::CPU) return false;
  const backend::StepLock step(ops::device_backend(model_.device()));
  const Tensor out = model_.forward(batch, cache_);
  const int64_t rows = static_cast<int64_t>(batch.logits_indices.size());
  if (out.dtype != DType::F32 || out.ndim != 2 || out.dim(0) != rows || cols < 1 || cols > out.dim(1))
    throw_error(ErrorCode::INTERNAL, "model returned logits " + out.shape_str() + " for an argmax of " +
                                         std::to_string(rows) + " rows over " + std::to_string(cols) + " ids");
  ids.resize(static_cast<size_t>(rows));
  if (rows == 0) return true;
  const size_t bytes = sizeof(int32_t) * static_cast<size_t>(rows);
  if (argmax_ids_.size() < bytes) argmax_ids_ = ops::device_backend(out.device).allocate(std::max<size_t>(bytes, 1024));
  const Tensor dev_ids(DType::I32, argmax_ids_.data(), {rows}, out.device);
  ops::argmax_rows(out, cols, dev_ids);
  ops::copy_to_host(dev_ids, ids.data());
  return true;
}

void ModelRunner::execute(const model::ForwardBatch& batch, std::vector<float>& logits) {
  const std::span<const float> out = run(batch, logits);
  if (out.data() != logits.data()) logits.assign(out.begin(), out.end());
}

}  // namespace oxyd::runner
