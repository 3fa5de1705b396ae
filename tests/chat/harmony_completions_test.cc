// The harmony output parser (chat/output_parsers.h) on generated assistant turns checked by
// openai-harmony (tests/data/chat/harmony_completions.jsonl, tools/gen_harmony_goldens.py): the
// content is the final channel's text and the analysis channel is reasoning, whether the text is
// fed whole, one byte at a time or in random pieces, with and without its closing stop token (the
// engine gives a stop token no text). What the CLI REPL shows for a harmony model.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

#include <nlohmann/json.hpp>

#include "chat/output_parser.h"

namespace oxyd::chat {
namespace {

std::string content(const std::string& text, const std::vector<size_t>& cuts) {
  OutputFormat f;
  f.tools = ToolSyntax::HARMONY;
  auto p = make_output_parser(f, {});
  OutputEvents ev;
  size_t at = 0;
  auto add = [&](OutputEvents e) { ev.insert(ev.end(), e.begin(), e.end()); };
  for (size_t c : cuts) {
    add(p->feed(text.substr(at, c - at)));
    at = c;
  }
  add(p->feed(text.substr(at)));
  add(p->finish());
  std::string out;
  for (const OutputEvent& e : ev)
    if (e.kind == OutputEvent::Kind::CONTENT) out += e.text;
  return out;
}

TEST(HarmonyCompletions, ContentIsTheFinalChannel) {
  std::ifstream in(std::filesystem::path(OXYD_SOURCE_DIR) / "tests/data/chat/harmony_completions.jsonl");
  std::string line;
  std::mt19937 rng(7);
  int n = 0;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    const auto g = nlohmann::json::parse(line);
    const std::string full = g["completion"];
    std::string want = g["final"];
    // A commentary message without a recipient is a preamble: content too (OpenAI shows it).
    if (full.find("<|channel|>commentary<|message|>") != std::string::npos) {
      const size_t b = full.find("<|channel|>commentary<|message|>") + 32;
      want = full.substr(b, full.find("<|end|>", b) - b) + want;
    }
    std::vector<std::string> texts = {full};
    for (const char* stop : {"<|return|>", "<|call|>"})
      if (full.size() > strlen(stop) && full.compare(full.size() - strlen(stop), strlen(stop), stop) == 0)
        texts.push_back(full.substr(0, full.size() - strlen(stop)));
    for (const std::string& t : texts) {
      EXPECT_EQ(content(t, {}), want) << t;
      std::vector<size_t> bytes;
      for (size_t i = 1; i < t.size(); ++i) bytes.push_back(i);
      EXPECT_EQ(content(t, bytes), want) << "byte by byte: " << t;
      for (int trial = 0; trial < 20; ++trial) {
        std::vector<size_t> cuts;
        for (size_t i = 1; i < t.size(); ++i)
          if (rng() % 4 == 0) cuts.push_back(i);
        EXPECT_EQ(content(t, cuts), want) << "random pieces: " << t;
      }
    }
    ++n;
  }
  EXPECT_GE(n, 6);
}

TEST(HarmonyCompletions, TextWithoutHarmonyIsKept) {
  // A model that never opens a message (no harmony at all) keeps its text rather than losing it.
  EXPECT_EQ(content("just plain words <b>", {5, 17}), "just plain words <b>");
  EXPECT_EQ(content("", {}), "");
}

}  // namespace
}  // namespace oxyd::chat
