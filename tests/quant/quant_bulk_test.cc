// Encoders on many blocks: 262144 values per format from an integer LCG (the same sequence as
// tools/gen_quant_goldens.py lcg_inputs), quantized here and compared with FNV-1a hashes of the
// oracle's bytes (gguf-py or ggml's C reference), 64 hashes per format so a mismatch is localized.
// The small goldens show which byte differs; this one catches rare paths (ties, clipping, grids).
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "core/quant.h"
#include "quant_golden_io.h"

namespace oxyd {
namespace {

struct BulkRecord {
  DType dtype;
  uint32_t num_elems, seed, blocks_per_hash, oracle;
  std::vector<uint64_t> hashes;
};

std::vector<BulkRecord> read_bulk() {
  const std::vector<uint8_t> b = test::read_file_bytes(test::quant_golden_dir() + "bulk.bin");
  size_t off = 0;
  auto take = [&](void* dst, size_t n) {
    if (off + n > b.size()) throw Error(ErrorCode::INVALID_ARGUMENT, "bulk.bin truncated");
    std::memcpy(dst, b.data() + off, n);
    off += n;
  };
  char magic[4];
  uint32_t version, num;
  take(magic, 4);
  take(&version, 4);
  take(&num, 4);
  if (std::memcmp(magic, "OXQB", 4) != 0 || version != 1) throw Error(ErrorCode::INVALID_ARGUMENT, "bulk.bin: bad header");
  std::vector<BulkRecord> out(num);
  for (auto& r : out) {
    uint32_t h[6];
    take(h, sizeof(h));
    r = {DType(h[0]), h[1], h[2], h[3], h[5], std::vector<uint64_t>(h[4])};
    take(r.hashes.data(), 8 * r.hashes.size());
  }
  return out;
}

// Same sequence as lcg_inputs() in the generator; every value is exact in float.
std::vector<float> lcg_inputs(uint64_t seed, int64_t n) {
  uint64_t state = seed;
  auto next = [&] {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return state >> 33;
  };
  std::vector<float> x(static_cast<size_t>(n));
  for (int64_t g = 0; g < n / 32; ++g) {
    uint64_t r = next();
    const int e = -int(r % 24), kind = int((r >> 8) % 6);
    for (int i = 0; i < 32; ++i) {
      r = next();
      int64_t v = int64_t(r & 0xFFFF) - 32768;
      if (kind == 1) v += 3 * 32768;
      else if (kind == 2) v = (r >> 16) % 8 == 0 ? v : 0;
      else if (kind == 3) v >>= 12;  // arithmetic shift, like Python's >>
      else if (kind == 4) v = -std::llabs(v);
      else if (kind == 5) v = 0;
      x[size_t(32 * g + i)] = float(std::ldexp(double(v), e - 15));
    }
  }
  return x;
}

uint64_t fnv1a64(const uint8_t* p, size_t n) {
  uint64_t h = 0xCBF29CE484222325ull;
  for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 0x100000001B3ull;
  return h;
}

TEST(QuantBulk, EveryEncoderMatchesOracleHashes) {
  const std::vector<BulkRecord> records = read_bulk();
  ASSERT_GE(records.size(), 17u);
  for (const auto& r : records) {
    SCOPED_TRACE(std::string(dtype_name(r.dtype)) + " vs " + test::oracle_name(r.oracle));
    const std::vector<float> x = lcg_inputs(r.seed, r.num_elems);
    std::vector<uint8_t> q(static_cast<size_t>(dtype_row_bytes(r.dtype, r.num_elems)));
    quantize_row(r.dtype, x.data(), q.data(), r.num_elems);
    const size_t chunk = size_t(r.blocks_per_hash) * size_t(dtype_block_bytes(r.dtype));
    ASSERT_EQ(r.hashes.size(), (q.size() + chunk - 1) / chunk);
    int bad = 0;
    for (size_t i = 0; i < r.hashes.size(); ++i) {
      const size_t begin = i * chunk, len = std::min(chunk, q.size() - begin);
      if (fnv1a64(q.data() + begin, len) != r.hashes[i] && ++bad <= 3)
        ADD_FAILURE() << "blocks " << i * r.blocks_per_hash << ".." << (i + 1) * r.blocks_per_hash - 1 << " differ";
    }
    EXPECT_EQ(bad, 0) << "of " << r.hashes.size() << " chunks";
  }
}

}  // namespace
}  // namespace oxyd
