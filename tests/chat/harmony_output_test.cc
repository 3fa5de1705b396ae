// chat::HarmonyFinalText against openai-harmony's parser (tests/data/chat/harmony_completions.jsonl,
// tools/gen_harmony_goldens.py): the final-channel text of each generated turn, fed whole, one byte
// at a time and in random pieces, with and without its closing stop token (the engine gives a stop
// token no text).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <cstring>
#include <random>

#include <nlohmann/json.hpp>

#include "chat/harmony_output.h"

namespace {

using oxyd::chat::HarmonyFinalText;

std::string run(const std::string& text, const std::vector<size_t>& cuts) {
  HarmonyFinalText f;
  std::string out;
  size_t at = 0;
  for (size_t c : cuts) {
    out += f.feed(text.substr(at, c - at));
    at = c;
  }
  out += f.feed(text.substr(at));
  return out + f.finish();
}

TEST(HarmonyFinalText, MatchesHarmonyParser) {
  std::ifstream in(std::filesystem::path(OXYD_SOURCE_DIR) / "tests/data/chat/harmony_completions.jsonl");
  std::string line;
  std::mt19937 rng(7);
  int n = 0;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    const auto g = nlohmann::json::parse(line);
    const std::string full = g["completion"], want = g["final"];
    std::vector<std::string> texts = {full};
    for (const char* stop : {"<|return|>", "<|call|>"})
      if (full.size() > strlen(stop) && full.compare(full.size() - strlen(stop), strlen(stop), stop) == 0)
        texts.push_back(full.substr(0, full.size() - strlen(stop)));
    for (const std::string& t : texts) {
      EXPECT_EQ(run(t, {}), want) << t;
      std::vector<size_t> bytes;
      for (size_t i = 1; i < t.size(); ++i) bytes.push_back(i);
      EXPECT_EQ(run(t, bytes), want) << "byte by byte: " << t;
      for (int trial = 0; trial < 20; ++trial) {
        std::vector<size_t> cuts;
        for (size_t i = 1; i < t.size(); ++i)
          if (rng() % 4 == 0) cuts.push_back(i);
        EXPECT_EQ(run(t, cuts), want) << "random pieces: " << t;
      }
    }
    ++n;
  }
  EXPECT_GE(n, 6);
}

TEST(HarmonyFinalText, TextWithoutHarmonyIsKept) {
  // A model that never opens a message (no harmony at all) keeps its text rather than losing it.
  EXPECT_EQ(run("just plain words <b>", {5, 17}), "just plain words <b>");
  EXPECT_EQ(run("", {}), "");
}

}  // namespace
