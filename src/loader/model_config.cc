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

}  // namespace oxyd::loader
