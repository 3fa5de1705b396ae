// The config entry points over the family registry.
#include "model/model_config.h"

#include <fstream>
#include <iterator>

#include "core/error.h"
#include "core/json_parse.h"
#include "loader/config_family.h"
#include "model/archs/registry.h"

namespace oxyd::model {

loader::ModelConfig load_hf_config(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw Error(ErrorCode::IO, "cannot open '" + path + "'");
  const std::string text((std::istreambuf_iterator<char>(f)), {});
  return parse_hf_config(parse_json_bounded(text, path), path);
}

loader::ModelConfig parse_hf_config(const nlohmann::json& config, const std::string& source) {
  return loader::config_from_hf_json(config, source, config_families());
}

loader::ModelConfig model_config_from_gguf(const loader::GgufMetadata& md,
                                           const std::vector<loader::GgufTensorInfo>* tensors) {
  return loader::config_from_gguf(md, tensors, config_families());
}

}  // namespace oxyd::model
