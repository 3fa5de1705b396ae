// ModelConfig's accessors (the readers are model_config_hf.cc and model_config_gguf.cc).
#include "loader/model_config.h"

#include "core/error.h"

namespace oxyd::loader {

const RopeParameters& ModelConfig::rope(const std::string& layer_type) const {
  auto it = rope_parameters.find(layer_type == kSlidingAttention ? kSlidingAttention : kFullAttention);
  if (it == rope_parameters.end())
    throw Error(ErrorCode::INTERNAL, source + ": ModelConfig has no rope parameters");
  return it->second;
}

ModelConfig::LayerDims ModelConfig::layer_dims(int64_t l) const {
  if (l < 0 || l >= num_hidden_layers || static_cast<int64_t>(layer_types.size()) != num_hidden_layers)
    throw Error(ErrorCode::INTERNAL, source + ": layer " + std::to_string(l) + " outside the layer types");
  LayerDims d;
  const bool full = layer_types[size_t(l)] == kFullAttention;
  d.head_dim = full && global_head_dim > 0 ? global_head_dim : head_dim;
  d.num_kv_heads = num_key_value_heads;
  if (!num_key_value_heads_per_layer.empty()) d.num_kv_heads = num_key_value_heads_per_layer[size_t(l)];
  else if (full && num_global_key_value_heads > 0) d.num_kv_heads = num_global_key_value_heads;
  const int64_t first_shared = num_hidden_layers - num_kv_shared_layers;
  d.kv_layer = l;
  if (num_kv_shared_layers > 0 && l >= first_shared) {
    d.kv_layer = -1;
    for (int64_t j = first_shared - 1; j >= 0 && d.kv_layer < 0; --j)
      if (layer_types[size_t(j)] == layer_types[size_t(l)]) d.kv_layer = j;
    if (d.kv_layer < 0)
      throw Error(ErrorCode::INVALID_ARGUMENT, source + ": layer " + std::to_string(l) + " shares the K/V of an earlier " +
                                                   layer_types[size_t(l)] + " layer, and no layer before " +
                                                   std::to_string(first_shared) + " is one (num_kv_shared_layers)");
  }
  d.intermediate_size = intermediate_size;
  if (!intermediate_size_per_layer.empty()) d.intermediate_size = intermediate_size_per_layer[size_t(l)];
  else if (use_double_wide_mlp && d.kv_layer != l) d.intermediate_size = 2 * intermediate_size;
  return d;
}

}  // namespace oxyd::loader
