// A copy of the tiny Qwen2 (tests/data/archs/qwen2, vocab 320 = its tokenizer's) whose vocab_size
// is padded past the tokenizer, as Qwen2/2.5 checkpoints pad 151,936 rows for 151,665 tokens.
// Padded row 320 + i is 3 × the row of golden greedy token gold[i % gold.size()] (tied embeddings:
// it is the lm_head row too), so on every golden step the raw argmax is a padded id while the
// logits of the real ids are those of the unpadded model: masked sampling must give the golden.
#pragma once

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace oxyd::test {

inline constexpr int32_t kPaddedRealVocab = 320;
inline constexpr int32_t kPaddedRows = 16;

/// Writes the padded model into `dir` (created) and returns the ids whose rows were copied.
inline std::vector<int32_t> write_padded_qwen2(const std::filesystem::path& dir, const std::string& source_dir) {
  namespace fs = std::filesystem;
  using json = nlohmann::json;
  const fs::path src = fs::path(source_dir) / "tests/data/archs/qwen2";
  fs::create_directories(dir);
  for (const char* f : {"tokenizer.json", "tokenizer_config.json", "generation_config.json"})
    fs::copy_file(src / f, dir / f, fs::copy_options::overwrite_existing);
  json cfg = json::parse(std::ifstream(src / "config.json"));
  cfg["vocab_size"] = kPaddedRealVocab + kPaddedRows;
  std::ofstream(dir / "config.json") << cfg.dump(2);

  const json gold = json::parse(std::ifstream(src / "goldens.json"));
  std::vector<int32_t> ids;
  std::set<int32_t> seen;
  for (const auto& g : gold["greedy"])
    for (int32_t t : g.get<std::vector<int32_t>>())
      if (seen.insert(t).second) ids.push_back(t);

  std::ifstream in(src / "model.safetensors", std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string file = ss.str();
  uint64_t n = 0;
  std::memcpy(&n, file.data(), 8);
  json h = json::parse(file.substr(8, n));
  const std::string data = file.substr(8 + n);
  const std::string name = "model.embed_tokens.weight";
  const int64_t hidden = h[name]["shape"][1].get<int64_t>();
  const uint64_t row_bytes = uint64_t(hidden) * 4, pad_bytes = row_bytes * kPaddedRows;
  const uint64_t e0 = h[name]["data_offsets"][0], e1 = h[name]["data_offsets"][1];
  std::string padded;
  for (int32_t i = 0; i < kPaddedRows; ++i) {
    std::vector<float> row(static_cast<size_t>(hidden), 0.0f);
    std::memcpy(row.data(), data.data() + e0 + row_bytes * uint64_t(ids[size_t(i) % ids.size()]), row_bytes);
    for (float& x : row) x *= 3.0f;
    padded.append(reinterpret_cast<const char*>(row.data()), row_bytes);
  }
  for (auto& [k, v] : h.items()) {
    if (k == "__metadata__") continue;
    if (k == name) {
      v["shape"][0] = kPaddedRealVocab + kPaddedRows;
      v["data_offsets"][1] = e1 + pad_bytes;
    } else if (v["data_offsets"][0].get<uint64_t>() >= e1) {
      v["data_offsets"][0] = v["data_offsets"][0].get<uint64_t>() + pad_bytes;
      v["data_offsets"][1] = v["data_offsets"][1].get<uint64_t>() + pad_bytes;
    }
  }
  std::string header = h.dump();
  header.append((8 - header.size() % 8) % 8, ' ');
  const uint64_t hn = header.size();
  std::ofstream out(dir / "model.safetensors", std::ios::binary);
  out.write(reinterpret_cast<const char*>(&hn), 8);
  out << header << data.substr(0, e1) << padded << data.substr(e1);
  return ids;
}

}  // namespace oxyd::test
