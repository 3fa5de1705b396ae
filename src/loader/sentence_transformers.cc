// sentence-transformers pipeline files (see sentence_transformers.h).
#include "loader/sentence_transformers.h"

#include <algorithm>
#include <filesystem>

#include "core/error.h"
#include "core/json_parse.h"

namespace oxyd::loader {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

bool flag(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_boolean() && it->get<bool>();
}

void read_pooling(const fs::path& file, ModelConfig& c) {
  const json p = read_json_file(file.string());
  if (!p.is_object()) throw Error(ErrorCode::INVALID_ARGUMENT, file.string() + ": expected a JSON object");
  const bool cls = flag(p, "pooling_mode_cls_token"), mean = flag(p, "pooling_mode_mean_tokens"),
             last = flag(p, "pooling_mode_lasttoken");
  for (const char* other : {"pooling_mode_max_tokens", "pooling_mode_mean_sqrt_len_tokens",
                            "pooling_mode_weightedmean_tokens"})
    if (flag(p, other))
      throw Error(ErrorCode::UNSUPPORTED, file.string() + ": " + other + " is not supported (mean, CLS and "
                                          "last-token pooling are)");
  if (int(cls) + int(mean) + int(last) != 1)
    throw Error(ErrorCode::UNSUPPORTED, file.string() + ": expected exactly one of pooling_mode_cls_token, "
                                        "pooling_mode_mean_tokens, pooling_mode_lasttoken");
  c.pooling_type = cls ? POOLING_CLS : mean ? POOLING_MEAN : POOLING_LAST;
}

}  // namespace

const char* pooling_name(int t) {
  switch (t) {
    case POOLING_NONE: return "none";
    case POOLING_MEAN: return "mean";
    case POOLING_CLS: return "cls";
    case POOLING_LAST: return "last";
    case POOLING_RANK: return "rank";
    default: return "";
  }
}

void read_sentence_transformers(const std::string& dir, ModelConfig& c) {
  const fs::path modules = fs::path(dir) / "modules.json";
  if (!fs::exists(modules)) return;
  const json m = read_json_file(modules.string());
  if (!m.is_array()) throw Error(ErrorCode::INVALID_ARGUMENT, modules.string() + ": expected a JSON array");
  for (const json& mod : m) {
    if (!mod.is_object() || !mod.contains("type") || !mod["type"].is_string())
      throw Error(ErrorCode::INVALID_ARGUMENT, modules.string() + ": every module needs a string 'type'");
    const std::string type = mod["type"].get<std::string>();
    const std::string path = mod.contains("path") && mod["path"].is_string() ? mod["path"].get<std::string>() : "";
    const std::string kind = type.substr(type.rfind('.') + 1);
    if (path.find("..") != std::string::npos || (!path.empty() && path[0] == '/'))
      throw Error(ErrorCode::INVALID_ARGUMENT, modules.string() + ": module path '" + path + "' leaves the directory");
    if (kind == "Transformer") continue;
    if (kind == "Pooling") read_pooling(fs::path(dir) / path / "config.json", c);
    else if (kind == "Normalize") c.embedding_normalize = true;
    else
      throw Error(ErrorCode::UNSUPPORTED, modules.string() + ": sentence-transformers module " + type +
                                              " is not supported (Transformer, Pooling and Normalize are)");
  }
  const fs::path sb = fs::path(dir) / "sentence_bert_config.json";
  if (fs::exists(sb)) {
    const json j = read_json_file(sb.string());
    if (j.is_object() && j.contains("max_seq_length") && j["max_seq_length"].is_number_integer())
      c.max_seq_length = std::max<int64_t>(0, j["max_seq_length"].get<int64_t>());
  }
  const fs::path st = fs::path(dir) / "config_sentence_transformers.json";
  if (fs::exists(st)) {
    const json j = read_json_file(st.string());
    if (j.is_object() && j.contains("prompts") && j["prompts"].is_object())
      for (const auto& [name, text] : j["prompts"].items())
        if (text.is_string()) c.embedding_prompts[name] = text.get<std::string>();
  }
}

}  // namespace oxyd::loader
