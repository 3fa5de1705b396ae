// The quantization `list` / `show` / `estimate` print comes from a GGUF's tensors, with
// general.file_type as a hint, never from its file name (issue 21 §5.5): the llama_ftype names
// against gguf-py's LlamaFileType (tests/data/hub/ftype_names.json, tools/gen_ftype_names.py),
// the hint accepted only when the tensors hold its main type, the dominant matrix type otherwise,
// and the real CLI on copies of committed tiny GGUFs renamed `renamed.gguf`.
#include <cstdio>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "hub/quant_name.h"
#include "loader/gguf.h"
#include "loader/gguf_writer.h"

namespace oxyd::hub {
namespace {

namespace fs = std::filesystem;

TEST(QuantName, FileTypeNamesAreLlamaCpps) {
  std::ifstream f(std::string(OXYD_SOURCE_DIR) + "/tests/data/hub/ftype_names.json");
  const nlohmann::json j = nlohmann::json::parse(f);
  int checked = 0;
  for (const auto& [id, name] : j["names"].items()) {
    const auto n = gguf_file_type_name(uint32_t(std::stoul(id)));
    ASSERT_TRUE(n.has_value()) << "file_type " << id << " (" << name << ") unknown";
    EXPECT_EQ(n->name, name.get<std::string>()) << "file_type " << id;
    ++checked;
  }
  EXPECT_GE(checked, 30);
  for (uint32_t gone : {4u, 5u, 6u, 33u, 34u, 35u, 1000u}) EXPECT_FALSE(gguf_file_type_name(gone)) << gone;
}

// A header with the given tensors ({name, type, rows, cols}; 1-D when rows == 0).
struct T {
  const char* name;
  DType type;
  int64_t rows, cols;
};
std::string quant_of(const std::vector<T>& ts, std::optional<uint32_t> file_type, bool file_type_as_string = false) {
  loader::GgufWriter w;
  w.add_string("general.architecture", "llama");
  if (file_type) w.add_scalar<uint32_t>("general.file_type", *file_type);
  if (file_type_as_string) w.add_string("general.file_type", "Q4_K_M");
  for (const T& t : ts) {
    const auto& tr = dtype_traits(t.type);
    const int64_t n = (t.rows ? t.rows : 1) * t.cols;
    std::vector<uint8_t> data(size_t(n / tr.block_elems * tr.block_bytes));
    if (t.rows) w.add_tensor(t.name, t.type, {t.rows, t.cols}, data);
    else w.add_tensor(t.name, t.type, {t.cols}, data);
  }
  const auto bytes = w.to_bytes();
  const auto g = loader::GgufFile::from_buffer(bytes, "q.gguf");
  return gguf_quantization(g, g.tensors());
}

TEST(QuantName, FromTheTensorsWithTheFileTypeAsAHint) {
  const std::vector<T> q4km = {{"a.weight", DType::Q4_K, 64, 256},
                               {"b.weight", DType::Q4_K, 64, 256},
                               {"c.weight", DType::Q6_K, 64, 256},
                               {"norm.weight", DType::F32, 0, 256}};
  EXPECT_EQ(quant_of(q4km, 15), "Q4_K_M");  // llama.cpp's name: the tensors agree (Q4_K present)
  EXPECT_EQ(quant_of(q4km, 14), "Q4_K_S");
  EXPECT_EQ(quant_of(q4km, std::nullopt), "Q4_K");  // no hint: the type with the most matrix elements
  EXPECT_EQ(quant_of(q4km, 7), "Q4_K");             // a hint the tensors contradict (no Q8_0) is ignored
  EXPECT_EQ(quant_of(q4km, std::nullopt, /*file_type_as_string=*/true), "Q4_K");
  EXPECT_EQ(quant_of(q4km, 9999), "Q4_K");
  const std::vector<T> q8 = {{"a.weight", DType::Q8_0, 64, 256}, {"big_norm", DType::F32, 0, 100000}};
  EXPECT_EQ(quant_of(q8, 15), "Q8_0");  // 1-D tensors do not count, however large
  EXPECT_EQ(quant_of({{"n", DType::F32, 0, 64}}, std::nullopt), "unknown");
}

std::string run_cli(const std::vector<std::string>& args) {
  std::string cmd = "'" + std::string(OXYD_CLI_BIN) + "'";
  for (const auto& a : args) cmd += " '" + a + "'";
  cmd += " 2>&1";
  std::string out;
  if (FILE* f = popen(cmd.c_str(), "r")) {
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0) out.append(buf, n);
    pclose(f);
  }
  return out;
}

TEST(QuantName, RenamedFileKeepsItsQuantizationInListAndShow) {
  const fs::path tmp = fs::temp_directory_path() / ("oxyd_qname_" + std::to_string(getpid()));
  const fs::path archs = fs::path(OXYD_SOURCE_DIR) / "tests/data/archs";
  for (const std::string src : {"qwen3/model-Q4_K.gguf", "llama/model-Q8_0.gguf", "llama/model-Q4_0.gguf",
                                "llama/model-F16.gguf"}) {
    SCOPED_TRACE(src);
    fs::remove_all(tmp);
    fs::create_directories(tmp / "store" / "someone" / "model");
    const fs::path dst = tmp / "store" / "someone" / "model" / "renamed.gguf";
    fs::copy_file(archs / src, dst);
    const auto g = loader::GgufFile::open(dst.string());
    const std::string want = gguf_quantization(g, g.tensors());
    // The tensors' own type name (Q4_K, Q8_0, ...) starts the expected label: it is not the name.
    const std::string stem = fs::path(src).stem().string();  // "model-Q4_K"
    EXPECT_EQ(want.rfind(stem.substr(6), 0), 0u) << want;
    const std::string list = run_cli({"list", "--models-dir", (tmp / "store").string(), "--no-hf-cache"});
    EXPECT_NE(list.find("gguf " + want), std::string::npos) << list;
    EXPECT_EQ(list.find("gguf renamed"), std::string::npos) << list;  // the file name is no quantization
    const std::string show = run_cli({"show", dst.string()});
    EXPECT_NE(show.find("Quantization  " + want + " ("), std::string::npos) << show;
    const std::string est = run_cli({"estimate", dst.string()});
    EXPECT_NE(est.find("Format    " + want + "\n"), std::string::npos) << est;
  }
  fs::remove_all(tmp);
}

}  // namespace
}  // namespace oxyd::hub
