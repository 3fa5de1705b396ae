// safetensors reader against the `safetensors` package: fixtures and expected.json come from
// tools/gen_safetensors_fixtures.py (safe_open's view of names, dtypes, shapes, raw bytes).
// Malformed headers are built here, one defect each.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "loader/safetensors.h"
#include "test_util.h"

namespace oxyd::loader {
namespace {

using nlohmann::json;
using test::expect_error;
using test::fixture;
constexpr auto kBad = ErrorCode::INVALID_ARGUMENT;

std::string hex(std::span<const uint8_t> b) {
  static const char* d = "0123456789abcdef";
  std::string s;
  for (uint8_t c : b) { s += d[c >> 4]; s += d[c & 15]; }
  return s;
}

const json& expected() {
  static const json j = json::parse(test::read_bytes(fixture("safetensors/expected.json")));
  return j;
}

void expect_file(const SafetensorsFile& f, const json& d) {
  for (const auto& e : d["tensors"]) {
    SCOPED_TRACE(e["name"].get<std::string>());
    const SafetensorsTensorInfo* t = f.find_tensor(e["name"].get<std::string>());
    ASSERT_NE(t, nullptr);
    EXPECT_EQ(dtype_name(t->dtype), e["dtype"].get<std::string>());
    EXPECT_EQ(t->shape, e["shape"].get<std::vector<int64_t>>());
    EXPECT_EQ(hex(f.tensor_data(*t)), e["data_hex"].get<std::string>());
  }
}

TEST(Safetensors, AllDtypesMatchSafeOpen) {
  const json& d = expected()["files"][0];
  ASSERT_EQ(d["file"], "all_dtypes.safetensors");
  SafetensorsFile f = SafetensorsFile::open(fixture("safetensors/all_dtypes.safetensors"));
  EXPECT_EQ(f.tensors().size(), d["tensors"].size());
  expect_file(f, d);
  EXPECT_EQ(f.metadata().at("format"), "pt");
  Tensor v = f.view(*f.find_tensor("f32"));
  EXPECT_EQ(v.shape_str(), "[2, 3]");
  EXPECT_EQ(v.ptr<float>()[5], 1.5f);
  EXPECT_EQ(f.view(*f.find_tensor("scalar")).shape_str(), "[1]");
  EXPECT_EQ(f.view(*f.find_tensor("bf16")).dtype, DType::BF16);
  EXPECT_EQ(f.view(*f.find_tensor("model.layers.0.mlp.experts.gate_up_proj_blocks")).shape_str(),
            "[1, 2, 1, 16]");
  expect_error([&] { f.view(*f.find_tensor("w5d")); }, ErrorCode::UNSUPPORTED, {"'w5d'", "5 dims"});
  EXPECT_EQ(f.find_tensor("empty")->nbytes(), 0u);
  // The same bytes from memory.
  auto bytes = test::read_bytes(fixture("safetensors/all_dtypes.safetensors"));
  expect_file(SafetensorsFile::from_buffer(bytes, "mem"), d);
}

TEST(Safetensors, ShardedIndexAndDirectory) {
  for (std::string p : {fixture("safetensors/sharded/model.safetensors.index.json"),
                        fixture("safetensors/sharded")}) {
    SafetensorsFile f = SafetensorsFile::open(p);
    EXPECT_EQ(f.paths().size(), 2u);
    EXPECT_EQ(f.tensors().size(), 3u);
    expect_file(f, expected()["files"][1]);
    expect_file(f, expected()["files"][2]);
    EXPECT_EQ(f.find_tensor("lm_head.weight")->file_idx, 1u);
  }
}

std::vector<uint8_t> make(const std::string& header, size_t data_bytes, uint64_t len_override = 0) {
  uint64_t n = len_override ? len_override : header.size();
  std::string s(reinterpret_cast<const char*>(&n), 8);
  s += header;
  s.append(data_bytes, '\0');
  return std::vector<uint8_t>(s.begin(), s.end());
}

void expect_bad(const std::vector<uint8_t>& b, std::initializer_list<std::string> parts) {
  expect_error([&] { parse_safetensors(b, "bad.safetensors"); }, kBad, parts);
}

TEST(Safetensors, MalformedHeaders) {
  const std::string ok = R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})";
  EXPECT_NO_THROW(parse_safetensors(make(ok, 8), "ok"));
  expect_bad({1, 2, 3}, {"bad.safetensors", "8-byte"});
  expect_bad(make(ok, 8, 1ull << 40), {"header length"});
  expect_bad(make(ok, 0, ok.size() + 1), {"exceeds"});
  expect_bad(make(ok, 4), {"'a'", "past the"});
  expect_bad(make("[1,2]", 0), {"'{'"});
  expect_bad(make("{\"a\": ", 0), {"not valid JSON"});
  expect_bad(make(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})", 8),
             {"'a' twice"});
  expect_bad(make(R"({"a":3})", 0), {"'a'", "not an object"});
  expect_bad(make(R"({"a":{"shape":[2],"data_offsets":[0,8]}})", 8), {"'a'", "dtype"});
  expect_bad(make(R"({"a":{"dtype":"Q4","shape":[2],"data_offsets":[0,8]}})", 8), {"'a'", "'Q4'"});
  expect_bad(make(R"({"a":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}})", 8), {"'a'", "non-negative"});
  expect_bad(make(R"({"a":{"dtype":"F32","data_offsets":[0,8]}})", 8), {"'a'", "shape"});
  expect_bad(make(R"({"a":{"dtype":"F32","shape":[2]}})", 8), {"'a'", "data_offsets"});
  expect_bad(make(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[8,0]}})", 8), {"'a'", "reversed"});
  expect_bad(make(R"({"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", 8), {"'a'", "needs 12"});
  expect_bad(make(R"({"a":{"dtype":"F32","shape":[4611686018427387904,4],"data_offsets":[0,8]}})", 8),
             {"'a'", "overflows"});
  expect_bad(make(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})", 12),
             {"'a'", "'b'", "overlap"});
  expect_bad(make(R"({"__metadata__":{"k":1},"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})", 8),
             {"__metadata__", "'k'"});
  expect_bad(make(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,"8"]}})", 8), {"'a'", "data_offsets"});
  // Every truncation of a real file fails cleanly.
  auto full = test::read_bytes(fixture("safetensors/all_dtypes.safetensors"));
  for (size_t n = 0; n < full.size(); ++n) {
    std::span<const uint8_t> prefix(full.data(), n);
    EXPECT_THROW(parse_safetensors(prefix, "cut"), Error) << n;
  }
  // Remote header: size from the first 8 bytes, then parse with the full size known.
  auto hs = safetensors_header_size({full.data(), 8}, "remote", full.size());
  ASSERT_TRUE(hs);
  EXPECT_EQ(parse_safetensors_header({full.data(), *hs}, "remote", full.size()).tensors.size(),
            expected()["files"][0]["tensors"].size());
  EXPECT_FALSE(safetensors_header_size({full.data(), 7}, "remote"));
}

TEST(Safetensors, BadIndex) {
  test::TempDir tmp;
  auto write = [&](const std::string& name, const std::string& text) {
    test::write_bytes(tmp.file(name), std::vector<uint8_t>(text.begin(), text.end()));
  };
  write("a.json", R"({"metadata": {}})");
  expect_error([&] { SafetensorsFile::open(tmp.file("a.json")); }, kBad, {"a.json", "weight_map"});
  write("b.json", R"({"weight_map": {"x": "../etc/passwd"}})");
  expect_error([&] { SafetensorsFile::open(tmp.file("b.json")); }, kBad, {"b.json", "plain file name"});
  write("c.json", R"({"weight_map": {"x": "missing.safetensors"}})");
  expect_error([&] { SafetensorsFile::open(tmp.file("c.json")); }, ErrorCode::IO, {"missing.safetensors"});
  test::write_bytes(tmp.file("s.safetensors"),
                    make(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})", 8));
  write("d.json", R"({"weight_map": {"zz": "s.safetensors"}})");
  expect_error([&] { SafetensorsFile::open(tmp.file("d.json")); }, kBad, {"'zz'", "not there"});
  write("e.json", R"({"weight_map": {"a": "s.safetensors"}})");
  EXPECT_EQ(SafetensorsFile::open(tmp.file("e.json")).tensors().size(), 1u);
  expect_error([&] { SafetensorsFile::open(tmp.path.string()); }, ErrorCode::NOT_FOUND, {"model.safetensors"});
}

}  // namespace
}  // namespace oxyd::loader
