// TransformerExecutor (see transformer_executor.h): a zero-copy span view of the runner's host
// batch, one Transformer::forward, and the logits rows as a view of the model's output buffer
// (run: the engine samples from it before the next forward; execute: a copy). Errors from the
// model propagate: AsyncEngine ends the batch's requests.
#include "engine/transformer_executor.h"

#include <string>

#include "core/error.h"

namespace oxyd::engine {

int64_t kv_bytes_per_token(const model::Transformer& m, DType kv_dtype, int kv_quant_bits) {
  const loader::ModelConfig& c = m.config();
  // K and V, every layer, [num_key_value_heads, head_dim] each (model::KvCache's layout).
  const int64_t vec = kv_quant_bits > 0 ? kv_quant_row_bytes(c.head_dim, kv_quant_bits) : dtype_row_bytes(kv_dtype, c.head_dim);
  return 2 * c.num_hidden_layers * c.num_key_value_heads * vec;
}

TransformerExecutor::TransformerExecutor(model::Transformer& m, int64_t num_blocks, int32_t block_size, DType kv_dtype,
                                         int kv_quant_bits)
    : model_(m),
      cache_(m.make_kv_cache(num_blocks, block_size, kv_dtype, kv_quant_bits)),
      kv_cache_bytes_(num_blocks * block_size * kv_bytes_per_token(m, kv_dtype, kv_quant_bits)) {}

int32_t TransformerExecutor::vocab_size() const { return static_cast<int32_t>(model_.config().vocab_size); }

std::span<const float> TransformerExecutor::run(const runner::ForwardBatch& batch, std::vector<float>&) {
  model::ForwardBatch b;
  b.token_ids = batch.token_ids;
  b.positions = batch.positions;
  b.query_start_loc = batch.query_start_loc;
  b.seq_lens = batch.seq_lens;
  b.block_table = batch.block_table;
  b.max_blocks_per_req = batch.max_blocks_per_req;
  b.slot_mapping = batch.slot_mapping;
  b.logits_indices = batch.logits_indices;
  const Tensor out = model_.forward(b, cache_);  // [num_logits, vocab] F32
  const size_t vocab = static_cast<size_t>(vocab_size());
  const size_t n = batch.logits_indices.size() * vocab;
  if (out.dtype != DType::F32 || static_cast<size_t>(out.numel()) != n)
    throw_error(ErrorCode::INTERNAL, "model returned logits " + out.shape_str() + ", expected [" +
                                         std::to_string(batch.logits_indices.size()) + ", " + std::to_string(vocab) + "] F32");
  return {n ? out.ptr<float>() : nullptr, n};
}

void TransformerExecutor::execute(const runner::ForwardBatch& batch, std::vector<float>& logits) {
  const std::span<const float> out = run(batch, logits);
  logits.assign(out.begin(), out.end());
}

}  // namespace oxyd::engine
