// packed_weight_extra_bytes (see weights.h): what `oxydllm estimate` adds for the packed copies.
#include <string>
#include <unordered_map>
#include <vector>

#include "core/error.h"
#include "model/archs/registry.h"
#include "model/weights.h"
#include "ops/dispatch.h"

namespace oxyd::model {

int64_t packed_weight_extra_bytes(const loader::ModelConfig& c, const ArchSpec& spec,
                                  const std::vector<loader::GgufTensorInfo>& tensors) {
  std::unordered_map<std::string, const loader::GgufTensorInfo*> by_name;
  for (const auto& t : tensors) by_name.emplace(t.name, &t);
  auto find = [&](const TensorName& n, int64_t layer) -> const loader::GgufTensorInfo* {
    if (n.gguf.empty()) return nullptr;
    const auto it = by_name.find(tensor_name(n.gguf, layer));
    return it == by_name.end() || (it->second->n_dims != 2 && it->second->n_dims != 3) ? nullptr : it->second;
  };
  const backend::Backend& cpu = ops::device_backend(Device::CPU);  // this machine's matmul
  int64_t extra = 0;
  const auto exists = [&](const TensorName& n, int64_t l) { return find(n, l) != nullptr; };
  // Weights Weights::load copies before binding them, the copy kept in place of the file's rows:
  // Gated DeltaNet tensors restored from llama.cpp's tiled value-head order (rewrite_gguf_linear;
  // ssm_out as F32 where a head's columns are not whole blocks) and a gated attention's q_proj
  // split into queries and gates. A packed copy is made from the copy, which stays as well.
  using S = MatmulWeightRef::Slot;
  const bool tiled = spec.gguf_lin_v_heads_tiled && c.linear_num_key_heads > 0 &&
                     c.linear_num_value_heads != c.linear_num_key_heads;
  for (const MatmulWeightRef& r : matmul_weight_refs(c, spec, exists)) {
    const auto* t = find(*r.name, r.layer);
    if (!t) continue;
    const int64_t cols = t->ne[0];
    const bool lin = r.slot == S::LIN_QKV || r.slot == S::LIN_Z || r.slot == S::LIN_A || r.slot == S::LIN_B ||
                     r.slot == S::LIN_OUT;
    const bool copied = (tiled && lin) || (r.slot == S::Q && spec.attn_output_gate);
    DType dt = t->dtype;
    if (tiled && r.slot == S::LIN_OUT && c.linear_value_head_dim % dtype_block_elems(dt) != 0) dt = DType::F32;
    extra += cpu.packed_extra_bytes(dt, r.rows, cols);
    if (!copied) continue;
    const int64_t copy = r.rows * dtype_row_bytes(dt, cols), file = r.rows * dtype_row_bytes(t->dtype, cols);
    extra += copy - file;
    // Packed: the copy's rows are packed (q and gate each), and the copy is kept besides.
    const int64_t parts = r.slot == S::Q ? 2 : 1;
    static uint8_t probe;  // wants_packed looks only at the device, shape and dtype of a weight with data
    const Tensor shape(dt, &probe, {r.rows / parts, cols});
    if (cpu.wants_packed(shape) && dt != DType::F32 && dt != DType::BF16) extra += copy;  // owned floats stay unpacked
  }
  return extra;
}

int64_t packed_weight_extra_bytes(const loader::ModelConfig& c, const std::vector<loader::GgufTensorInfo>& tensors) {
  const ArchSpec* spec = nullptr;
  try {
    spec = &arch_spec(c.family);
  } catch (const Error& e) {
    if (e.code() != ErrorCode::UNSUPPORTED) throw;
    return 0;
  }
  return packed_weight_extra_bytes(c, *spec, tensors);
}

bool held_as_f32_copy(const loader::ModelConfig& c, const std::string& name) {
  const ArchSpec* spec = nullptr;
  try {
    spec = &arch_spec(c.family);
  } catch (const Error& e) {
    if (e.code() != ErrorCode::UNSUPPORTED) throw;
    return false;
  }
  for (const TensorName* tn : {&spec->names.lin_conv, &spec->names.shexp_gate_inp}) {
    const std::string& hf = tn->hf;  // "model.layers.{}.<part>": a layer's <part>, under any prefix
    const size_t at = hf.find("{}.");
    if (at == std::string::npos) continue;
    const std::string part = hf.substr(at + 2);  // ".<part>"
    if (name.ends_with(part) && name.find(".layers.") != std::string::npos) return true;
  }
  return false;
}

}  // namespace oxyd::model
