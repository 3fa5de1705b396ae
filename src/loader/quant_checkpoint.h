// Quantized linear layers of a safetensors checkpoint, by its HF quantization_config: block-scaled
// FP8 (quant_method fp8: <m>.weight F8_E4M3 + <m>.weight_scale_inv), AutoAWQ GEMM int4 (awq:
// <m>.qweight / .qzeros / .scales) and GPTQ int4 (gptq: the same plus <m>.g_idx); layouts in
// core/quant_repack.h. Family-agnostic: a module is found by its tensors' suffixes, never by name.
// The model binds each as the plain `<m>.weight` [out, in], repacked once at load:
//   FP8 → Q8_0; AWQ and GPTQ without act-order → Q4_1; GPTQ with act-order (desc_act) → Q8_0.
// Stacked experts repack as E row blocks: FP8 ([E, rows, cols], scale_inv [E, ., .]) and AWQ / GPTQ
// whose every tensor has a leading expert dim (qweight [E, in, out/8] / [E, in/8, out], qzeros,
// scales, g_idx [E, in]) under transformers 5's fused expert parameter names (mlp.experts.gate_up_proj
// with [gate | up] outputs, mlp.experts.down_proj), which is how MoE int4 checkpoints with fused
// experts ship them (vLLM's MoE WNA16 layout).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "loader/model_config.h"
#include "loader/model_validate.h"

namespace oxyd::loader {

enum class QuantScheme { FP8_BLOCK, AWQ, GPTQ };

struct QuantizedLinear {
  QuantScheme scheme;
  std::string module;                // "<m>"; the model reads it as "<m>.weight"
  int64_t experts = 0;               // > 0: a stacked [experts, rows, cols] tensor
  int64_t rows = 0, cols = 0;        // out, in (per expert)
  DType repacked = DType::Q8_0;      // what the load writes
  std::vector<std::string> sources;  // the checkpoint tensors it stands for
  std::vector<int64_t> shape() const;  // of the repacked tensor
  /// The name the model reads the repacked tensor under: "<m>.weight", or for stacked int4
  /// experts "<m>" itself (the fused parameter, e.g. "model.layers.0.mlp.experts.gate_up_proj").
  std::string bound_name() const;
};

/// The quantized linears of a checkpoint with `c`'s quantization_config (empty for other
/// methods or none). Throws Error(UNSUPPORTED / INVALID_ARGUMENT) for a layout it cannot read
/// (bits ≠ 4, an AWQ version other than GEMM, inner dims not multiples of 32, bad shapes).
std::vector<QuantizedLinear> quantized_linears(const ModelConfig& c, const std::vector<TensorDesc>& tensors);

/// Bytes the repacked weights take minus those of the checkpoint tensors they stand for (what
/// `estimate` adds to the file's bytes).
int64_t repack_delta_bytes(const ModelConfig& c, const std::vector<TensorDesc>& tensors);

/// Writes `q`'s repacked [rows, cols] (or [E, rows, cols]) into `out` (nbytes of that shape);
/// `tensor(name)` views a checkpoint tensor.
void repack_quantized_linear(const ModelConfig& c, const QuantizedLinear& q,
                             const std::function<Tensor(const std::string&)>& tensor, void* out);

}  // namespace oxyd::loader
