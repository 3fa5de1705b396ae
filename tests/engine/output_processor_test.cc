// OutputProcessor with the real Qwen3 tokenizer (tests/data/tokenizers): streamed text, fed one token per
// step, concatenates to HF-equivalent decode(all ids) cut by the stop-string oracle, for stop
// strings that span tokens and multi-byte characters; EOS adds no text; a match asks for abort.
#include <gtest/gtest.h>

#include "engine/output_processor.h"
#include "tokenizer/tokenizer.h"

namespace oxyd::engine {
namespace {

const tokenizer::Tokenizer& qwen3() {
  static const auto tok = tokenizer::Tokenizer::from_hf_files(
      std::string(OXYD_TEST_DATA_DIR) + "/tokenizers/qwen3/tokenizer.json",
      std::string(OXYD_TEST_DATA_DIR) + "/tokenizers/qwen3/tokenizer_config.json");
  return *tok;
}

std::string cut(const std::string& text, const std::vector<std::string>& stops) {
  for (size_t len = 1; len <= text.size(); ++len) {
    size_t c = std::string::npos;
    for (const auto& s : stops) c = std::min(c, text.substr(0, len).find(s));
    if (c != std::string::npos) return text.substr(0, c);
  }
  return text;
}

struct Streamed {
  std::string text;
  FinishReason reason = FinishReason::NONE;
  bool abort = false;
};

Streamed stream(const std::vector<int32_t>& ids, const std::vector<std::string>& stops, FinishReason last) {
  OutputProcessor p(qwen3(), stops);
  Streamed s;
  for (size_t i = 0; i < ids.size() && !p.finished(); ++i) {
    RequestOutput o{1, {sample::SampleResult{ids[i], 0, {}}}, i + 1 == ids.size() ? last : FinishReason::NONE, 0, 0};
    const TextDelta d = p.process(o);
    s.text += d.text;
    s.reason = d.finish_reason;
    s.abort = s.abort || d.abort_engine;
  }
  return s;
}

TEST(OutputProcessor, StopStringsAcrossTokensAgainstOracle) {
  const std::string text = "Hello, world! The answer is 42.\n\nÜbergrößenträger 🙂🙂 end<|im_end|> tail";
  const auto ids = qwen3().encode(text, false, false);
  const std::string full = qwen3().decode(ids, true);
  for (const std::vector<std::string>& stops :
       std::vector<std::vector<std::string>>{{}, {"answer is"}, {"ößen"}, {"🙂"}, {"\n\n"}, {"d!", "42"}, {"zzz"}, {"l"}}) {
    const Streamed s = stream(ids, stops, FinishReason::LENGTH);
    EXPECT_EQ(s.text, cut(full, stops)) << ::testing::PrintToString(stops);
    const bool hit = cut(full, stops).size() < full.size();
    EXPECT_EQ(s.reason, hit ? FinishReason::STOP : FinishReason::LENGTH);
    EXPECT_EQ(s.abort, hit);  // every match here happens before the last token
  }
}

TEST(OutputProcessor, EosAddsNoText) {
  auto ids = qwen3().encode("Short reply.", false, false);
  ids.push_back(qwen3().eos_id() >= 0 ? qwen3().eos_id() : qwen3().token_to_id("<|im_end|>"));
  const Streamed s = stream(ids, {}, FinishReason::STOP);
  EXPECT_EQ(s.text, "Short reply.");
  EXPECT_EQ(s.reason, FinishReason::STOP);
  EXPECT_FALSE(s.abort);
}

}  // namespace
}  // namespace oxyd::engine
