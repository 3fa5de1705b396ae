// GGUF tokenizer model "rwkv": tests/data/tokenizer/gguf/rwkv.gguf (the RWKV "world" vocabulary,
// 65,530 tokens, from the PyPI package rwkv 0.8.32, Apache-2.0, written as llama.cpp's converter
// writes it) against llama.cpp's own tokenizer on that file (llama-cpp-python, vocab_only), every
// valid-UTF-8 corpus text, as user text and with special handling, and decoding
// (rwkv_llamacpp.json from tools/gen_rwkv_tokenizer_goldens.py). Before: the file was refused.
#include "golden_util.h"
#include "loader/gguf.h"
#include "tokenizer/longest_match.h"

namespace oxyd::tokenizer::testing {
namespace {

TEST(GgufRwkv, MatchesLlamaCppOnCorpus) {
  loader::GgufFile f = loader::GgufFile::open(data_dir() + "/gguf/rwkv.gguf");
  ASSERT_EQ(f.get_string("tokenizer.ggml.model"), "rwkv");
  expect_llamacpp_corpus(*Tokenizer::from_gguf(f), "rwkv_llamacpp.json", /*decode=*/true);
}

TEST(GgufRwkv, UnescapesPythonBytesRepr) {
  EXPECT_EQ(unescape_rwkv_token("a\\tb\\nc\\rd"), "a\tb\nc\rd");
  EXPECT_EQ(unescape_rwkv_token("\\xe4\\xb8\\x80"), "\xe4\xb8\x80");
  EXPECT_EQ(unescape_rwkv_token("\\\\ \\' x"), "\\ ' x");
}

TEST(GgufRwkv, LongestMatchIsGreedy) {
  LongestMatch m({"a", "b", "ab", "abc", "c"}, -1);
  std::vector<int32_t> ids;
  m.tokenize("abcab", ids);
  EXPECT_EQ(ids, (std::vector<int32_t>{3, 2}));
  ids.clear();
  m.tokenize("abab", ids);  // "abc" is not there: the longest found so far, "ab"
  EXPECT_EQ(ids, (std::vector<int32_t>{2, 2}));
  ids.clear();
  m.tokenize("xa", ids);  // no token starts with x and no unknown id: skipped
  EXPECT_EQ(ids, (std::vector<int32_t>{0}));
}

}  // namespace
}  // namespace oxyd::tokenizer::testing
