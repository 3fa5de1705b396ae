// KvCache: the paged K/V storage of one model, per layer [num_blocks, block_size, num_kv_heads,
// head_dim] (docs/architecture.md §4), or with kv_quant_bits 2..4 (--kv-quant) U8 [num_blocks, block_size,
// num_kv_heads, kv_quant_row_bytes(head_dim, bits)] in core/kv_quant.h's format. It owns memory
// only; which request holds which block is kv/'s job.
#pragma once

#include <vector>

#include "core/kv_quant.h"
#include "core/tensor.h"

namespace oxyd::model {

class KvCache {
 public:
  /// dtype F32 | F16 | BF16 (ignored when kv_quant_bits > 0: the cache is U8 codes).
  KvCache(int64_t num_layers, int64_t num_blocks, int64_t block_size, int64_t num_kv_heads,
          int64_t head_dim, DType dtype = DType::F32, int kv_quant_bits = 0)
      : num_blocks_(num_blocks), block_size_(block_size), num_kv_heads_(num_kv_heads),
        head_dim_(head_dim), dtype_(kv_quant_bits > 0 ? DType::U8 : dtype), kv_quant_bits_(kv_quant_bits),
        row_(kv_quant_bits > 0 ? kv_quant_row_bytes(head_dim, kv_quant_bits) : head_dim) {
    const size_t bytes = static_cast<size_t>(num_blocks * block_size * num_kv_heads) *
                         static_cast<size_t>(kv_quant_bits > 0 ? row_ : dtype_row_bytes(dtype, head_dim));
    for (int64_t l = 0; l < num_layers; ++l) {
      k_.emplace_back(bytes);
      v_.emplace_back(bytes);
    }
  }
  Tensor k(int64_t layer) const { return view(k_[layer]); }
  Tensor v(int64_t layer) const { return view(v_[layer]); }
  int64_t num_blocks() const { return num_blocks_; }
  int64_t block_size() const { return block_size_; }
  /// 0: plain F32 / F16 / BF16; 2, 3, 4: quantized head vectors.
  int kv_quant_bits() const { return kv_quant_bits_; }
  /// Bytes of K and V over all layers.
  int64_t bytes() const {
    int64_t total = 0;
    for (const Buffer& b : k_) total += int64_t(b.size());
    for (const Buffer& b : v_) total += int64_t(b.size());
    return total;
  }

 private:
  Tensor view(const Buffer& b) const {
    return Tensor(dtype_, b.data(), {num_blocks_, block_size_, num_kv_heads_, row_});
  }
  int64_t num_blocks_, block_size_, num_kv_heads_, head_dim_;
  DType dtype_;
  int kv_quant_bits_;
  int64_t row_;  // last dim: head_dim elements, or bytes of one quantized head vector
  std::vector<Buffer> k_, v_;
};

}  // namespace oxyd::model
