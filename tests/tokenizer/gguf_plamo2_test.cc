// GGUF tokenizer model "plamo2" (PLaMo 2): tests/data/tokenizer/gguf/plamo2.gguf (a vocabulary
// in PLaMo 2's shape, made by tools/gen_plamo2_tokenizer_goldens.py: no PLaMo 2 tokenizer.jsonl is
// available from a package registry) against llama.cpp's own tokenizer on that file
// (llama-cpp-python, vocab_only), every valid-UTF-8 corpus text, as user text, with special
// handling, and decoding (plamo2_llamacpp.json). Before: the file was refused.
#include "golden_util.h"
#include "loader/gguf.h"
#include "tokenizer/plamo2.h"

namespace oxyd::tokenizer::testing {
namespace {

TEST(GgufPlamo2, MatchesLlamaCppOnCorpus) {
  loader::GgufFile f = loader::GgufFile::open(data_dir() + "/gguf/plamo2.gguf");
  ASSERT_EQ(f.get_string("tokenizer.ggml.model"), "plamo2");
  expect_llamacpp_corpus(*Tokenizer::from_gguf(f), "plamo2_llamacpp.json", /*decode=*/true);
}

std::vector<std::string> byte_names() {
  std::vector<std::string> v;
  char name[8];
  for (int b = 0; b < 256; ++b) std::snprintf(name, sizeof(name), "<0x%02X>", b), v.push_back(name);
  return v;
}

TEST(GgufPlamo2, TiesGoToTheLongerPieceAndUnknownsToBytes) {
  std::vector<std::string> toks = byte_names();
  for (const char* t : {"a", "b", "ab", "abc", "c"}) toks.push_back(t);  // ids 256..260
  std::vector<float> scores(toks.size(), 0.0f);
  scores[256] = scores[257] = scores[260] = -1.0f;
  scores[258] = -2.0f;  // "ab" ties "a"+"b": the longer wins
  scores[259] = -5.0f;  // "abc" loses to "ab"+"c" (-3)
  std::vector<bool> is_byte(toks.size(), false);
  for (int b = 0; b < 256; ++b) is_byte[size_t(b)] = true;
  Plamo2 m(toks, scores, is_byte, "test");
  std::vector<int32_t> ids;
  m.tokenize("abc\xC3\xA9", ids);  // é has no piece: its two UTF-8 bytes
  EXPECT_EQ(ids, (std::vector<int32_t>{258, 260, 0xC3, 0xA9}));
  ids.clear();
  m.tokenize("\xEF\xBB\xBF" "a", ids);  // a leading BOM is dropped
  EXPECT_EQ(ids, (std::vector<int32_t>{256}));
  is_byte[7] = false;
  EXPECT_THROW(Plamo2(toks, scores, is_byte, "test"), Error);  // every byte token is required
}

}  // namespace
}  // namespace oxyd::tokenizer::testing
