#include "hub_test_util.h"

#include <algorithm>
#include <random>

#include "loader/gguf_writer.h"

namespace oxyd::hub::testing {

std::string random_bytes(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::string s(n, '\0');
  for (auto& c : s) c = char(rng() & 0xff);
  return s;
}

std::string tiny_gguf(int64_t bytes, uint32_t seed, const std::string& arch) {
  loader::GgufWriter w;
  w.add_string("general.architecture", arch);
  w.add_string("general.name", "tiny");
  w.add_scalar<uint32_t>(arch + ".block_count", 1);
  w.add_scalar<uint32_t>(arch + ".context_length", 128);
  w.add_scalar<uint32_t>(arch + ".embedding_length", 16);
  w.add_scalar<uint32_t>(arch + ".attention.head_count", 2);
  w.add_scalar<uint32_t>(arch + ".attention.head_count_kv", 1);
  w.add_scalar<uint32_t>(arch + ".feed_forward_length", 32);
  // A consistent header (model validation checks it): F32 embedding rows = vocab_size, 64 B a row.
  int64_t rows = std::max<int64_t>(1, (bytes - 512) / 64);
  w.add_scalar<uint32_t>(arch + ".vocab_size", uint32_t(rows));
  std::string data = random_bytes(size_t(rows * 64), seed);
  w.add_tensor("token_embd.weight", DType::F32, {rows, 16},
               std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(data.data()), data.size()));
  auto b = w.to_bytes();
  return std::string(b.begin(), b.end());
}

std::vector<std::string> all_files(const std::string& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (std::filesystem::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    if (!it->is_directory() || it->is_symlink())
      out.push_back(std::filesystem::relative(it->path(), dir).generic_string());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace oxyd::hub::testing
