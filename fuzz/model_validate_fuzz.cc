// libFuzzer target: model validation (loader/model_validate.h) as show/run/estimate and the server
// reach it. Byte 0 picks the format: even → the rest is a GGUF file (model_config_from_gguf +
// validate_model_tensors); odd → config.json text, a NUL, then a safetensors file (the bounded
// JSON parser, parse_hf_config, parse_safetensors, validate_model_tensors). Any input must either
// pass or throw oxyd::Error; a model that passes must satisfy what the engine sizes from it.
// Seeds: fuzz/seeds/model_validate_fuzz/.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "core/error.h"
#include "core/json_parse.h"
#include "loader/gguf.h"
#include "loader/model_config.h"
#include "model/model_config.h"
#include "loader/model_validate.h"
#include "loader/safetensors.h"

namespace {

using namespace oxyd::loader;
using oxyd::model::model_config_from_gguf;
using oxyd::model::parse_hf_config;

// What a validated model promises the engine (KV cache, RoPE tables, matmul shapes).
void check_invariants(const ModelConfig& c) {
  const bool ok = c.num_hidden_layers >= 1 && c.num_hidden_layers <= kMaxLayers && c.hidden_size >= 1 &&
                  c.hidden_size <= kMaxHiddenSize && c.num_attention_heads >= 1 && c.num_key_value_heads >= 1 &&
                  c.num_attention_heads % c.num_key_value_heads == 0 && c.head_dim >= 1 && c.head_dim <= kMaxHeads &&
                  c.vocab_size >= 1 && c.vocab_size <= kMaxVocabSize && c.max_position_embeddings >= 0 &&
                  c.max_position_embeddings <= kMaxContextLength &&
                  (c.gguf_arch.empty() || c.max_position_embeddings >= 1) &&
                  c.num_experts_per_tok <= (c.num_experts > 0 || !c.gguf_arch.empty() ? c.num_experts : INT64_MAX) &&
                  static_cast<int64_t>(c.layer_types.size()) == c.num_hidden_layers;
  if (!ok) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  std::span<const uint8_t> rest(data + 1, size - 1);
  try {
    if ((data[0] & 1) == 0) {
      GgufFile f = GgufFile::from_buffer(rest, "fuzz.gguf");
      ModelConfig c = model_config_from_gguf(f);
      check_invariants(c);
      validate_model_tensors(c, tensor_descs(f.tensors()), gguf_token_count(f), "fuzz.gguf");
      for (const auto& t : f.tensors())
        if (t.numel() == 0) __builtin_trap();  // zero dimensions must have been refused
    } else {
      std::string_view all(reinterpret_cast<const char*>(rest.data()), rest.size());
      const size_t nul = all.find('\0');
      ModelConfig c = parse_hf_config(oxyd::parse_json_bounded(all.substr(0, nul), "config.json"), "config.json");
      check_invariants(c);
      if (nul == std::string_view::npos) return 0;
      SafetensorsHeader h = parse_safetensors(rest.subspan(nul + 1), "model.safetensors");
      validate_model_tensors(c, tensor_descs(h.tensors), -1, "model.safetensors");
    }
  } catch (const oxyd::Error&) {
  }
  return 0;
}
