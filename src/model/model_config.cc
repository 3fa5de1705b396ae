// The config entry points over the family registry.
#include "model/model_config.h"

#include <filesystem>
#include <fstream>
#include <iterator>

#include "core/error.h"
#include "core/json_parse.h"
#include "loader/config_family.h"
#include "loader/sentence_transformers.h"
#include "model/archs/registry.h"

namespace oxyd::model {

loader::ModelConfig load_hf_config(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw Error(ErrorCode::IO, "cannot open '" + path + "'");
  const std::string text((std::istreambuf_iterator<char>(f)), {});
  loader::ModelConfig c = parse_hf_config(parse_json_bounded(text, path), path);
  loader::read_sentence_transformers(std::filesystem::path(path).parent_path().string(), c);
  // An encoder without a sentence-transformers pipeline: mean pooling, sentence-transformers'
  // default for a plain transformers checkpoint (its models.Pooling default).
  if (!c.is_causal && c.pooling_type == loader::POOLING_UNSET) c.pooling_type = loader::POOLING_MEAN;
  if (c.num_labels > 0) c.pooling_type = loader::POOLING_RANK;  // a cross-encoder scores pairs
  return c;
}

loader::ModelConfig parse_hf_config(const nlohmann::json& config, const std::string& source) {
  return loader::config_from_hf_json(config, source, config_families());
}

const char* model_task(const loader::ModelConfig& c) {
  if (c.num_labels > 0 || c.pooling_type == loader::POOLING_RANK) return "rank";
  const int p = c.pooling_type;
  if (!c.is_causal || p == loader::POOLING_MEAN || p == loader::POOLING_CLS || p == loader::POOLING_LAST)
    return "embed";
  return "generate";
}

loader::ModelConfig model_config_from_gguf(const loader::GgufMetadata& md,
                                           const std::vector<loader::GgufTensorInfo>* tensors) {
  return loader::config_from_gguf(md, tensors, config_families());
}

}  // namespace oxyd::model
