// KvCache: the paged K/V storage of one model, per layer [num_blocks, block_size, num_kv_heads,
// head_dim] in the element type of its KvFormat (docs/architecture.md §4), or for Q4 / Q3 / Q2
// (--kv-quant) U8 [num_blocks, block_size, num_kv_heads, kv_format_row_bytes] in core/kv_quant.h's format. It owns memory
// only; which request holds which block is kv/'s job. The blocks are memory of the backend of the
// model's device (backend/backend.h: on the CPU a core::Buffer as before).
#pragma once

#include <algorithm>
#include <array>
#include <vector>

#include "core/kv_format.h"
#include "core/tensor.h"
#include "ops/dispatch.h"
#include "ops/elementwise.h"

namespace oxyd::model {

class KvCache {
 public:
  /// One layer's K/V geometry; num_kv_heads 0 = the layer keeps no K/V of its own (it reads
  /// another layer's, or holds a recurrent state).
  struct LayerShape {
    int64_t num_kv_heads = 0, head_dim = 0;
  };
  KvCache(int64_t num_layers, int64_t num_blocks, int64_t block_size, int64_t num_kv_heads,
          int64_t head_dim, KvFormat format = KvFormat::F32, Device device = Device::CPU)
      : KvCache(std::vector<LayerShape>(size_t(num_layers), LayerShape{num_kv_heads, head_dim}), num_blocks,
                block_size, format, device) {}
  KvCache(const std::vector<LayerShape>& layers, int64_t num_blocks, int64_t block_size,
          KvFormat format = KvFormat::F32, Device device = Device::CPU)
      : num_blocks_(num_blocks), block_size_(block_size), format_(format), device_(device), shapes_(layers) {
    backend::Backend& be = ops::device_backend(device, "KvCache");
    for (const LayerShape& s : layers) {
      const size_t bytes = static_cast<size_t>(num_blocks * block_size * s.num_kv_heads) *
                           static_cast<size_t>(s.num_kv_heads > 0 ? kv_format_row_bytes(format, s.head_dim) : 0);
      k_.push_back(bytes ? be.allocate(bytes) : backend::Allocation());
      v_.push_back(bytes ? be.allocate(bytes) : backend::Allocation());
    }
  }
  Tensor k(int64_t layer) const { return view(k_[layer], layer); }
  Tensor v(int64_t layer) const { return view(v_[layer], layer); }
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
  /// Bytes of the recurrent states (linear_attention layers), every slot.
  int64_t state_bytes() const {
    int64_t total = 0;
    for (const auto& s : states_) total += int64_t(s.conv.size() + s.rec.size());
    return total;
  }

  /// Fixed-size per-request state of a linear_attention layer (Gated DeltaNet), `num_slots` slots:
  /// conv [num_slots, K−1, conv_dim] and recurrent [num_slots, Hv, dk, dv], F32, zeroed.
  /// The layer keeps no K/V (its k() / v() views are then empty).
  void add_linear_state(int64_t layer, int64_t num_slots, int64_t conv_rows, int64_t conv_dim, int64_t Hv, int64_t dk,
                        int64_t dv) {
    if (states_.size() < k_.size()) states_.resize(k_.size());
    k_[size_t(layer)] = backend::Allocation();
    v_[size_t(layer)] = backend::Allocation();
    backend::Backend& be = ops::device_backend(device_, "KvCache");
    LinearState& s = states_[size_t(layer)];
    s.conv = be.allocate(sizeof(float) * size_t(num_slots * conv_rows * conv_dim));
    s.rec = be.allocate(sizeof(float) * size_t(num_slots * Hv * dk * dv));
    s.conv_shape = {num_slots, conv_rows, conv_dim};
    s.rec_shape = {num_slots, Hv, dk, dv};
    num_state_slots_ = num_slots;
    for (int32_t slot = 0; slot < num_slots; ++slot) zero_state(slot);
  }
  Tensor conv_state(int64_t layer) const {
    const LinearState& s = states_.at(size_t(layer));
    return Tensor(DType::F32, s.conv.data(), {s.conv_shape[0], s.conv_shape[1], s.conv_shape[2]}, device_);
  }
  Tensor recurrent_state(int64_t layer) const {
    const LinearState& s = states_.at(size_t(layer));
    return Tensor(DType::F32, s.rec.data(), {s.rec_shape[0], s.rec_shape[1], s.rec_shape[2], s.rec_shape[3]}, device_);
  }
  int64_t num_state_slots() const { return num_state_slots_; }
  /// Zeroes one slot of every layer's states (a request starting at position 0), on their device.
  void zero_state(int32_t slot) {
    for (const LinearState& s : states_) {
      if (s.conv.empty()) continue;
      const int64_t nc = s.conv_shape[1] * s.conv_shape[2], nr = s.rec_shape[1] * s.rec_shape[2] * s.rec_shape[3];
      ops::zero(Tensor(DType::F32, s.conv.as<float>() + slot * nc, {nc}, device_));
      ops::zero(Tensor(DType::F32, s.rec.as<float>() + slot * nr, {nr}, device_));
    }
  }
  /// Copies slot `src` of every layer's states into slot `dst` (prefix-cache snapshots), on their
  /// device (y = 1·x: exact).
  void copy_state(int32_t src, int32_t dst) {
    for (const LinearState& s : states_) {
      if (s.conv.empty()) continue;
      const int64_t nc = s.conv_shape[1] * s.conv_shape[2], nr = s.rec_shape[1] * s.rec_shape[2] * s.rec_shape[3];
      ops::scale(Tensor(DType::F32, s.conv.as<float>() + src * nc, {nc}, device_), 1.0f,
                 Tensor(DType::F32, s.conv.as<float>() + dst * nc, {nc}, device_));
      ops::scale(Tensor(DType::F32, s.rec.as<float>() + src * nr, {nr}, device_), 1.0f,
                 Tensor(DType::F32, s.rec.as<float>() + dst * nr, {nr}, device_));
    }
  }

 private:
  Tensor view(const backend::Allocation& b, int64_t layer) const {
    const LayerShape& s = shapes_[size_t(layer)];
    // last dim: head_dim elements, or bytes of one quantized head vector
    return Tensor(kv_format_dtype(format_), b.data(),
                  {num_blocks_, block_size_, s.num_kv_heads, kv_format_row_elems(format_, s.head_dim)}, device_);
  }
  int64_t num_blocks_, block_size_;
  KvFormat format_;
  Device device_;
  std::vector<LayerShape> shapes_;  // per layer
  std::vector<backend::Allocation> k_, v_;
  struct LinearState {
    backend::Allocation conv, rec;
    std::array<int64_t, 3> conv_shape{};
    std::array<int64_t, 4> rec_shape{};
  };
  std::vector<LinearState> states_;  // per layer; empty for attention layers
  int64_t num_state_slots_ = 0;
};

}  // namespace oxyd::model
