// GGUF reader and writer against gguf-py: tests/data/gguf/*.gguf were written by gguf-py and
// fixtures.json is what gguf-py's GGUFReader sees in them (tools/gen_gguf_fixtures.py). Our
// reader must see exactly the same; our writer must reproduce gguf-py's bytes exactly.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "loader/gguf.h"
#include "loader/gguf_writer.h"
#include "test_util.h"

namespace oxyd::loader {
namespace {

using nlohmann::json;
using test::fixture;
using test::read_bytes;

const json& fixtures() {
  static const json j = json::parse(read_bytes(fixture("gguf/fixtures.json")));
  return j;
}

const json& describe(const std::string& file) {
  for (const auto& d : fixtures()["files"])
    if (d["file"] == file) return d;
  throw std::runtime_error("no description for " + file);
}

GgufType type_named(const std::string& s) {
  for (uint32_t t = 0; t < kGgufNumTypes; ++t)
    if (gguf_type_name(GgufType(t)) == s) return GgufType(t);
  throw std::runtime_error("bad type " + s);
}

// The flattened leaf values of v, as JSON (gguf-py flattens nested arrays the same way).
void flatten(const GgufValue& v, json& out) {
  if (v.is_array()) {
    for (uint64_t i = 0; i < v.size(); ++i) flatten(v.at(i), out);
    return;
  }
  switch (v.type()) {
    case GgufType::STRING: out.push_back(v.as_string()); break;
    case GgufType::BOOL: out.push_back(*v.to<bool>()); break;
    case GgufType::FLOAT32: case GgufType::FLOAT64: out.push_back(*v.to<double>()); break;
    case GgufType::UINT8: case GgufType::UINT16: case GgufType::UINT32: case GgufType::UINT64:
      out.push_back(*v.to<uint64_t>()); break;
    default: out.push_back(*v.to<int64_t>()); break;
  }
}

std::vector<std::string> type_chain(const GgufValue& v) {
  std::vector<std::string> c{std::string(gguf_type_name(v.type()))};
  const GgufValue* cur = &v;
  GgufValue first;
  while (cur->is_array()) {
    c.emplace_back(gguf_type_name(cur->elem_type()));
    if (cur->elem_type() != GgufType::ARRAY || cur->size() == 0) break;
    first = cur->at(0);
    cur = &first;
  }
  return c;
}

// A typed value from JSON and its type chain (types[0..]).
GgufValue build(const json& j, const json& types, size_t ti = 0) {
  GgufType t = type_named(types[ti]);
  auto arr = [&](auto tag) {
    using T = decltype(tag);
    std::vector<T> v;
    for (const auto& x : j) v.push_back(x.get<T>());
    if constexpr (std::is_same_v<T, bool>) return GgufValue::array(v);
    else return GgufValue::array<T>(v);
  };
  switch (t) {
    case GgufType::UINT8: return GgufValue::scalar(j.get<uint8_t>());
    case GgufType::INT8: return GgufValue::scalar(j.get<int8_t>());
    case GgufType::UINT16: return GgufValue::scalar(j.get<uint16_t>());
    case GgufType::INT16: return GgufValue::scalar(j.get<int16_t>());
    case GgufType::UINT32: return GgufValue::scalar(j.get<uint32_t>());
    case GgufType::INT32: return GgufValue::scalar(j.get<int32_t>());
    case GgufType::UINT64: return GgufValue::scalar(j.get<uint64_t>());
    case GgufType::INT64: return GgufValue::scalar(j.get<int64_t>());
    case GgufType::FLOAT32: return GgufValue::scalar(j.get<float>());
    case GgufType::FLOAT64: return GgufValue::scalar(j.get<double>());
    case GgufType::BOOL: return GgufValue::scalar(j.get<bool>());
    case GgufType::STRING: return GgufValue::string(j.get<std::string>());
    case GgufType::ARRAY: break;
  }
  switch (type_named(types[ti + 1])) {
    case GgufType::UINT8: return arr(uint8_t{});
    case GgufType::INT8: return arr(int8_t{});
    case GgufType::UINT16: return arr(uint16_t{});
    case GgufType::INT16: return arr(int16_t{});
    case GgufType::UINT32: return arr(uint32_t{});
    case GgufType::INT32: return arr(int32_t{});
    case GgufType::UINT64: return arr(uint64_t{});
    case GgufType::INT64: return arr(int64_t{});
    case GgufType::FLOAT32: return arr(float{});
    case GgufType::FLOAT64: return arr(double{});
    case GgufType::BOOL: return arr(bool{});
    case GgufType::STRING: return GgufValue::string_array(j.get<std::vector<std::string>>());
    case GgufType::ARRAY: {
      std::vector<GgufValue> items;
      for (const auto& x : j) items.push_back(build(x, types, ti + 1));
      return GgufValue::array_of_arrays(std::move(items));
    }
  }
  throw std::runtime_error("unreachable");
}

std::string hex(std::span<const uint8_t> b) {
  static const char* d = "0123456789abcdef";
  std::string s;
  for (uint8_t c : b) { s += d[c >> 4]; s += d[c & 15]; }
  return s;
}

std::vector<uint8_t> unhex(const std::string& s) {
  std::vector<uint8_t> b;
  for (size_t i = 0; i + 1 < s.size(); i += 2) b.push_back(std::stoi(s.substr(i, 2), nullptr, 16));
  return b;
}

void expect_matches(const GgufHeader& h, const GgufMetadata& md, const json& d,
                    std::span<const uint8_t> file) {
  EXPECT_EQ(h.version, d["version"].get<uint32_t>());
  EXPECT_EQ(h.alignment, d["alignment"].get<uint32_t>());
  EXPECT_EQ(h.data_offset, d["data_offset"].get<uint64_t>());
  ASSERT_EQ(md.size(), d["kv"].size());
  for (size_t i = 0; i < md.size(); ++i) {
    const auto& [key, v] = md.entries()[i];
    const json& e = d["kv"][i];
    SCOPED_TRACE(key);
    EXPECT_EQ(key, e["key"].get<std::string>());
    EXPECT_EQ(type_chain(v), e["types"].get<std::vector<std::string>>());
    json got = json::array();
    flatten(v, got);
    json want = e["value"].is_array() ? e["value"] : json::array({e["value"]});
    EXPECT_EQ(got, want);
  }
  ASSERT_EQ(h.tensors.size(), d["tensors"].size());
  for (size_t i = 0; i < h.tensors.size(); ++i) {
    const GgufTensorInfo& t = h.tensors[i];
    const json& e = d["tensors"][i];
    SCOPED_TRACE(t.name);
    EXPECT_EQ(t.name, e["name"].get<std::string>());
    EXPECT_EQ(t.ggml_type, e["ggml_type"].get<uint32_t>());
    EXPECT_EQ(static_cast<uint32_t>(t.dtype), t.ggml_type);
    auto ne = e["ne"].get<std::vector<int64_t>>();
    ASSERT_EQ(t.n_dims, ne.size());
    for (size_t k = 0; k < ne.size(); ++k) EXPECT_EQ(t.ne[k], ne[k]);
    EXPECT_EQ(t.offset, e["offset"].get<uint64_t>());
    EXPECT_EQ(t.nbytes, e["nbytes"].get<uint64_t>());
    EXPECT_EQ(hex(file.subspan(h.data_offset + t.offset, t.nbytes)), e["data_hex"].get<std::string>());
  }
}

class GgufFixture : public ::testing::TestWithParam<std::string> {};

TEST_P(GgufFixture, ReaderSeesWhatGgufPySees) {
  const std::string name = GetParam();
  const json& d = describe(name);
  std::vector<uint8_t> bytes = read_bytes(fixture("gguf/" + name));
  GgufHeader h = parse_gguf(bytes, name);
  expect_matches(h, h.metadata, d, bytes);
  if (name.find("-of-") == std::string::npos) {  // single files: also through open() + mmap
    GgufFile f = GgufFile::open(fixture("gguf/" + name));
    expect_matches(f.header(), f, d, bytes);
    ASSERT_EQ(f.tensors().size(), d["tensors"].size());
    for (size_t i = 0; i < f.tensors().size(); ++i)
      EXPECT_EQ(hex(f.tensor_data(f.tensors()[i])), d["tensors"][i]["data_hex"].get<std::string>());
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, GgufFixture,
                         ::testing::Values("all_types.gguf", "align64.gguf", "v2.gguf",
                                           "split-00001-of-00003.gguf",
                                           "split-00002-of-00003.gguf",
                                           "split-00003-of-00003.gguf"),
                         [](const auto& info) {
                           std::string s = info.param;
                           for (char& c : s) if (!isalnum(static_cast<unsigned char>(c))) c = '_';
                           return s;
                         });

// Our writer, given the same keys and tensors, must produce gguf-py's bytes exactly.
void rebuild_and_compare(const std::string& name, uint32_t version) {
  const json& d = describe(name);
  GgufWriter w(d["alignment"].get<uint32_t>(), version);
  for (const auto& e : d["kv"])
    w.add(e["key"].get<std::string>(), build(e.contains("input") ? e["input"] : e["value"], e["types"]));
  for (const auto& t : d["tensors"]) {
    auto ne = t["ne"].get<std::vector<int64_t>>();
    std::vector<int64_t> shape(ne.rbegin(), ne.rend());
    w.add_tensor(t["name"], DType(t["ggml_type"].get<uint32_t>()), shape,
                 unhex(t["data_hex"].get<std::string>()));
  }
  std::vector<uint8_t> ours = w.to_bytes();
  std::vector<uint8_t> theirs = read_bytes(fixture("gguf/" + name));
  ASSERT_EQ(ours.size(), theirs.size());
  for (size_t i = 0; i < ours.size(); ++i)
    ASSERT_EQ(ours[i], theirs[i]) << "first difference at byte " << i;
}

TEST(GgufWriter, ReproducesGgufPyBytes) { rebuild_and_compare("all_types.gguf", 3); }
TEST(GgufWriter, ReproducesGgufPyBytesAlign64) { rebuild_and_compare("align64.gguf", 3); }
TEST(GgufWriter, WritesVersion2) { rebuild_and_compare("v2.gguf", 2); }

TEST(GgufWriter, RoundTripEmptyArraysAndWriteToDisk) {
  test::TempDir tmp;
  GgufWriter w;
  w.add_string("general.architecture", "qwen3");
  w.add("e.u8", GgufValue::array<uint8_t>(std::vector<uint8_t>{}));
  w.add("e.str", GgufValue::string_array({}));
  w.add("e.nested", GgufValue::array_of_arrays({GgufValue::string_array({}),
                                                GgufValue::array<float>(std::vector<float>{1.5f})}));
  std::vector<uint16_t> bf(6, 0x3f80);
  w.add_tensor("a", DType::BF16, {2, 3}, {reinterpret_cast<uint8_t*>(bf.data()), 12});
  w.add_tensor("z", DType::F32, {0}, {});
  w.add_tensor("z2", DType::Q8_0, {3, 0}, {});  // zero columns: rows() must not divide by 0
  w.write(tmp.file("rt.gguf"));
  GgufFile f = GgufFile::open(tmp.file("rt.gguf"));
  EXPECT_EQ(f.architecture(), "qwen3");
  EXPECT_EQ(f.find("e.u8")->size(), 0u);
  EXPECT_EQ(f.find("e.str")->elem_type(), GgufType::STRING);
  EXPECT_EQ(f.find("e.nested")->items().at(1).data<float>()[0], 1.5f);
  const GgufTensorInfo* a = f.find_tensor("a");
  ASSERT_NE(a, nullptr);
  Tensor v = f.view(*a);
  EXPECT_EQ(v.dtype, DType::BF16);
  EXPECT_EQ(v.shape_str(), "[2, 3]");
  EXPECT_EQ(v.ptr<uint16_t>()[5], 0x3f80);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(v.data) % 32, 0u);  // mmap base is page aligned
  EXPECT_EQ(f.find_tensor("z")->nbytes, 0u);
  Tensor z2 = f.view(*f.find_tensor("z2"));
  EXPECT_EQ(z2.shape_str(), "[3, 0]");
  EXPECT_EQ(z2.rows(), 3);
  EXPECT_EQ(z2.nbytes(), 0);
  EXPECT_EQ(f.find_tensor("missing"), nullptr);
}

TEST(GgufFile, ViewsInHfOrder) {
  GgufFile f = GgufFile::open(fixture("gguf/all_types.gguf"));
  EXPECT_EQ(f.version(), 3u);
  const GgufTensorInfo* t = f.find_tensor("t.f32");
  ASSERT_NE(t, nullptr);
  Tensor v = f.view(*t);
  EXPECT_EQ(v.shape_str(), "[2, 3]");  // numpy (2,3) written by gguf-py, ne = [3, 2]
  EXPECT_EQ(v.ptr<float>()[4], 4 * 0.5f - 1);
  Tensor q = f.view(*f.find_tensor("t.q8_0"));
  EXPECT_EQ(q.dtype, DType::Q8_0);
  EXPECT_EQ(q.shape_str(), "[2, 32]");
  EXPECT_EQ(q.nbytes(), 68);
  EXPECT_EQ(f.view(*f.find_tensor("blk.0.attn_q.weight")).shape_str(), "[2, 2, 3]");
  EXPECT_EQ(f.view(*f.find_tensor("t.4d")).shape_str(), "[1, 2, 1, 3]");
}

TEST(GgufFile, TypedGetters) {
  GgufFile f = GgufFile::open(fixture("gguf/all_types.gguf"));
  EXPECT_EQ(f.get_u32("test.u8"), 200u);
  EXPECT_EQ(f.get_i64("test.i8"), -100);
  EXPECT_EQ(f.get_u64("test.u64"), (1ull << 63) + 5);
  EXPECT_EQ(f.get_u32("test.u32"), 4000000000u);
  EXPECT_FLOAT_EQ(f.get_f32("test.f32"), 3.14159f);
  EXPECT_DOUBLE_EQ(f.get_f64("test.f64"), 2.718281828459045);
  EXPECT_TRUE(f.get_bool("test.bool"));
  EXPECT_EQ(f.get_string("test.string"), "h\xc3\xa9llo\nworld \xe2\x9c\x93");
  EXPECT_EQ(f.get_u32("no.such.key", 7u), 7u);
  EXPECT_EQ(f.get_string_array("test.arr_str").at(4), "\xe2\x96\x81the");
  EXPECT_EQ(f.get_array<float>("test.arr_f32").at(1), -1.25f);
  EXPECT_EQ(f.get_array<int64_t>("test.arr_u16").at(1), 65535);
  EXPECT_EQ(f.get_scalar_or_array<uint32_t>("llama.feed_forward_length"),
            (std::vector<uint32_t>{64, 96}));
  EXPECT_EQ(f.get_scalar_or_array<uint32_t>("llama.block_count"), (std::vector<uint32_t>{2}));
  EXPECT_EQ(f.find("test.arr_u8")->data<uint8_t>()[2], 255);
  using test::expect_error;
  expect_error([&] { f.get_u32("test.i8"); }, ErrorCode::INVALID_ARGUMENT,
               {"all_types.gguf", "test.i8", "INT8", "-100"});
  expect_error([&] { f.get_string("test.u32"); }, ErrorCode::INVALID_ARGUMENT,
               {"test.u32", "UINT32", "expected a STRING"});
  expect_error([&] { f.get_u32("llama.context_length"); }, ErrorCode::INVALID_ARGUMENT,
               {"all_types.gguf", "llama.context_length", "missing"});
  expect_error([&] { f.get_string_array("test.arr_i32"); }, ErrorCode::INVALID_ARGUMENT,
               {"test.arr_i32", "ARRAY[INT32]"});
  expect_error([&] { f.get_array<uint8_t>("test.arr_i32"); }, ErrorCode::INVALID_ARGUMENT,
               {"test.arr_i32", "element 0"});
}

// A tensor given by a fill function (made at write time, one at a time) is byte for byte the one
// given as data, in to_bytes() and in the streamed write(); a 33-byte tensor tests the padding.
TEST(GgufWriter, FilledTensorsMatchCopiedOnes) {
  test::TempDir tmp;
  std::vector<uint8_t> a(33), b(64);
  for (size_t i = 0; i < a.size(); ++i) a[i] = uint8_t(i * 7 + 1);
  for (size_t i = 0; i < b.size(); ++i) b[i] = uint8_t(255 - i);
  GgufWriter copied, filled;
  for (GgufWriter* w : {&copied, &filled}) w->add_string("general.architecture", "llama");
  copied.add_tensor("a", DType::I8, {33}, a);
  copied.add_tensor("b", DType::F16, {4, 8}, b);
  int calls = 0;
  auto from = [&calls](const std::vector<uint8_t>& src) {
    return [&calls, &src](std::span<uint8_t> out) {
      ASSERT_EQ(out.size(), src.size());
      std::copy(src.begin(), src.end(), out.begin());
      ++calls;
    };
  };
  filled.add_tensor_filled("a", DType::I8, {33}, from(a));
  filled.add_tensor_filled("b", DType::F16, {4, 8}, from(b));
  const std::vector<uint8_t> want = copied.to_bytes();
  EXPECT_EQ(filled.to_bytes(), want);
  filled.write(tmp.file("filled.gguf"));
  EXPECT_EQ(read_bytes(tmp.file("filled.gguf")), want);
  EXPECT_EQ(calls, 4);
  EXPECT_THROW(filled.add_tensor_filled("c", DType::F32, {2}, {}), Error);
}

}  // namespace
}  // namespace oxyd::loader
