// GGUF tokenizer model "t5" (llama.cpp's UGM) with a precompiled normalization charsmap:
// tests/data/tokenizer/gguf/ugm.gguf (a SentencePiece Unigram of 3,000 pieces trained with the
// nmt_nfkc rule on the corpus, written as llama.cpp's converter writes T5 vocabularies) against
// llama.cpp's own tokenizer on that file (llama-cpp-python, vocab_only), every valid-UTF-8 corpus
// text, with and without special handling (ugm_llamacpp.json from tools/gen_ugm_tokenizer_goldens.py).
// Before: a file with a charsmap was refused; without one, pieces were split at spaces (HF's
// Metaspace), which llama.cpp does not do.
#include "golden_util.h"
#include "loader/gguf.h"
#include "tokenizer/charsmap.h"

namespace oxyd::tokenizer::testing {
namespace {

TEST(GgufUgm, MatchesLlamaCppOnCorpus) {
  loader::GgufFile f = loader::GgufFile::open(data_dir() + "/gguf/ugm.gguf");
  ASSERT_EQ(f.get_string("tokenizer.ggml.model"), "t5");
  ASSERT_GT(f.find("tokenizer.ggml.precompiled_charsmap")->size(), 1000u);
  // With specials llama.cpp appends </s> (add_eos_token, id 1).
  expect_llamacpp_corpus(*Tokenizer::from_gguf(f), "ugm_llamacpp.json", /*decode=*/false, {1});
}

TEST(GgufUgm, WhitespaceRules) {
  const std::string s = "\xE2\x96\x81";
  EXPECT_EQ(ugm_whitespace("  a  b ", true, true), s + "a" + s + "b");
  EXPECT_EQ(ugm_whitespace("  a  b ", false, true), s + "a" + s + "b");
  EXPECT_EQ(ugm_whitespace(" a b", true, false), s + s + "a" + s + "b");
  EXPECT_EQ(ugm_whitespace("a", false, false), "a");
  EXPECT_EQ(ugm_whitespace("   ", true, true), "");
}

TEST(GgufUgm, MalformedCharsmapIsRefused) {
  EXPECT_THROW(CharsMap(std::string_view("\x01\x00", 2), "x"), Error);
  const char big[8] = {0x40, 0, 0, 0, 0, 0, 0, 0};  // trie of 64 bytes in an 8-byte blob
  EXPECT_THROW(CharsMap(std::string_view(big, 8), "x"), Error);
}

}  // namespace
}  // namespace oxyd::tokenizer::testing
