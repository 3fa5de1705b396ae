// Readers for the golden files written by tools/gen_quant_goldens.py (layout in its docstring):
// tests/data/quant/{dequant,quant}_<DTYPE>.bin and matmul.bin.
#pragma once

#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "core/error.h"

namespace oxyd::test {

inline std::string quant_golden_dir() { return std::string(OXYD_SOURCE_DIR) + "/tests/data/quant/"; }

inline std::vector<uint8_t> read_file_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw Error(ErrorCode::NOT_FOUND, "cannot open golden " + path + " (run tools/gen_quant_goldens.py)");
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(f), {});
}

struct QuantGolden {
  DType dtype;
  uint32_t kind;    // 0: bytes → floats (dequantize), 1: floats → bytes (quantize)
  uint32_t oracle;  // 0 gguf-py, 1 ggml C reference, 2 ml_dtypes
  std::vector<uint8_t> bytes;
  std::vector<float> floats;
};

inline const char* oracle_name(uint32_t o) { return o == 0 ? "gguf-py" : o == 1 ? "ggml C" : "ml_dtypes"; }

inline QuantGolden read_quant_golden(const std::string& name) {
  const std::vector<uint8_t> b = read_file_bytes(quant_golden_dir() + name);
  uint32_t h[6];
  if (b.size() < 28 || std::memcmp(b.data(), "OXQG", 4) != 0)
    throw Error(ErrorCode::INVALID_ARGUMENT, name + ": not an OXQG golden");
  std::memcpy(h, b.data() + 4, sizeof(h));
  const uint32_t num_elems = h[3], num_bytes = h[4];
  if (h[0] != 1 || b.size() != 28 + size_t(num_bytes) + 4 * size_t(num_elems))
    throw Error(ErrorCode::INVALID_ARGUMENT, name + ": bad version or size");
  QuantGolden g{DType(h[1]), h[2], h[5], {}, std::vector<float>(num_elems)};
  const uint8_t* p = b.data() + 28;
  const uint8_t* bytes_at = h[2] == 0 ? p : p + 4 * size_t(num_elems);
  const uint8_t* floats_at = h[2] == 0 ? p + num_bytes : p;
  g.bytes.assign(bytes_at, bytes_at + num_bytes);
  std::memcpy(g.floats.data(), floats_at, 4 * size_t(num_elems));
  return g;
}

struct MatmulCase {
  DType dtype;
  int64_t m, n, k;
  std::vector<float> x;    // [m, k]
  std::vector<uint8_t> w;  // [n, k] in dtype
  std::vector<float> y;    // [m, n], float64 numpy on the oracle's dequantized w
};

inline std::vector<MatmulCase> read_matmul_cases() {
  const std::vector<uint8_t> b = read_file_bytes(quant_golden_dir() + "matmul.bin");
  size_t off = 0;
  auto u32 = [&] {
    if (off + 4 > b.size()) throw Error(ErrorCode::INVALID_ARGUMENT, "matmul.bin truncated");
    uint32_t v;
    std::memcpy(&v, b.data() + off, 4);
    off += 4;
    return v;
  };
  auto take = [&](void* dst, size_t n) {
    if (off + n > b.size()) throw Error(ErrorCode::INVALID_ARGUMENT, "matmul.bin truncated");
    std::memcpy(dst, b.data() + off, n);
    off += n;
  };
  if (b.size() < 8 || std::memcmp(b.data(), "OXQM", 4) != 0)
    throw Error(ErrorCode::INVALID_ARGUMENT, "matmul.bin: bad magic");
  off = 4;
  const uint32_t num_cases = u32();
  std::vector<MatmulCase> cases(num_cases);
  for (auto& c : cases) {
    c.dtype = DType(u32());
    c.m = u32();
    c.n = u32();
    c.k = u32();
    const uint32_t w_bytes = u32();
    c.x.resize(size_t(c.m * c.k));
    c.w.resize(w_bytes);
    c.y.resize(size_t(c.m * c.n));
    take(c.x.data(), 4 * c.x.size());
    take(c.w.data(), w_bytes);
    take(c.y.data(), 4 * c.y.size());
  }
  return cases;
}

}  // namespace oxyd::test
