// CUDA expert MLPs of an MoE layer with no host read (Backend::moe_experts' contract,
// backend/op_params.h MoeExpertsParams), for steps of at most kGroupedExpertRows grouped rows
// (decode and small batches) whose experts are all in one integer gemv format (qdot.cuh: Q8_0,
// Q4_0, Q4_K, Q5_K, Q6_K, MXFP4). Grouped row r runs its own expert's gemvs, the expert found on
// the device from the offsets (rows [offsets[e], offsets[e + 1]) are expert e's) through a table
// of the layer's expert weight pointers, uploaded once per layer: gate and up in one launch, the
// GLU, then down, expert biases added per row. A selected expert's weights are read once per row
// that uses it, which at decode (k rows, k distinct experts per token) is once. With no host
// read, such a step can be captured as a graph (model/step_graphs.h). Other steps and formats:
// Backend::moe_experts' default (a matmul per expert, the offsets read back).
#pragma once

#include <cstdint>
#include <unordered_map>

#include "backend/cuda/device.h"
#include "backend/cuda/workspace.h"
#include "backend/op_params.h"

namespace oxyd::backend::cuda {

inline constexpr int64_t kGroupedExpertRows = 64;

/// Device tables of each layer's expert pointers (gate, up, down, then their biases or null),
/// keyed by the layer's host ExpertWeights array and checked against its first gate weight.
class ExpertTables {
 public:
  /// The table for `experts` [E]: 6·E device pointers. Uploads it the first time (a synchronous
  /// copy: not inside a graph capture, where it fails the capture).
  const void* const* get(const ExpertWeights* experts, int64_t E);

 private:
  struct Entry {
    const void* first_gate = nullptr;
    int64_t E = 0;
    DeviceBuffer table;
  };
  std::unordered_map<const void*, Entry> tables_;
};

/// Runs p's experts as above and returns true, or returns false (nothing queued) where this path
/// does not apply: more than kGroupedExpertRows rows, experts of another format or of mixed
/// formats or shapes, biases not F32. `ws` holds the quantized activations.
bool moe_experts_grouped(const MoeExpertsParams& p, ExpertTables& tables, Workspace& ws, const Stream& stream);

}  // namespace oxyd::backend::cuda
