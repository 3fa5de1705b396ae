// The transformers-v5 in-memory expert layout (mlp.experts.gate_up_proj [E, 2I, H], gate rows
// first, and mlp.experts.down_proj [E, H, I]), which save_pretrained in transformers 5.25 turns
// back into per-expert tensors but a checkpoint written from a state_dict keeps: the tiny OLMoE and
// Qwen3.5-MoE (hybrid, shared expert) checkpoints rewritten in that layout must give the same
// logits, bit for bit, as the per-expert files (which tests/archs checks against transformers).
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "archs_util.h"
#include "loader/safetensors.h"

namespace oxyd::model::test {
namespace {

namespace fs = std::filesystem;

class MoeFusedLayout : public ::testing::TestWithParam<std::string> {};

TEST_P(MoeFusedLayout, SameLogitsAsPerExpertTensors) {
  const std::string fam = GetParam();
  const auto src = loader::SafetensorsFile::open(arch_dir(fam) + "/model.safetensors");
  nlohmann::json cfg = nlohmann::json::parse(std::ifstream(arch_dir(fam) + "/config.json"));
  const int64_t E = cfg["num_experts"], L = cfg["num_hidden_layers"];
  // name -> (shape, bytes); the per-expert tensors stacked into the fused ones.
  std::map<std::string, std::pair<std::vector<int64_t>, std::vector<uint8_t>>> out;
  auto bytes = [&](const std::string& name) {
    const auto* t = src.find_tensor(name);
    EXPECT_NE(t, nullptr) << name;
    auto d = src.tensor_data(*t);
    return std::make_pair(t->shape, std::vector<uint8_t>(d.begin(), d.end()));
  };
  int64_t fused = 0;
  for (const auto& t : src.tensors()) {
    if (t.name.find(".mlp.experts.") != std::string::npos) continue;
    out[t.name] = bytes(t.name);
  }
  for (int64_t l = 0; l < L; ++l) {
    const std::string p = "model.layers." + std::to_string(l) + ".mlp.experts.";
    std::vector<uint8_t> gate_up, down;
    std::vector<int64_t> gs, ds;
    for (int64_t e = 0; e < E; ++e) {
      auto [g_shape, g] = bytes(p + std::to_string(e) + ".gate_proj.weight");
      auto [u_shape, u] = bytes(p + std::to_string(e) + ".up_proj.weight");
      auto [d_shape, d] = bytes(p + std::to_string(e) + ".down_proj.weight");
      gate_up.insert(gate_up.end(), g.begin(), g.end());
      gate_up.insert(gate_up.end(), u.begin(), u.end());
      down.insert(down.end(), d.begin(), d.end());
      gs = {E, 2 * g_shape[0], g_shape[1]};
      ds = {E, d_shape[0], d_shape[1]};
    }
    out[p + "gate_up_proj"] = {gs, gate_up};
    out[p + "down_proj"] = {ds, down};
    fused += 2;
  }
  ASSERT_EQ(fused, 2 * L);

  const fs::path dir = fs::temp_directory_path() / ("oxyd_moe_fused_layout_" + fam);
  fs::remove_all(dir);
  fs::create_directories(dir);
  fs::copy_file(arch_dir(fam) + "/config.json", dir / "config.json");
  nlohmann::json header = nlohmann::json::object();
  uint64_t at = 0;
  for (const auto& [name, t] : out) {
    header[name] = {{"dtype", "F32"}, {"shape", t.first}, {"data_offsets", {at, at + t.second.size()}}};
    at += t.second.size();
  }
  std::string h = header.dump();
  h.resize((h.size() + 7) / 8 * 8, ' ');
  {
    std::ofstream f(dir / "model.safetensors", std::ios::binary);
    const uint64_t n = h.size();
    f.write(reinterpret_cast<const char*>(&n), 8);
    f << h;
    for (const auto& [name, t] : out) f.write(reinterpret_cast<const char*>(t.second.data()), std::streamsize(t.second.size()));
  }

  Golden g = load_golden(fam);
  auto per_expert = Transformer::load(arch_dir(fam));
  auto fused_model = Transformer::load(dir.string());
  for (const auto& prompt : g.prompts) {
    const auto a = prefill(*per_expert, prompt), b = prefill(*fused_model, prompt);
    ASSERT_EQ(a.size(), b.size());
    EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)), 0);
  }
  // The experts are views of the fused tensors (no copies), read through the mapping.
  EXPECT_EQ(fused_model->memory_usage().weights_mapped, per_expert->memory_usage().weights_mapped);
  fs::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(Families, MoeFusedLayout, ::testing::Values("olmoe", "qwen3_5_moe"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace oxyd::model::test
