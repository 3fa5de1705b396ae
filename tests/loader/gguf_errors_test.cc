// Malformed GGUF input: every defect must give Error(INVALID_ARGUMENT) (or IO for a missing
// file) naming the file and the item, never a crash, an over-read or a huge allocation. Files are
// built byte by byte here so each defect is exactly the one under test.
#include <gtest/gtest.h>

#include <limits>

#include "loader/gguf.h"
#include "loader/gguf_writer.h"
#include "test_util.h"

namespace oxyd::loader {
namespace {

using test::expect_error;
constexpr auto kBad = ErrorCode::INVALID_ARGUMENT;

struct Bytes {
  std::vector<uint8_t> b;
  template <typename T> Bytes& put(T v) {
    size_t n = b.size();
    b.resize(n + sizeof(T));
    std::memcpy(b.data() + n, &v, sizeof(T));
    return *this;
  }
  Bytes& str(const std::string& s) {
    put<uint64_t>(s.size());
    b.insert(b.end(), s.begin(), s.end());
    return *this;
  }
  Bytes& header(uint64_t n_tensors, uint64_t n_kv, uint32_t version = 3) {
    return put<uint32_t>(0x46554747).put<uint32_t>(version).put<uint64_t>(n_tensors).put<uint64_t>(n_kv);
  }
  Bytes& kv_u32(const std::string& k, uint32_t v) { return str(k).put<uint32_t>(4).put<uint32_t>(v); }
  Bytes& tensor(const std::string& name, std::vector<uint64_t> ne, uint32_t type, uint64_t off) {
    str(name).put<uint32_t>(static_cast<uint32_t>(ne.size()));
    for (auto n : ne) put<uint64_t>(n);
    return put<uint32_t>(type).put<uint64_t>(off);
  }
  Bytes& pad(size_t al = 32) {
    b.resize((b.size() + al - 1) / al * al, 0);
    return *this;
  }
  Bytes& zeros(size_t n) {
    b.resize(b.size() + n, 0);
    return *this;
  }
};

void expect_bad(const Bytes& f, std::initializer_list<std::string> parts) {
  expect_error([&] { parse_gguf(f.b, "bad.gguf"); }, kBad, parts);
  expect_error([&] { GgufFile::from_buffer(f.b, "bad.gguf"); }, kBad, parts);
}

TEST(GgufErrors, Header) {
  expect_bad(Bytes().put<uint32_t>(0x46554747 + 1).put<uint32_t>(3), {"bad.gguf", "magic"});
  expect_bad(Bytes().header(0, 0, 1), {"bad.gguf", "version 1"});
  expect_bad(Bytes().header(0, 0, 7), {"unsupported GGUF version 7"});
  expect_bad(Bytes().header(0, 0, 0x03000000), {"big-endian"});
  expect_bad(Bytes().put<uint16_t>(0x4747), {"magic", "truncated"});
  expect_error([] { parse_gguf({}, "empty.gguf"); }, kBad, {"empty.gguf", "empty"});
  expect_bad(Bytes().header(0, 1ull << 60), {"metadata count", "claims"});
  expect_bad(Bytes().header(1ull << 62, 0), {"tensor count", "claims"});
}

TEST(GgufErrors, Metadata) {
  // A key whose length runs past the file.
  expect_bad(Bytes().header(0, 1).put<uint64_t>(1ull << 62).zeros(8), {"metadata key #0", "limit 65535"});
  expect_bad(Bytes().header(0, 1).put<uint64_t>(60000).zeros(8), {"metadata key #0", "left"});
  expect_bad(Bytes().header(0, 1).put<uint64_t>(~0ull).zeros(8), {"metadata key #0"});
  expect_bad(Bytes().header(0, 1).str("").zeros(16), {"is empty"});
  // A string value longer than the file.
  expect_bad(Bytes().header(0, 1).str("k").put<uint32_t>(8).put<uint64_t>(1000).zeros(10),
             {"metadata key 'k'", "1000 bytes"});
  expect_bad(Bytes().header(0, 1).str("k").put<uint32_t>(13).zeros(8),
             {"metadata key 'k'", "unknown value type 13"});
  expect_bad(Bytes().header(0, 1).str("k").put<uint32_t>(7).put<uint8_t>(2), {"BOOL byte 2"});
  expect_bad(Bytes().header(0, 2).kv_u32("a.b", 1).kv_u32("a.b", 2), {"duplicate", "'a.b'"});
  // Arrays: element type unknown, a count far beyond the file, strings, nesting.
  expect_bad(Bytes().header(0, 1).str("k").put<uint32_t>(9).put<uint32_t>(42).put<uint64_t>(1),
             {"'k'", "unknown value type 42"});
  expect_bad(Bytes().header(0, 1).str("k").put<uint32_t>(9).put<uint32_t>(0).put<uint64_t>(1ull << 61),
             {"'k'", "UINT8"});
  expect_bad(Bytes().header(0, 1).str("k").put<uint32_t>(9).put<uint32_t>(12).put<uint64_t>(~0ull),
             {"'k'", "overflows"});
  expect_bad(Bytes().header(0, 1).str("k").put<uint32_t>(9).put<uint32_t>(8).put<uint64_t>(1ull << 40),
             {"'k'", "string array", "claims"});
  expect_bad(Bytes().header(0, 1).str("k").put<uint32_t>(9).put<uint32_t>(9).put<uint64_t>(1ull << 40),
             {"'k'", "nested array", "claims"});
  expect_bad(Bytes().header(0, 1).str("k").put<uint32_t>(9).put<uint32_t>(7).put<uint64_t>(2).put<uint16_t>(0x0201),
             {"'k'", "BOOL byte 2"});
  Bytes deep;
  deep.header(0, 1).str("k").put<uint32_t>(9);
  for (int i = 0; i < 20; ++i) deep.put<uint32_t>(9).put<uint64_t>(1);
  deep.put<uint32_t>(0).put<uint64_t>(0);
  expect_bad(deep, {"'k'", "nested deeper"});
  // general.alignment must be a UINT32 power of two.
  expect_bad(Bytes().header(0, 1).kv_u32("general.alignment", 48), {"general.alignment", "power of two"});
  expect_bad(Bytes().header(0, 1).kv_u32("general.alignment", 0), {"general.alignment", "power of two"});
  expect_bad(Bytes().header(0, 1).str("general.alignment").put<uint32_t>(0).put<uint8_t>(32),
             {"general.alignment", "UINT8"});
}

TEST(GgufErrors, Tensors) {
  auto one = [](std::vector<uint64_t> ne, uint32_t type, uint64_t off, size_t data) {
    Bytes f;
    f.header(1, 0).tensor("w", std::move(ne), type, off).pad().zeros(data);
    return f;
  };
  EXPECT_NO_THROW(parse_gguf(one({4, 2}, 0, 0, 32).b, "ok.gguf"));
  expect_bad(one({1, 1, 1, 1, 1}, 0, 0, 32), {"tensor 'w'", "n_dims 5"});
  expect_bad(one({4}, 99, 0, 32), {"tensor 'w'", "ggml type 99"});
  expect_bad(one({4}, 1000, 0, 32), {"tensor 'w'", "ggml type 1000"});
  // ggml types without kernels here are named (gguf-py's GGMLQuantizationType numbering).
  expect_bad(one({256}, 16, 0, 66), {"tensor 'w'", "ggml type 16 (IQ2_XXS) is not supported", "Q4_K"});
  expect_bad(one({256}, 35, 0, 66), {"ggml type 35 (TQ2_0)"});
  expect_bad(one({10}, 8, 0, 64), {"tensor 'w'", "Q8_0 block size 32"});
  expect_bad(one({4}, 0, 4, 64), {"tensor 'w'", "offset 4", "alignment 32"});
  expect_bad(one({4, 2}, 0, 0, 31), {"tensor 'w'", "past the end"});
  expect_bad(one({4}, 0, 1ull << 62, 32), {"tensor 'w'", "past the end"});
  expect_bad(one({1ull << 63, 1}, 0, 0, 32), {"tensor 'w'", "negative"});
  expect_bad(one({1ull << 32, 1ull << 32}, 0, 0, 32), {"tensor 'w'", "overflows"});
  expect_bad(one({1ull << 61}, 0, 0, 32), {"tensor 'w'", "overflows"});
  // A zero ne[0] makes 0 elements, but the outer dims still multiply into the view's rows (found
  // by gguf_fuzz at 650k executions: signed overflow in core::Tensor::rows).
  expect_bad(one({0, 138506403840ull, 83886080ull}, 0, 0, 32), {"tensor 'w'", "overflows"});
  EXPECT_NO_THROW(parse_gguf(one({0, 1ull << 20, 1ull << 20}, 0, 0, 32).b, "empty.gguf"));
  // Name length past the end.
  expect_bad(Bytes().header(1, 0).put<uint64_t>(1ull << 40).zeros(32), {"tensor info #0 name"});
  {
    Bytes f;
    f.header(2, 0).tensor("a", {8}, 0, 0).tensor("b", {8}, 0, 0).pad().zeros(64);
    expect_bad(f, {"'a'", "'b'", "overlap"});
  }
  {  // An empty tensor in between must not hide an overlap.
    Bytes f;
    f.header(3, 0).tensor("a", {16}, 0, 0).tensor("e", {0}, 0, 32).tensor("b", {8}, 0, 32).pad().zeros(96);
    expect_bad(f, {"'a'", "'b'", "overlap"});
  }
  {
    Bytes f;
    f.header(2, 0).tensor("a", {8}, 0, 0).tensor("a", {8}, 0, 32).pad().zeros(64);
    expect_bad(f, {"duplicate tensor name 'a'"});
  }
}

// Every proper prefix of a valid file that cuts into the header or tensor data is an error
// (never a crash); with the size unknown the header parser instead asks for more bytes.
TEST(GgufErrors, EveryTruncationAndIncrementalHeader) {
  auto full = test::read_bytes(test::fixture("gguf/all_types.gguf"));
  GgufHeader h = parse_gguf(full, "all_types.gguf");
  uint64_t needed_end = h.data_offset + h.data_bytes;
  for (size_t n = 0; n < full.size(); ++n) {
    std::span<const uint8_t> prefix(full.data(), n);
    if (n < needed_end) {
      expect_error([&] { parse_gguf(prefix, "cut.gguf"); }, kBad, {"cut.gguf"});
    } else {
      EXPECT_NO_THROW(parse_gguf(prefix, "cut.gguf"));
    }
    GgufHeaderParse p = parse_gguf_header(prefix, "remote.gguf");
    if (n < h.header_bytes) {
      ASSERT_FALSE(p.complete()) << n;
      EXPECT_GT(p.bytes_needed, n);
      EXPECT_LE(p.bytes_needed, h.header_bytes);
    } else {
      ASSERT_TRUE(p.complete()) << n;
      EXPECT_EQ(p.header->tensors.size(), h.tensors.size());
    }
    // Known total size: a short buffer still asks for bytes, never beyond the file.
    GgufHeaderParse q = parse_gguf_header(prefix, "remote.gguf", full.size());
    if (!q.complete()) {
      EXPECT_LE(q.bytes_needed, full.size());
    }
  }
  // The hub's loop: fetch what is asked until complete.
  size_t have = 0, rounds = 0;
  for (;;) {
    GgufHeaderParse p = parse_gguf_header({full.data(), have}, "remote.gguf", full.size());
    if (p.complete()) break;
    have = p.bytes_needed;
    ASSERT_LT(++rounds, 1000u);
  }
  EXPECT_EQ(have, h.header_bytes);
}

TEST(GgufErrors, RemoteHeaderWithKnownSizeRejectsImpossibleLengths) {
  Bytes f;
  f.header(0, 1).str("k").put<uint32_t>(8).put<uint64_t>(1ull << 40);
  // 1 TB string in a 100-byte file: error, not "need 1 TB".
  expect_error([&] { parse_gguf_header(f.b, "r.gguf", 100); }, kBad, {"r.gguf", "'k'"});
  GgufHeaderParse p = parse_gguf_header(f.b, "r.gguf");  // size unknown: ask
  EXPECT_EQ(p.bytes_needed, f.b.size() + (1ull << 40));
  // Fuzzer find: a prefix claiming 2^40 strings must not reserve 2^40 slots, just ask for more.
  Bytes s;
  s.header(0, 1).str("k").put<uint32_t>(9).put<uint32_t>(8).put<uint64_t>(1ull << 40).str("a");
  GgufHeaderParse ps = parse_gguf_header(s.b, "r.gguf");
  EXPECT_FALSE(ps.complete());
  EXPECT_GT(ps.bytes_needed, s.b.size());
}

TEST(GgufErrors, MissingFile) {
  expect_error([] { GgufFile::open("/nonexistent/dir/model.gguf"); }, ErrorCode::IO,
               {"/nonexistent/dir/model.gguf"});
}

std::vector<uint8_t> shard(uint16_t no, uint16_t count, const std::string& tensor) {
  GgufWriter w;
  if (no == 0) w.add_string("general.architecture", "llama");
  w.add_scalar<uint16_t>("split.no", no);
  w.add_scalar<uint16_t>("split.count", count);
  w.add_scalar<int32_t>("split.tensors.count", count);
  std::vector<float> d(4, float(no));
  w.add_tensor(tensor, DType::F32, {4}, {reinterpret_cast<uint8_t*>(d.data()), 16});
  return w.to_bytes();
}

TEST(GgufSplit, OpensAnyShardAndMerges) {
  for (int i = 1; i <= 3; ++i) {
    GgufFile f = GgufFile::open(test::fixture("gguf/split-0000" + std::to_string(i) + "-of-00003.gguf"));
    ASSERT_EQ(f.num_files(), 3u);
    ASSERT_EQ(f.tensors().size(), 3u);
    EXPECT_EQ(f.get_string("general.name"), "split test");
    EXPECT_EQ(f.get_u32("llama.block_count"), 1u);
    for (int k = 0; k < 3; ++k) {
      const GgufTensorInfo* t = f.find_tensor("blk.0.w" + std::to_string(k));
      ASSERT_NE(t, nullptr);
      EXPECT_EQ(t->file_idx, uint32_t(k));
      Tensor v = f.view(*t);
      EXPECT_EQ(v.shape_str(), "[2, 4]");
      EXPECT_EQ(v.ptr<float>()[7], k + 0.25f);
    }
  }
}

TEST(GgufSplit, Inconsistent) {
  test::TempDir tmp;
  auto name = [&](int i, int n) { return gguf_split_path(tmp.file("m"), i, n); };
  test::write_bytes(name(1, 2), shard(0, 2, "a"));
  expect_error([&] { GgufFile::open(name(1, 2)); }, ErrorCode::IO, {name(2, 2)});
  test::write_bytes(name(2, 2), shard(0, 2, "b"));
  expect_error([&] { GgufFile::open(name(1, 2)); }, kBad, {name(2, 2), "split.no is 0, expected 1"});
  test::write_bytes(name(2, 2), shard(1, 3, "b"));
  expect_error([&] { GgufFile::open(name(2, 2)); }, kBad, {name(2, 2), "split.count is 3"});
  test::write_bytes(name(2, 2), shard(1, 2, "a"));
  expect_error([&] { GgufFile::open(name(1, 2)); }, kBad, {"tensor 'a'", "earlier shard"});
  test::write_bytes(name(2, 2), shard(1, 2, "b"));
  EXPECT_EQ(GgufFile::open(name(2, 2)).tensors().size(), 2u);
  test::write_bytes(tmp.file("renamed.gguf"), shard(0, 2, "a"));
  expect_error([&] { GgufFile::open(tmp.file("renamed.gguf")); }, kBad, {"renamed.gguf", "shard 1 of a 2-file"});
  EXPECT_FALSE(parse_gguf_split_name("model-00003-of-00002.gguf"));
  EXPECT_FALSE(parse_gguf_split_name("model.gguf"));
  auto s = parse_gguf_split_name("/x/Qwen3-8B-Q4_K_M-00002-of-00005.gguf");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->prefix, "/x/Qwen3-8B-Q4_K_M");
  EXPECT_EQ(s->no, 2u);
  EXPECT_EQ(s->count, 5u);
}

}  // namespace
}  // namespace oxyd::loader
