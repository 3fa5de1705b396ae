// libFuzzer target: HF config.json normalization (parse_hf_config) on arbitrary JSON text.
// Any input must either give a ModelConfig or throw oxyd::Error. Seeds: fuzz/seeds/config_fuzz/.
#include <cstddef>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "loader/model_config.h"
#include "model/model_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  nlohmann::json j = nlohmann::json::parse(data, data + size, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return 0;
  try {
    oxyd::loader::ModelConfig c = oxyd::model::parse_hf_config(j, "fuzz.json");
    if (c.layer_types.size() != static_cast<size_t>(c.num_hidden_layers)) __builtin_trap();
  } catch (const oxyd::Error&) {
  }
  return 0;
}
