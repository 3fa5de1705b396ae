// `pull` end to end in-process against the fake hub: default variant and only its files, the
// registry making a re-pull free, --variant/--force/--name, the interactive table, split GGUF,
// sharded safetensors with index, gated repos (401/403 explained), hostile file names, nothing
// written outside the store, and models already in the Hugging Face cache used in place.
#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>

#include "fake_hub.h"
#include "hub/pull.h"
#include "hub/registry.h"
#include "hub_test_util.h"

namespace fs = std::filesystem;

namespace oxyd::hub {
namespace {

using namespace oxyd::hub::testing;

const std::string kSha = "4f1c0e0b5a7d9e2c3b4a5f6e7d8c9b0a1f2e3d4c";

struct PullFixture : ::testing::Test {
  FakeHub hub;
  TempDir tmp;
  std::string root = tmp / "home/.oxydllm/models";
  HubClient client{hub.endpoint(), ""};
  Progress quiet{std::tmpfile(), false, 60};
  std::ostringstream out;
  std::string q4 = tiny_gguf(40000, 1), q8 = tiny_gguf(70000, 2), q2 = tiny_gguf(30000, 3);

  void SetUp() override {
    client.set_retry({3, 0.01, 0.02});
    hub.add_repo({"Qwen/Tiny-GGUF", kSha,
                  {{".gitattributes", "*.gguf filter=lfs", false},
                   {"README.md", "# Tiny", false},
                   {"Tiny-Q4_K_M.gguf", q4, true},
                   {"Tiny-Q8_0.gguf", q8, true},
                   {"Tiny-Q2_K.gguf", q2, true},
                   {"mmproj-Tiny-F16.gguf", tiny_gguf(5000, 4), true}},
                  ""});
    hub.add_repo({"big/Split-GGUF", kSha,
                  {{"Split-Q4_K_M-00001-of-00003.gguf", tiny_gguf(20000, 5), true},
                   {"Split-Q4_K_M-00002-of-00003.gguf", random_bytes(20000, 6), true},
                   {"Split-Q4_K_M-00003-of-00003.gguf", random_bytes(10000, 7), true},
                   {"Split-Q8_0.gguf", tiny_gguf(90000, 8), true}},
                  ""});
    hub.add_repo({"meta/Tiny-ST", kSha,
                  {{"README.md", "x", false},
                   {"config.json", R"({"model_type":"llama"})", false},
                   {"tokenizer.json", "{}", false},
                   {"tokenizer_config.json", "{}", false},
                   {"model.safetensors.index.json",
                    R"({"metadata":{"total_size":3000},"weight_map":{"a":"model-00001-of-00002.safetensors","b":"model-00002-of-00002.safetensors"}})",
                    false},
                   {"model-00001-of-00002.safetensors", random_bytes(2000, 9), true},
                   {"model-00002-of-00002.safetensors", random_bytes(1000, 10), true},
                   {"extra.safetensors", random_bytes(500, 11), true},
                   {"pytorch_model.bin", random_bytes(500, 12), true}},
                  ""});
    hub.add_repo({"gated/Locked-GGUF", kSha, {{"Locked-Q4_K_M.gguf", tiny_gguf(9000, 13), true}}, "hf_secret"});
    hub.add_repo({"evil/Evil-GGUF", kSha, {{"../escape-Q4_K_M.gguf", tiny_gguf(3000, 14), true}}, ""});
    hub.add_repo({"empty/Docs", kSha, {{"README.md", "nothing", false}}, ""});
  }
  PullOptions opts(const std::string& repo, const std::string& variant = "") {
    PullOptions o;
    o.repo = repo;
    o.models_dir = root;
    o.variant = variant;
    return o;
  }
  PullResult run(const PullOptions& o, const std::string& input = "") {
    std::istringstream in(input);
    return pull(client, o, quiet, in, out);
  }
  std::vector<std::string> store_files(const std::string& dir) {
    std::vector<std::string> v;
    for (auto& f : all_files(root + "/" + dir))
      if (f[0] != '.') v.push_back(f);
    return v;
  }
};

TEST_F(PullFixture, DefaultVariantOnlyItsFilesAndRegistry) {
  PullResult r = run(opts("Qwen/Tiny-GGUF"));
  EXPECT_EQ(r.ids, (std::vector<std::string>{"Qwen/Tiny-Q4_K_M"}));
  EXPECT_NE(out.str().find("choosing Q4_K_M (the default"), std::string::npos);
  EXPECT_EQ(store_files("Qwen/Tiny-GGUF"), (std::vector<std::string>{"Tiny-Q4_K_M.gguf"}));
  EXPECT_EQ(read_file(root + "/Qwen/Tiny-GGUF/Tiny-Q4_K_M.gguf"), q4);
  EXPECT_EQ(r.bytes_downloaded, int64_t(q4.size()));
  Registry reg(root);
  const RegistryEntry* e = reg.find("Qwen/Tiny-Q4_K_M");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->revision, kSha);
  EXPECT_EQ(e->variant, "Q4_K_M");
  ASSERT_EQ(e->files.size(), 1u);
  EXPECT_EQ(e->files[0].sha256, sha256_hex(q4));
  // Downloads were pinned to the listed commit.
  EXPECT_NE(hub.ranges().size(), 0u);

  // A second pull finds the verified file and transfers nothing.
  hub.reset_counters();
  r = run(opts("Qwen/Tiny-GGUF"));
  EXPECT_EQ(r.bytes_downloaded, 0);
  EXPECT_EQ(hub.file_requests.load(), 0);
  // --force downloads again.
  auto f = opts("Qwen/Tiny-GGUF");
  f.force = true;
  r = run(f);
  EXPECT_EQ(r.bytes_downloaded, int64_t(q4.size()));
  // A file changed on disk is not trusted: it is re-verified and replaced.
  write_file(root + "/Qwen/Tiny-GGUF/Tiny-Q4_K_M.gguf", q8.substr(0, q4.size()));
  r = run(opts("Qwen/Tiny-GGUF"));
  EXPECT_EQ(r.bytes_downloaded, int64_t(q4.size()));
  EXPECT_EQ(read_file(root + "/Qwen/Tiny-GGUF/Tiny-Q4_K_M.gguf"), q4);
}

TEST_F(PullFixture, VariantFlagIsCaseInsensitiveAndChecked) {
  PullResult r = run(opts("Qwen/Tiny-GGUF", "q8_0"));
  EXPECT_EQ(r.ids, (std::vector<std::string>{"Qwen/Tiny-Q8_0"}));
  EXPECT_EQ(read_file(root + "/Qwen/Tiny-GGUF/Tiny-Q8_0.gguf"), q8);
  expect_error([&] { run(opts("Qwen/Tiny-GGUF", "Q3_K_S")); }, ErrorCode::NOT_FOUND,
               {"variant 'Q3_K_S' is not in Qwen/Tiny-GGUF", "Q2_K, Q4_K_M, Q8_0"});
}

TEST_F(PullFixture, InteractiveTable) {
  auto o = opts("Qwen/Tiny-GGUF");
  o.interactive = true;
  PullResult r = run(o, "9\n3\n");
  EXPECT_EQ(r.ids, (std::vector<std::string>{"Qwen/Tiny-Q8_0"}));
  EXPECT_NE(out.str().find("★ recommended"), std::string::npos);
  EXPECT_NE(out.str().find("not a usable choice: 9"), std::string::npos);
  EXPECT_NE(out.str().find("Choose a variant [2]"), std::string::npos);  // Q4_K_M is row 2 by size
  r = run(o, "\n");  // empty answer: the recommended one
  EXPECT_EQ(r.ids, (std::vector<std::string>{"Qwen/Tiny-Q4_K_M"}));
}

TEST_F(PullFixture, SplitGgufDownloadsEveryShard) {
  PullResult r = run(opts("big/Split-GGUF"));
  EXPECT_EQ(r.ids, (std::vector<std::string>{"big/Split-Q4_K_M"}));
  EXPECT_EQ(store_files("big/Split-GGUF"),
            (std::vector<std::string>{"Split-Q4_K_M-00001-of-00003.gguf", "Split-Q4_K_M-00002-of-00003.gguf",
                                      "Split-Q4_K_M-00003-of-00003.gguf"}));
  EXPECT_EQ(read_file(root + "/big/Split-GGUF/Split-Q4_K_M-00002-of-00003.gguf"), random_bytes(20000, 6));
}

TEST_F(PullFixture, ShardedSafetensorsWithIndex) {
  PullResult r = run(opts("meta/Tiny-ST"));
  EXPECT_EQ(r.ids, (std::vector<std::string>{"meta/Tiny-ST"}));
  EXPECT_EQ(store_files("meta/Tiny-ST"),
            (std::vector<std::string>{"config.json", "model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors",
                                      "model.safetensors.index.json", "tokenizer.json", "tokenizer_config.json"}));
}

TEST_F(PullFixture, GatedRepoNeedsAToken) {
  expect_error([&] { run(opts("gated/Locked-GGUF")); }, ErrorCode::INVALID_ARGUMENT,
               {"this repo is gated", "accept its licence at " + hub.endpoint() + "/gated/Locked-GGUF", "--token"});
  EXPECT_TRUE(store_files("gated/Locked-GGUF").empty());  // no empty .part left behind
  HubClient wrong(hub.endpoint(), "hf_wrong");
  std::istringstream in;
  expect_error([&] { pull(wrong, opts("gated/Locked-GGUF"), quiet, in, out); }, ErrorCode::INVALID_ARGUMENT,
               {"gated", "HTTP 403", "the token has no access yet"});
  HubClient right(hub.endpoint(), "hf_secret");
  EXPECT_EQ(pull(right, opts("gated/Locked-GGUF"), quiet, in, out).ids,
            (std::vector<std::string>{"gated/Locked-Q4_K_M"}));
}

TEST_F(PullFixture, NothingWrittenOutsideTheStore) {
  run(opts("Qwen/Tiny-GGUF"));
  run(opts("big/Split-GGUF"));
  run(opts("meta/Tiny-ST"));
  auto n = opts("Qwen/Tiny-GGUF", "Q2_K");
  n.name = "mine/tiny";
  EXPECT_EQ(run(n).ids, (std::vector<std::string>{"mine/tiny-Q2_K"}));
  expect_error([&] { run(opts("evil/Evil-GGUF")); }, ErrorCode::INVALID_ARGUMENT,
               {"../escape-Q4_K_M.gguf", "not a safe relative path"});
  auto bad = opts("Qwen/Tiny-GGUF");
  bad.name = "../../outside";
  expect_error([&] { run(bad); }, ErrorCode::INVALID_ARGUMENT, {"not a model id"});
  expect_error([&] { run(opts("empty/Docs")); }, ErrorCode::NOT_FOUND, {"no GGUF or safetensors"});
  for (const auto& f : all_files(tmp.str()))
    EXPECT_EQ(f.rfind("home/.oxydllm/models/", 0), 0u) << f << " was written outside the store";
}

TEST_F(PullFixture, UsesTheHuggingFaceCacheInPlace) {
  // The real cache layout: snapshot entries are symlinks to blobs named by their sha256.
  std::string hf = tmp / "hf/hub";
  std::string folder = hf + "/models--Qwen--Tiny-GGUF";
  write_file(folder + "/blobs/" + sha256_hex(q4), q4);
  fs::create_directories(folder + "/snapshots/" + kSha);
  fs::create_symlink("../../blobs/" + sha256_hex(q4), folder + "/snapshots/" + kSha + "/Tiny-Q4_K_M.gguf");
  write_file(folder + "/refs/main", kSha);
  auto o = opts("Qwen/Tiny-GGUF");
  o.hf_cache_dir = hf;
  PullResult r = run(o);
  EXPECT_TRUE(r.from_hf_cache);
  EXPECT_EQ(r.ids, (std::vector<std::string>{"Qwen/Tiny-Q4_K_M"}));
  EXPECT_EQ(r.dir, folder + "/snapshots/" + kSha);
  EXPECT_EQ(hub.file_requests.load(), 0);
  EXPECT_FALSE(fs::exists(root + "/Qwen/Tiny-GGUF"));
  EXPECT_NE(out.str().find("using it in place"), std::string::npos);
  // A variant the cache lacks is downloaded as usual.
  o.variant = "Q8_0";
  EXPECT_FALSE(run(o).from_hf_cache);
  EXPECT_EQ(read_file(root + "/Qwen/Tiny-GGUF/Tiny-Q8_0.gguf"), q8);
}

}  // namespace
}  // namespace oxyd::hub
