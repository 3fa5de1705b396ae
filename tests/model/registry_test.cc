// The family registry (model/archs/registry.h) against the config readers: every name a family
// declares resolves back to that family, no two families claim the same name, and every runnable
// family has its tiny model under tests/data/archs/<family>/ (tools/gen_tiny_models.py).
#include <gtest/gtest.h>

#include <filesystem>
#include <set>

#include <nlohmann/json.hpp>

#include "loader/gguf.h"
#include "model/archs/registry.h"
#include "model/model_config.h"

namespace oxyd::model {
namespace {

using loader::GgufMetadata;
using loader::GgufValue;
using nlohmann::json;
namespace fs = std::filesystem;

// A small config every family accepts (the linear_* keys: hybrid families need them).
json small_hf_config() {
  return json{{"vocab_size", 32},           {"hidden_size", 64},          {"num_hidden_layers", 4},
              {"num_attention_heads", 4},   {"intermediate_size", 128},   {"head_dim", 16},
              {"global_head_dim", 16},      {"max_position_embeddings", 64},
              {"linear_conv_kernel_dim", 4}, {"linear_key_head_dim", 16}, {"linear_value_head_dim", 16},
              {"linear_num_key_heads", 2},  {"linear_num_value_heads", 2}};
}

GgufMetadata small_gguf(const std::string& arch) {
  GgufMetadata md("m.gguf");
  md.add("general.architecture", GgufValue::string(arch));
  const std::string p = arch + ".";
  for (auto [k, v] : {std::pair{"block_count", 4u}, {"context_length", 64u}, {"embedding_length", 64u},
                      {"attention.head_count", 4u}, {"feed_forward_length", 128u}, {"vocab_size", 32u},
                      {"ssm.conv_kernel", 4u}, {"ssm.state_size", 16u}, {"ssm.group_count", 2u},
                      {"ssm.time_step_rank", 2u}, {"ssm.inner_size", 32u}})
    md.add(p + k, GgufValue::scalar<uint32_t>(v));
  return md;
}

TEST(FamilyRegistry, NamesAreUnique) {
  std::set<std::string> names, model_types, gguf_archs;
  for (const Family* f : families()) {
    EXPECT_TRUE(names.insert(f->name()).second) << f->name();
    for (const auto& t : f->config.hf_model_types)
      EXPECT_TRUE(model_types.insert(t.model_type).second) << t.model_type << " claimed twice";
    for (const auto& a : f->config.gguf_archs)
      EXPECT_TRUE(gguf_archs.insert(a).second) << a << " claimed twice";
    EXPECT_EQ(find_family(f->name()), f);
  }
  EXPECT_EQ(find_family("no_such_family"), nullptr);
}

TEST(FamilyRegistry, EveryHfNameResolvesToItsFamily) {
  for (const Family* f : families()) {
    for (const auto& t : f->config.hf_model_types) {
      SCOPED_TRACE(t.model_type);
      json by_type = small_hf_config();
      by_type["model_type"] = t.model_type;
      loader::ModelConfig c = parse_hf_config(by_type, "c.json");
      EXPECT_EQ(c.family, f->name());
      EXPECT_EQ(c.architecture, t.architecture);
      json by_arch = small_hf_config();
      by_arch["architectures"] = {t.architecture};
      EXPECT_EQ(parse_hf_config(by_arch, "c.json").family, f->name());
    }
  }
}

TEST(FamilyRegistry, EveryGgufArchResolvesToItsFamily) {
  for (const Family* f : families()) {
    for (const auto& a : f->config.gguf_archs) {
      SCOPED_TRACE(a);
      loader::ModelConfig c = model_config_from_gguf(small_gguf(a));
      EXPECT_EQ(c.family, f->name());
      EXPECT_EQ(c.gguf_arch, a);
      EXPECT_EQ(c.architecture, f->config.gguf_architecture);
      EXPECT_EQ(c.model_type, f->config.gguf_model_type);
    }
  }
}

TEST(FamilyRegistry, RunnableFamiliesHaveTheirTinyModel) {
  for (const Family* f : families()) {
    if (!f->runnable) continue;
    SCOPED_TRACE(f->name());
    EXPECT_EQ(f->arch.family, f->name());
    const fs::path dir = fs::path(OXYD_SOURCE_DIR) / "tests/data/archs" / f->name();
    ASSERT_TRUE(fs::exists(dir / "config.json")) << dir;
    EXPECT_EQ(load_hf_config((dir / "config.json").string()).family, f->name());
    for (const auto& e : fs::directory_iterator(dir)) {
      if (e.path().extension() != ".gguf") continue;
      EXPECT_EQ(model_config_from_gguf(loader::GgufFile::open(e.path().string())).family, f->name()) << e.path();
    }
  }
}

}  // namespace
}  // namespace oxyd::model
