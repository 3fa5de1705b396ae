// KvCache: the paged K/V storage of one model, per layer [num_blocks, block_size, num_kv_heads,
// head_dim] in the element type of its KvFormat (docs/architecture.md §4), or for Q4 / Q3 / Q2
// (--kv-quant) U8 [num_blocks, block_size, num_kv_heads, kv_format_row_bytes] in core/kv_quant.h's format. It owns memory
// only; which request holds which block is kv/'s job. The blocks are memory of the backend of the
// model's device (backend/backend.h: on the CPU a core::Buffer as before).
#pragma once

#include <vector>

#include "core/kv_format.h"
#include "core/tensor.h"
#include "ops/dispatch.h"

namespace oxyd::model {

class KvCache {
 public:
  KvCache(int64_t num_layers, int64_t num_blocks, int64_t block_size, int64_t num_kv_heads,
          int64_t head_dim, KvFormat format = KvFormat::F32, Device device = Device::CPU)
      : num_blocks_(num_blocks), block_size_(block_size), num_kv_heads_(num_kv_heads),
        head_dim_(head_dim), format_(format), device_(device), row_(kv_format_row_elems(format, head_dim)) {
    backend::Backend& be = ops::device_backend(device, "KvCache");
    const size_t bytes = static_cast<size_t>(num_blocks * block_size * num_kv_heads) *
                         static_cast<size_t>(kv_format_row_bytes(format, head_dim));
    for (int64_t l = 0; l < num_layers; ++l) {
      k_.push_back(be.allocate(bytes));
      v_.push_back(be.allocate(bytes));
    }
  }
  Tensor k(int64_t layer) const { return view(k_[layer]); }
  Tensor v(int64_t layer) const { return view(v_[layer]); }
  int64_t num_blocks() const { return num_blocks_; }
  int64_t block_size() const { return block_size_; }
  /// What the blocks hold.
  KvFormat format() const { return format_; }
  /// Bytes of K and V over all layers.
  int64_t bytes() const {
    int64_t total = 0;
    for (const backend::Allocation& b : k_) total += int64_t(b.size());
    for (const backend::Allocation& b : v_) total += int64_t(b.size());
    return total;
  }

 private:
  Tensor view(const backend::Allocation& b) const {
    return Tensor(kv_format_dtype(format_), b.data(), {num_blocks_, block_size_, num_kv_heads_, row_}, device_);
  }
  int64_t num_blocks_, block_size_, num_kv_heads_, head_dim_;
  KvFormat format_;
  Device device_;
  int64_t row_;  // last dim: head_dim elements, or bytes of one quantized head vector
  std::vector<backend::Allocation> k_, v_;
};

}  // namespace oxyd::model
