// Tokenizer throughput: encode ~1 MB of mixed text (the golden corpus, concatenated and repeated)
// on one thread, best of 3, per vocabulary; decode throughput on the resulting ids.
// Usage: tokenizer_bench [repo_root]  (bench/tokenizer_bench.py runs it next to
// Hugging Face tokenizers on the same text and prints the ratio).
#include <chrono>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tokenizer/tokenizer.h"
#include "tokenizer/unicode.h"

using oxyd::tokenizer::Tokenizer;

static std::string bench_text(const std::string& root) {
  std::ifstream f(root + "/tests/data/tokenizer/corpus.jsonl");
  std::string line, all;
  std::vector<std::string> parts;
  while (std::getline(f, line)) {
    auto j = nlohmann::json::parse(line);
    if (j.contains("t") && j["t"].get<std::string>().size() < 4096) parts.push_back(j["t"].get<std::string>());
  }
  while (all.size() < (1u << 20))
    for (const auto& p : parts) all += p + "\n";
  return all;
}

int main(int argc, char** argv) {
  const std::string root = argc > 1 ? argv[1] : ".";
  const std::string text = bench_text(root);
  const char* vocabs[] = {"qwen3", "llama3_1", "gemma3", "gptoss", "llama2", "deepseek_v3", "minilm"};
  std::printf("text: %zu bytes\n", text.size());
  std::printf("%-12s %10s %12s %12s %12s\n", "vocab", "tokens", "encode MB/s", "Mtok/s", "decode MB/s");
  for (const char* v : vocabs) {
    std::string dir = std::string(v) == "minilm" ? root + "/tests/data/tokenizer/minilm"
                                                 : root + "/tests/data/tokenizers/" + v;
    auto tok = Tokenizer::from_hf_files(dir + "/tokenizer.json", dir + "/tokenizer_config.json");
    double best = 1e9, best_dec = 1e9;
    std::vector<int32_t> ids;
    for (int rep = 0; rep < 3; ++rep) {
      auto t0 = std::chrono::steady_clock::now();
      ids = tok->encode(text, false, false);
      auto t1 = std::chrono::steady_clock::now();
      std::string back = tok->decode(ids);
      auto t2 = std::chrono::steady_clock::now();
      best = std::min(best, std::chrono::duration<double>(t1 - t0).count());
      best_dec = std::min(best_dec, std::chrono::duration<double>(t2 - t1).count());
    }
    std::printf("%-12s %10zu %12.2f %12.3f %12.2f\n", v, ids.size(), text.size() / best / 1e6,
                ids.size() / best / 1e6, text.size() / best_dec / 1e6);
    std::printf("RESULT %s %zu %.6f\n", v, ids.size(), best);
    std::fflush(stdout);
  }
  return 0;
}
