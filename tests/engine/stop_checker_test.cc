// StopChecker against a brute-force oracle: the text fed byte by byte, cut before the earliest
// stop string in the shortest prefix that holds one, for random texts, stop sets and chunkings.
#include <gtest/gtest.h>

#include <random>

#include "engine/stop_checker.h"

namespace oxyd::engine {
namespace {

// Generation stops at the first prefix of the text that contains a stop string; the output is
// that prefix cut before the earliest-starting stop string inside it.
std::string oracle(const std::string& text, const std::vector<std::string>& stops) {
  for (size_t len = 1; len <= text.size(); ++len) {
    const std::string prefix = text.substr(0, len);
    size_t cut = std::string::npos;
    for (const auto& s : stops)
      if (!s.empty()) cut = std::min(cut, prefix.find(s));
    if (cut != std::string::npos) return text.substr(0, cut);
  }
  return text;
}

TEST(StopChecker, SpansChunksAndNeverLeaks) {
  StopChecker c({"</end>", "STOP"});
  std::string out;
  for (const char* d : {"Hello <", "/e", "nd> after"}) out += c.append(d);
  EXPECT_EQ(out, "Hello ");
  EXPECT_TRUE(c.stopped());
  EXPECT_EQ(c.matched(), "</end>");
  StopChecker h({"</end>"});
  EXPECT_EQ(h.append("a </e"), "a ");  // "</e" held back
  EXPECT_EQ(h.append("x"), "</ex");    // not a stop after all
  EXPECT_EQ(h.append(" <"), " ");
  EXPECT_EQ(h.flush(), "<");
  StopChecker u({"é!"});
  EXPECT_EQ(u.append("café"), "caf");
  EXPECT_EQ(u.append("!"), "");
}

TEST(StopChecker, RandomAgainstOracle) {
  std::mt19937 rng(3);
  for (int iter = 0; iter < 3000; ++iter) {
    std::string text;
    for (int n = int(rng() % 40); n > 0; --n) text += char('a' + rng() % 3);
    std::vector<std::string> stops;
    for (int n = int(rng() % 4); n > 0; --n) {
      std::string s;
      for (int k = int(1 + rng() % 5); k > 0; --k) s += char('a' + rng() % 3);
      stops.push_back(s);
    }
    StopChecker c(stops);
    std::string out;
    size_t at = 0;
    while (at < text.size() && !c.stopped()) {
      const size_t n = std::min(text.size() - at, size_t(1 + rng() % 4));
      const std::string piece = c.append(text.substr(at, n));
      out += piece;
      at += n;
    }
    out += c.flush();
    ASSERT_EQ(out, oracle(text, stops)) << "text " << text << " iter " << iter << " stops " << ::testing::PrintToString(stops);
    ASSERT_EQ(c.stopped(), oracle(text, stops).size() < text.size());
  }
}

}  // namespace
}  // namespace oxyd::engine
