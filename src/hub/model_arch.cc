#include "hub/model_arch.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "hub/quant_name.h"
#include "core/json_parse.h"
#include "loader/gguf.h"

namespace oxyd::hub {

std::string model_architecture(const LocalModel& m) {
  if (m.format == ModelFormat::GGUF) {
    loader::GgufFile g = loader::GgufFile::open(m.weight_files.front());
    return g.architecture();
  }
  const std::string cfg = (std::filesystem::path(m.dir) / "config.json").string();
  if (!std::filesystem::exists(cfg)) throw_error(ErrorCode::NOT_FOUND, cfg + " is missing");
  nlohmann::json j = read_json_file(cfg);
  if (j.contains("text_config") && j["text_config"].is_object() && j["text_config"].contains("model_type") &&
      j["text_config"]["model_type"].is_string())
    return j["text_config"]["model_type"];
  if (j.contains("model_type") && j["model_type"].is_string()) return j["model_type"];
  throw_error(ErrorCode::INVALID_ARGUMENT, cfg + ": no model_type");
}

std::string model_format_label(const LocalModel& m) {
  if (m.format != ModelFormat::GGUF) return format_name(m.format);
  loader::GgufFile g = loader::GgufFile::open(m.weight_files.front());
  return format_name(m.format) + " " + gguf_quantization(g, g.tensors());
}

}  // namespace oxyd::hub
