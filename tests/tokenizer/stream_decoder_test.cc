// StreamDecoder against the oracle: streaming the golden ids one token at a time must reproduce
// Hugging Face's full decode exactly (no dropped/doubled spaces, no broken UTF-8 in any chunk).
#include "golden_util.h"
#include "tokenizer/stream_decoder.h"

namespace oxyd::tokenizer::testing {
namespace {

class StreamGolden : public ::testing::TestWithParam<std::string> {};

TEST_P(StreamGolden, ConcatenatedChunksEqualFullDecode) {
  const Tokenizer& tok = hf_tokenizer(GetParam());
  auto golden = load_golden(GetParam());
  size_t bad = 0, chunks = 0;
  for (size_t i = 0; i < golden.size(); ++i) {
    for (int pass = 0; pass < 2; ++pass) {
      if (pass == 1 && !golden[i].full_ids) continue;
      const auto& ids = pass == 0 ? golden[i].plain_ids : *golden[i].full_ids;
      const std::string& want = pass == 0 ? golden[i].plain_text : golden[i].full_text;
      StreamDecoder sd(tok, pass == 1);
      std::string got;
      bool chunks_ok = true;
      for (int32_t id : ids) {
        std::string c = sd.step(id);
        chunks_ok &= is_valid_utf8(c);
        chunks += !c.empty();
        got += c;
      }
      got += sd.flush();
      if ((got != want || !chunks_ok) && ++bad <= 5) {
        ADD_FAILURE() << GetParam() << " line " << i << " pass " << pass << "\n got  " << jdump(got).substr(0, 300)
                      << "\n want " << jdump(want).substr(0, 300);
      }
    }
  }
  EXPECT_EQ(bad, 0u);
  EXPECT_GT(chunks, 1000u);
}

INSTANTIATE_TEST_SUITE_P(Vocabs, StreamGolden, ::testing::ValuesIn(all_vocabs()),
                         [](const auto& info) { return info.param; });

TEST(StreamDecoder, HoldsBackSplitUtf8AndSentencePieceSpaces) {
  // Llama 2: "é" (C3 A9) as two byte-fallback tokens, after a word; the space before "world"
  // comes from ▁ of a later token and must survive the chunk boundary.
  const Tokenizer& tok = hf_tokenizer("llama2");
  std::vector<int32_t> ids = {tok.token_to_id("▁the"), tok.token_to_id("<0xC3>"),
                              tok.token_to_id("<0xA9>"), tok.token_to_id("▁world")};
  for (int32_t id : ids) ASSERT_GE(id, 0);
  StreamDecoder sd(tok);
  EXPECT_EQ(sd.step(ids[0]), "the");
  EXPECT_EQ(sd.step(ids[1]), "");  // half a character: held back
  EXPECT_EQ(sd.step(ids[2]), "\xC3\xA9");
  EXPECT_EQ(sd.step(ids[3]), " world");
  EXPECT_EQ(sd.flush(), "");
  // A dangling partial character is released by flush() as U+FFFD (what decode() gives).
  StreamDecoder sd2(tok);
  EXPECT_EQ(sd2.step(ids[1]), "");
  EXPECT_EQ(sd2.flush(), "\xEF\xBF\xBD");
}

TEST(StreamDecoder, PrimedWithPromptTailKeepsTheFirstSpace) {
  // HF: decode(["▁the", "▁world"]) = "the world", decode(["▁the"]) = "the": the generated text
  // after a prompt ending in "▁the" is " world". Unprimed, the Strip decoder eats that space.
  const Tokenizer& tok = hf_tokenizer("llama2");
  const std::vector<int32_t> ctx = {tok.token_to_id("▁the")};
  const int32_t world = tok.token_to_id("▁world");
  StreamDecoder plain(tok);
  EXPECT_EQ(plain.step(world) + plain.flush(), "world");
  StreamDecoder primed(tok);
  primed.prime(ctx);
  EXPECT_EQ(primed.step(world), " world");
  EXPECT_EQ(primed.flush(), "");
}

}  // namespace
}  // namespace oxyd::tokenizer::testing
