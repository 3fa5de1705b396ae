// FP8 / AWQ / GPTQ safetensors checkpoints (loader/quant_checkpoint.h) beside tests/archs (which
// holds their logits against transformers on the exactly dequantized weights): every quantized
// linear is found and bound repacked, the model holds about the quantized size (not an F32 copy),
// and the layouts the repack cannot hold are refused with an error naming the field.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>

#include <nlohmann/json.hpp>
#include <unistd.h>

#include "core/error.h"
#include "loader/quant_checkpoint.h"
#include "loader/safetensors.h"
#include "model/model_config.h"
#include "model/transformer.h"

namespace fs = std::filesystem;

namespace oxyd {
namespace {

std::string dir(const std::string& name) { return std::string(OXYD_SOURCE_DIR) + "/tests/data/archs/" + name; }

struct Case {
  const char* name;
  DType repacked;
  int64_t per_layer;  // quantized linears a layer: q k v o + gate up down (dense), 3 per expert, or the
                      // 2 stacked ones (mlp.experts.gate_up_proj, down_proj) of all experts
  int64_t experts = 0;  // > 0: the expert linears are stacked [experts, rows, cols]
};

TEST(QuantCheckpoint, EveryLinearRepackedAndNoFloatCopy) {
  for (const Case c : {Case{"qwen3_fp8", DType::Q8_0, 7}, Case{"qwen3_awq", DType::Q4_1, 7},
                       Case{"qwen3_gptq", DType::Q4_1, 7}, Case{"qwen3_gptq_act", DType::Q8_0, 7},
                       Case{"qwen3_moe_fp8", DType::Q8_0, 4 + 3 * 8}, Case{"qwen3_moe_awq", DType::Q4_1, 4 + 3 * 8},
                       Case{"qwen3_moe_awq_stacked", DType::Q4_1, 4 + 2, 8},
                       Case{"qwen3_moe_gptq_stacked", DType::Q4_1, 4 + 2, 8}}) {
    SCOPED_TRACE(c.name);
    const loader::ModelConfig cfg = model::load_hf_config(dir(c.name) + "/config.json");
    const auto st = loader::SafetensorsFile::open(dir(c.name));
    const auto qs = loader::quantized_linears(cfg, loader::tensor_descs(st.tensors()));
    ASSERT_EQ(qs.size(), size_t(c.per_layer * cfg.num_hidden_layers));
    int64_t params = 0;
    int64_t stacked = 0;
    for (const auto& q : qs) {
      EXPECT_EQ(q.repacked, c.repacked) << q.module;
      params += std::max<int64_t>(1, q.experts) * q.rows * q.cols;
      if (q.experts) {
        EXPECT_EQ(q.experts, c.experts) << q.module;
        EXPECT_EQ(q.bound_name(), q.module) << "stacked experts bind under their fused name";
        ++stacked;
      }
    }
    EXPECT_EQ(stacked, c.experts ? 2 * cfg.num_hidden_layers : 0);
    auto m = model::Transformer::load(dir(c.name));
    const model::MemoryUsage u = m->memory_usage();
    // BF16 embedding + head (+ MoE routers) in place; the linears held once at 8.5 (Q8_0) or 5
    // (Q4_1) bits a weight, plus F32 norms. A float copy of the linears would be ≥ 2 bytes a weight.
    const int64_t linears = params * dtype_block_bytes(c.repacked) / 32;
    const int64_t bf16_rest = 2 * (2 * cfg.vocab_size + cfg.num_hidden_layers * cfg.num_experts) * cfg.hidden_size;
    std::printf("[ MEMORY  ] %s: %lld linear weights held in %lld B (%s); mapped %lld, owned %lld\n", c.name,
                (long long)params, (long long)linears, std::string(dtype_name(c.repacked)).c_str(),
                (long long)u.weights_mapped, (long long)u.weights_owned);
    EXPECT_LE(u.weights_mapped + u.weights_owned, bf16_rest + linears + linears / 10 + 64 * 1024);
  }
}

// A copy of `name` whose config.json is changed by `edit`.
std::string edited_copy(const std::string& name, const std::function<void(nlohmann::json&)>& edit) {
  const fs::path to = fs::temp_directory_path() / ("oxyd_quant_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(to);
  fs::create_directories(to);
  for (const auto& f : fs::directory_iterator(dir(name))) fs::copy(f.path(), to / f.path().filename());
  nlohmann::json j = nlohmann::json::parse(std::ifstream(to / "config.json"));
  edit(j);
  std::ofstream(to / "config.json") << j.dump(2);
  return to.string();
}

void expect_error(const std::string& path, ErrorCode code, const std::string& needle) {
  try {
    model::Transformer::load(path);
    ADD_FAILURE() << path << " loaded";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
  fs::remove_all(path);
}

TEST(QuantCheckpoint, RefusesWhatTheRepackCannotHold) {
  // Act-order g_idx under a config that says there is none: Q4_1 cannot hold it.
  expect_error(edited_copy("qwen3_gptq_act", [](nlohmann::json& j) { j["quantization_config"]["desc_act"] = false; }),
               ErrorCode::INVALID_ARGUMENT, "g_idx");
  expect_error(edited_copy("qwen3_awq", [](nlohmann::json& j) { j["quantization_config"]["bits"] = 8; }),
               ErrorCode::UNSUPPORTED, "bits = 8");
  expect_error(edited_copy("qwen3_awq", [](nlohmann::json& j) { j["quantization_config"]["version"] = "gemv"; }),
               ErrorCode::UNSUPPORTED, "GEMM");
}

}  // namespace
}  // namespace oxyd
