// Bad input to the model layer: unknown families, checkpoints missing tensors and malformed
// batches are oxyd::Error with a message naming the file / field, never a crash.
#include <filesystem>
#include <fstream>

#include "archs_util.h"
#include "core/error.h"
#include "model/archs/registry.h"

namespace oxyd::model::test {
namespace {

namespace fs = std::filesystem;

template <typename F>
std::string expect_error(F&& f, ErrorCode code) {
  try {
    f();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no error thrown";
  return {};
}

TEST(ArchRegistry, UnknownFamilyIsUnsupported) {
  std::string msg = expect_error([] { arch_spec("no_such_family"); }, ErrorCode::UNSUPPORTED);
  EXPECT_NE(msg.find("no_such_family"), std::string::npos);
  EXPECT_NE(msg.find("llama"), std::string::npos);  // lists what is supported
  // Every family of the registry: a runnable one has a spec named after it, any other is
  // UNSUPPORTED with its name in the message.
  size_t runnable = 0;
  for (const Family* f : families()) {
    if (f->runnable) {
      EXPECT_EQ(arch_spec(f->name()).family, f->name());
      ++runnable;
    } else {
      msg = expect_error([&] { arch_spec(f->name()); }, ErrorCode::UNSUPPORTED);
      EXPECT_NE(msg.find("'" + f->name() + "'"), std::string::npos) << msg;
    }
  }
  EXPECT_EQ(registered_families().size(), runnable);
  EXPECT_GE(runnable, 9u);
}

TEST(ArchWeights, MissingTensorNamesFileAndTensor) {
  // llama's config over a safetensors file holding only the embedding.
  fs::path dir = fs::temp_directory_path() / "oxyd_archs_missing_tensor";
  fs::remove_all(dir);
  fs::create_directories(dir);
  fs::copy_file(arch_dir("llama") + "/config.json", dir / "config.json");
  {
    const std::string header =
        R"({"model.embed_tokens.weight":{"dtype":"F32","shape":[320,128],"data_offsets":[0,163840]}})";
    std::ofstream f(dir / "model.safetensors", std::ios::binary);
    uint64_t n = header.size();
    f.write(reinterpret_cast<const char*>(&n), 8);
    f << header;
    std::vector<char> zeros(163840, 0);
    f.write(zeros.data(), static_cast<std::streamsize>(zeros.size()));
  }
  std::string msg = expect_error([&] { Transformer::load(dir.string()); }, ErrorCode::INVALID_ARGUMENT);
  EXPECT_NE(msg.find("oxyd_archs_missing_tensor"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'model.norm.weight' is missing"), std::string::npos) << msg;
  fs::remove_all(dir);
}

TEST(ArchWeights, ShapeMismatchNamesTensor) {
  // qwen3's config (hidden 256) over qwen2's weights (hidden 128).
  fs::path dir = fs::temp_directory_path() / "oxyd_archs_bad_shape";
  fs::remove_all(dir);
  fs::create_directories(dir);
  fs::copy_file(arch_dir("qwen3") + "/config.json", dir / "config.json");
  fs::copy_file(arch_dir("qwen2") + "/model.safetensors", dir / "model.safetensors");
  std::string msg = expect_error([&] { Transformer::load(dir.string()); }, ErrorCode::INVALID_ARGUMENT);
  EXPECT_NE(msg.find("model.embed_tokens.weight"), std::string::npos) << msg;
  EXPECT_NE(msg.find("expected [320, 256]"), std::string::npos) << msg;
  fs::remove_all(dir);
}

TEST(ArchForward, MalformedBatchIsRejected) {
  auto m = Transformer::load(arch_dir("llama"));
  KvCache cache = m->make_kv_cache(4, 8);
  std::vector<int32_t> ids{5, 6}, pos{0, 1}, qsl{0, 2}, lens{2}, table{1}, slots{8, 9}, li{2};
  ForwardBatch b;
  b.token_ids = ids;
  b.positions = pos;
  b.query_start_loc = qsl;
  b.seq_lens = lens;
  b.block_table = table;
  b.max_blocks_per_req = 1;
  b.slot_mapping = slots;
  b.logits_indices = li;  // row 2 of a 2-token batch
  std::string msg = expect_error([&] { m->forward(b, cache); }, ErrorCode::INVALID_ARGUMENT);
  EXPECT_NE(msg.find("logits index"), std::string::npos) << msg;
  li[0] = 1;
  ids[1] = 100000;  // outside the vocabulary
  expect_error([&] { m->forward(b, cache); }, ErrorCode::INVALID_ARGUMENT);
  ids[1] = 6;
  slots[1] = 4 * 8;  // past the cache
  expect_error([&] { m->forward(b, cache); }, ErrorCode::INVALID_ARGUMENT);
  slots[1] = 9;
  EXPECT_NO_THROW(m->forward(b, cache));
}

}  // namespace
}  // namespace oxyd::model::test
