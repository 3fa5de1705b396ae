// The store: oxydLLM's id scheme, discovery (store layout, oxydLLM's flat layout, partial
// downloads skipped), the Hugging Face cache layout (HF_HOME / HF_HUB_CACHE,
// models--ns--repo/snapshots/<rev>/ with blob symlinks), id resolution, and rm safety.
#include <gtest/gtest.h>

#include <filesystem>

#include "hub/registry.h"
#include "hub/remove.h"
#include "hub/store.h"
#include "fake_hub.h"
#include "hub_test_util.h"

namespace fs = std::filesystem;

namespace oxyd::hub {
namespace {

using testing::all_files;
using testing::expect_error;
using testing::read_file;
using testing::ScopedEnv;
using testing::TempDir;
using testing::tiny_gguf;
using testing::write_file;

TEST(ModelIds, CanonicalGgufNames) {
  EXPECT_EQ(canonical_gguf_name("Qwen3-4B-GGUF", "qwen3-4b-q4_k_m"), "Qwen3-4B-Q4_K_M");
  EXPECT_EQ(canonical_gguf_name("Qwen3-4B-GGUF", "Qwen3-4B-Q4_K_M"), "Qwen3-4B-Q4_K_M");
  EXPECT_EQ(canonical_gguf_name("gemma-3-270m-it_GGUF", "gemma-3-270m-it-ud-q4_k_xl"), "gemma-3-270m-it-UD-Q4_K_XL");
  EXPECT_EQ(canonical_gguf_name("Qwen3-4B-GGUF", "other-name-q8_0"), "other-name-q8_0");  // raw stem
  EXPECT_EQ(canonical_gguf_name("Plain", "Plain-f16"), "Plain-F16");
}

TEST(ModelIds, PathLikeIdsRejected) {
  for (std::string bad : {"", "..", "../x", "a/..", "/abs/path", "a/b/c", "a\\b", "./a", "a/.hidden", "a//b", "a/"})
    expect_error([&] { check_model_id(bad); }, ErrorCode::INVALID_ARGUMENT, {"is not a model id"});
  check_model_id("Qwen/Qwen3-4B-Q4_K_M");
  check_model_id("local-model");
}

struct StoreFixture : ::testing::Test {
  TempDir tmp;
  std::string root = tmp / "models";
  void SetUp() override {
    write_file(root + "/Qwen/Qwen3-4B-GGUF/qwen3-4b-q4_k_m.gguf", tiny_gguf(2000, 1));
    write_file(root + "/Qwen/Qwen3-4B-GGUF/Qwen3-4B-Q8_0.gguf", tiny_gguf(3000, 2));
    write_file(root + "/Qwen/Qwen3-4B-GGUF/Qwen3-4B-Q2_K.gguf.part", "partial");  // interrupted pull
    write_file(root + "/Qwen/Qwen3-4B-GGUF/README.md", "hi");
    write_file(root + "/big/Big-GGUF/Big-Q4_K_M-00001-of-00002.gguf", tiny_gguf(1000, 3));
    write_file(root + "/big/Big-GGUF/Big-Q4_K_M-00002-of-00002.gguf", "shard2");
    write_file(root + "/big/Big-GGUF/Big-Q8_0-00001-of-00002.gguf", tiny_gguf(1000, 4));  // shard 2 missing
    write_file(root + "/meta/Llama-3.2-1B/config.json", R"({"model_type":"llama"})");
    write_file(root + "/meta/Llama-3.2-1B/tokenizer.json", "{}");
    write_file(root + "/meta/Llama-3.2-1B/model.safetensors.index.json",
               R"({"metadata":{"total_size":8},"weight_map":{"a":"model-00001-of-00002.safetensors","b":"model-00002-of-00002.safetensors"}})");
    write_file(root + "/meta/Llama-3.2-1B/model-00001-of-00002.safetensors", "1234");
    write_file(root + "/meta/Llama-3.2-1B/model-00002-of-00002.safetensors", "5678");
    write_file(root + "/meta/Half/config.json", R"({"model_type":"llama"})");
    write_file(root + "/meta/Half/model.safetensors.index.json",
               R"({"weight_map":{"a":"model-00001-of-00002.safetensors","b":"model-00002-of-00002.safetensors"}})");
    write_file(root + "/meta/Half/model-00001-of-00002.safetensors", "1234");
    write_file(root + "/flat-gguf/flat-q4_0.gguf", tiny_gguf(900, 5));  // oxydLLM: model directly under root
  }
  std::vector<std::string> ids(const std::vector<LocalModel>& ms) {
    std::vector<std::string> out;
    for (const auto& m : ms) out.push_back(m.id);
    return out;
  }
};

TEST_F(StoreFixture, DiscoversCompleteModelsOnly) {
  auto ms = discover_store(root);
  EXPECT_EQ(ids(ms), (std::vector<std::string>{"Qwen/Qwen3-4B-Q4_K_M", "Qwen/Qwen3-4B-Q8_0", "big/Big-Q4_K_M",
                                               "flat-Q4_0", "meta/Llama-3.2-1B"}));
  const auto& q4 = resolve_model(ms, "Qwen/Qwen3-4B-Q4_K_M", false);
  EXPECT_EQ(q4.alt_id, "Qwen/qwen3-4b-q4_k_m");
  EXPECT_EQ(q4.quant, "Q4_K_M");
  EXPECT_EQ(q4.format, ModelFormat::GGUF);
  EXPECT_EQ(q4.size_bytes, int64_t(fs::file_size(root + "/Qwen/Qwen3-4B-GGUF/qwen3-4b-q4_k_m.gguf")));
  const auto& big = resolve_model(ms, "big/Big-Q4_K_M", false);
  EXPECT_EQ(big.weight_files.size(), 2u);
  const auto& st = resolve_model(ms, "meta/Llama-3.2-1B", false);
  EXPECT_EQ(st.format, ModelFormat::SAFETENSORS);
  EXPECT_EQ(st.weight_files.size(), 2u);
  EXPECT_EQ(st.aux_files.size(), 3u);
}

TEST_F(StoreFixture, ResolvesIdsLikeOxydLLM) {
  auto ms = discover_store(root);
  EXPECT_EQ(resolve_model(ms, "qwen/qwen3-4b-q4_k_m", false).id, "Qwen/Qwen3-4B-Q4_K_M");  // case-insensitive
  EXPECT_EQ(resolve_model(ms, "big/Big-GGUF", false).id, "big/Big-Q4_K_M");  // dir id with one model
  expect_error([&] { resolve_model(ms, "Qwen/Qwen3-4B-GGUF", false); }, ErrorCode::INVALID_ARGUMENT,
               {"2 variants", "Qwen/Qwen3-4B-Q4_K_M", "Qwen/Qwen3-4B-Q8_0"});
  EXPECT_EQ(resolve_model(ms, "Qwen/Qwen3-4B", true).id, "Qwen/Qwen3-4B-Q8_0");  // shortest prefix match
  expect_error([&] { resolve_model(ms, "Qwen/Qwen3-4B", false); }, ErrorCode::NOT_FOUND, {"no local model"});
}

TEST(HfCache, LocationFromEnvironment) {
  ScopedEnv a("HF_HUB_CACHE", std::nullopt), b("HUGGINGFACE_HUB_CACHE", std::nullopt), c("XDG_CACHE_HOME", std::nullopt);
  {
    ScopedEnv h("HF_HOME", std::nullopt), home("HOME", "/home/u");
    EXPECT_EQ(hf_hub_cache_dir(), "/home/u/.cache/huggingface/hub");
  }
  {
    ScopedEnv h("HF_HOME", "/data/hf");
    EXPECT_EQ(hf_hub_cache_dir(), "/data/hf/hub");
    ScopedEnv x("HF_HUB_CACHE", "/fast/hub");
    EXPECT_EQ(hf_hub_cache_dir(), "/fast/hub");
  }
}

// The real cache layout: blobs named by sha256 (LFS) or git sha1, snapshot entries are relative
// symlinks into blobs/, refs/main names the snapshot.
void make_hf_cache_repo(const std::string& hub, const std::string& repo_folder, const std::string& rev,
                        const std::vector<std::pair<std::string, std::string>>& files) {
  for (const auto& [name, content] : files) {
    std::string blob = testing::sha256_hex(content);
    write_file(hub + "/" + repo_folder + "/blobs/" + blob, content);
    fs::path link = fs::path(hub) / repo_folder / "snapshots" / rev / name;
    fs::create_directories(link.parent_path());
    fs::path target = fs::path("../..");
    for (size_t i = 0; i < size_t(std::count(name.begin(), name.end(), '/')); ++i) target /= "..";
    fs::create_symlink(target / "blobs" / blob, link);
  }
  write_file(hub + "/" + repo_folder + "/refs/main", rev);
}

TEST(HfCache, FindsModelsInPlace) {
  TempDir tmp;
  std::string hub = tmp / "hf/hub";
  const std::string rev = "0123456789abcdef0123456789abcdef01234567";
  make_hf_cache_repo(hub, "models--unsloth--gemma-3-270m-it-GGUF", rev,
                     {{"gemma-3-270m-it-Q4_K_M.gguf", tiny_gguf(1500, 7, "gemma3")}, {"README.md", "x"}});
  make_hf_cache_repo(hub, "models--Qwen--Qwen3-0.6B", rev,
                     {{"config.json", R"({"model_type":"qwen3"})"}, {"tokenizer.json", "{}"}, {"model.safetensors", "ab"}});
  // An older snapshot that refs/main no longer names is not used.
  make_hf_cache_repo(hub, "models--x--old-GGUF", "1111111111111111111111111111111111111111",
                     {{"old-Q8_0.gguf", tiny_gguf(600, 8)}});
  fs::remove(hub + "/models--x--old-GGUF/refs/main");
  write_file(hub + "/datasets--a--b/refs/main", rev);  // not a model repo

  auto ms = discover_hf_cache(hub);
  ASSERT_EQ(ms.size(), 3u);
  EXPECT_EQ(ms[0].id, "Qwen/Qwen3-0.6B");
  EXPECT_EQ(ms[0].format, ModelFormat::SAFETENSORS);
  EXPECT_EQ(ms[1].id, "unsloth/gemma-3-270m-it-Q4_K_M");
  EXPECT_EQ(ms[1].source, ModelSource::HF_CACHE);
  EXPECT_EQ(ms[1].revision, rev);
  EXPECT_EQ(ms[1].weight_files[0], hub + "/models--unsloth--gemma-3-270m-it-GGUF/snapshots/" + rev + "/gemma-3-270m-it-Q4_K_M.gguf");
  EXPECT_EQ(ms[2].id, "x/old-Q8_0");  // no refs/main: the newest snapshot

  // HF_HOME discovery through discover_all; a store model with the same id wins.
  std::string root = tmp / "models";
  write_file(root + "/Qwen/Qwen3-0.6B/config.json", R"({"model_type":"qwen3"})");
  write_file(root + "/Qwen/Qwen3-0.6B/model.safetensors", "cd");
  ScopedEnv h("HF_HOME", tmp / "hf"), h2("HF_HUB_CACHE", std::nullopt), h3("HUGGINGFACE_HUB_CACHE", std::nullopt);
  auto all = discover_all(root, hf_hub_cache_dir());
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0].id, "Qwen/Qwen3-0.6B");
  EXPECT_EQ(all[0].source, ModelSource::STORE);
}

TEST(HfCache, RmRefusesCacheModels) {
  TempDir tmp;
  std::string hub = tmp / "hub";
  make_hf_cache_repo(hub, "models--a--m-GGUF", "abc", {{"m-Q4_0.gguf", tiny_gguf(600, 9)}});
  fs::create_directories(tmp / "models");
  auto ms = discover_all(tmp / "models", hub);
  ASSERT_EQ(ms.size(), 1u);
  expect_error([&] { plan_remove(ms[0], ms, tmp / "models"); }, ErrorCode::INVALID_ARGUMENT,
               {"Hugging Face cache", "does not delete"});
  EXPECT_TRUE(fs::exists(ms[0].weight_files[0]));
}

TEST_F(StoreFixture, RmRemovesOneVariantThenTheDirectory) {
  Registry reg(root);
  reg.entries()["Qwen/Qwen3-4B-Q4_K_M"] = {"Qwen/Qwen3-4B-GGUF", "abc", "Q4_K_M", "Qwen/Qwen3-4B-GGUF", {}, ""};
  reg.save();
  auto ms = discover_store(root);
  execute_remove(plan_remove(resolve_model(ms, "Qwen/Qwen3-4B-Q4_K_M", false), ms, root), root);
  EXPECT_FALSE(fs::exists(root + "/Qwen/Qwen3-4B-GGUF/qwen3-4b-q4_k_m.gguf"));
  EXPECT_TRUE(fs::exists(root + "/Qwen/Qwen3-4B-GGUF/Qwen3-4B-Q8_0.gguf"));  // the other variant stays
  EXPECT_EQ(Registry(root).find("Qwen/Qwen3-4B-Q4_K_M"), nullptr);
  ms = discover_store(root);
  execute_remove(plan_remove(resolve_model(ms, "Qwen/Qwen3-4B-Q8_0", false), ms, root), root);
  // Last variant: the .part leftover goes; README.md (not ours to judge) keeps the dir alive.
  EXPECT_EQ(all_files(root + "/Qwen"), (std::vector<std::string>{"Qwen3-4B-GGUF/README.md"}));
  ms = discover_store(root);
  execute_remove(plan_remove(resolve_model(ms, "meta/Llama-3.2-1B", false), ms, root), root);
  EXPECT_FALSE(fs::exists(root + "/meta/Llama-3.2-1B"));  // emptied, so removed
  EXPECT_TRUE(fs::exists(root + "/meta/Half"));
}

TEST_F(StoreFixture, RmNeverFollowsSymlinksOutOfTheStore) {
  TempDir outside;
  const std::string precious = outside / "precious.gguf";
  write_file(precious, tiny_gguf(700, 10));
  const std::string precious_dir = outside / "model-dir";
  write_file(precious_dir + "/ext-Q4_0.gguf", tiny_gguf(700, 11));

  // (1) a file link inside a store dir pointing outside: only the link goes.
  fs::create_directories(root + "/lnk/File-GGUF");
  fs::create_symlink(precious, root + "/lnk/File-GGUF/File-Q4_0.gguf");
  // (2) a whole model dir that is a link to outside: only the link goes.
  fs::create_symlink(precious_dir, root + "/lnk/Ext-GGUF");
  // (3) a namespace that is a link to outside: its models resolve outside → refused.
  fs::create_directories(outside / "ns/Inner-GGUF");
  write_file(outside / "ns/Inner-GGUF/Inner-Q4_0.gguf", tiny_gguf(700, 12));
  fs::create_symlink(outside / "ns", root + "/outns");

  auto ms = discover_store(root);
  execute_remove(plan_remove(resolve_model(ms, "lnk/File-Q4_0", false), ms, root), root);
  EXPECT_FALSE(fs::is_symlink(root + "/lnk/File-GGUF/File-Q4_0.gguf"));
  EXPECT_EQ(read_file(precious), tiny_gguf(700, 10));

  ms = discover_store(root);
  execute_remove(plan_remove(resolve_model(ms, "lnk/ext-Q4_0", false), ms, root), root);
  EXPECT_FALSE(fs::exists(root + "/lnk/Ext-GGUF"));
  EXPECT_TRUE(fs::exists(precious_dir + "/ext-Q4_0.gguf"));

  ms = discover_store(root);
  expect_error([&] { plan_remove(resolve_model(ms, "outns/Inner-Q4_0", false), ms, root); },
               ErrorCode::INVALID_ARGUMENT, {"resolves outside the store"});
  EXPECT_TRUE(fs::exists(outside / "ns/Inner-GGUF/Inner-Q4_0.gguf"));
}

}  // namespace
}  // namespace oxyd::hub
