// Issue 28: a tokenizer.json whose normalizer, pre_tokenizer or decoder is a Sequence nested
// 30,000 deep used to overflow the stack (and 20,000 deep took 5.4 GB: the JSON paths grew with
// the depth at every level). Now the parse stops at the JSON depth limit, fast and small.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <chrono>

#include "../loader/hostile_inputs.h"
#include "core/error.h"
#include "core/json_parse.h"
#include "tokenizer/tokenizer.h"

namespace oxyd::tokenizer {
namespace {

namespace hostile = loader::test::hostile;

int64_t max_rss_kb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}

TEST(HostileTokenizer, NestedSequencesAreRefusedQuickly) {
  for (const char* component : {"normalizer", "pre_tokenizer", "decoder"}) {
    SCOPED_TRACE(component);
    // Control: a few levels load (each level is an object and an array).
    EXPECT_NO_THROW(Tokenizer::from_hf_json(hostile::nested_sequence_tokenizer(component, 5), "", "ok/tokenizer.json"));
    for (int64_t depth : {20'000, 30'000}) {
      const std::string text = hostile::nested_sequence_tokenizer(component, depth);
      const int64_t rss0 = max_rss_kb();
      const auto t0 = std::chrono::steady_clock::now();
      std::string msg = "(loaded)";
      try {
        Tokenizer::from_hf_json(text, "", "evil/tokenizer.json");
      } catch (const Error& e) {
        EXPECT_EQ(e.code(), ErrorCode::INVALID_ARGUMENT);
        msg = e.what();
      }
      EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 2.0);
      EXPECT_LT(max_rss_kb() - rss0, 256 * 1024) << "peak RSS grew by more than 256 MB";
      EXPECT_NE(msg.find("evil/tokenizer.json"), std::string::npos) << msg;
      EXPECT_NE(msg.find("nested deeper than " + std::to_string(kMaxJsonDepth)), std::string::npos) << msg;
    }
  }
}

TEST(HostileTokenizer, NestedTokenizerConfigIsRefused) {
  const std::string ok = hostile::nested_sequence_tokenizer("decoder", 1);
  try {
    Tokenizer::from_hf_json(ok, "{\"bos_token\":" + hostile::nested_array(40'000) + "}", "m/tokenizer.json");
    ADD_FAILURE() << "loaded";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("m/tokenizer_config.json"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("nested deeper"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace oxyd::tokenizer
