// GGUF tokenizer model "t5" (llama.cpp's UGM) with a precompiled normalization charsmap:
// tests/data/tokenizer/gguf/ugm.gguf (a SentencePiece Unigram of 3,000 pieces trained with the
// nmt_nfkc rule on the corpus, written as llama.cpp's converter writes T5 vocabularies) against
// llama.cpp's own tokenizer on that file (llama-cpp-python, vocab_only), every valid-UTF-8 corpus
// text, with and without special handling (ugm_llamacpp.json from tools/gen_ugm_tokenizer_goldens.py).
// Before: a file with a charsmap was refused; without one, pieces were split at spaces (HF's
// Metaspace), which llama.cpp does not do.
#include <fstream>

#include <nlohmann/json.hpp>

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

// XLM-R's kind of vocabulary (tests/data/archs/xlmr: a SentencePiece Unigram with fairseq's ids,
// tools/gen_tiny_embedders.py): transformers' ids of a few texts (normalization, whitespace runs,
// unknown characters, the empty text), from its tokenizer.json and from the bert GGUF llama.cpp's
// converter made of sentencepiece.bpe.model ("t5"); the generator checked llama.cpp gives them too.
TEST(GgufUgm, XlmRobertaVocabularyMatchesTransformersAndLlamaCpp) {
  const std::string dir = std::string(OXYD_SOURCE_DIR) + "/tests/data/archs/xlmr";
  std::ifstream in(dir + "/gguf_goldens.json");
  const nlohmann::json g = nlohmann::json::parse(in);
  loader::GgufFile f = loader::GgufFile::open(dir + "/model-F32.gguf");
  ASSERT_EQ(f.get_string("tokenizer.ggml.model"), "t5");
  const auto from_gguf = Tokenizer::from_gguf(f);
  const auto from_hf = Tokenizer::from_hf_files(dir + "/tokenizer.json", dir + "/tokenizer_config.json");
  ASSERT_GE(g["texts"].size(), 8u);
  for (size_t i = 0; i < g["texts"].size(); ++i) {
    const std::string text = g["texts"][i];
    const std::vector<int32_t> want = g["text_ids"][i];
    EXPECT_EQ(from_gguf->encode(text, true, false), want) << "GGUF: '" << text << "'";
    EXPECT_EQ(from_hf->encode(text, true, false), want) << "tokenizer.json: '" << text << "'";
  }
}

// tokenizer.json's Precompiled normalizer with a charsmap that is not base64, or a blob that is not
// a charsmap: an error naming the file and the field, never a crash.
TEST(GgufUgm, MalformedPrecompiledNormalizerIsRefused) {
  std::ifstream in(std::string(OXYD_SOURCE_DIR) + "/tests/data/archs/xlmr/tokenizer.json");
  nlohmann::json j = nlohmann::json::parse(in);
  for (const char* blob : {"%%%not base64", "AQA=", "QAAAAAAAAAA="}) {  // bad chars; 2 bytes; a trie too big
    j["normalizer"]["precompiled_charsmap"] = blob;
    try {
      Tokenizer::from_hf_json(j.dump(), "", "xlmr/tokenizer.json");
      ADD_FAILURE() << blob << " was accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("xlmr/tokenizer.json: field 'normalizer.precompiled_charsmap'"),
                std::string::npos) << e.what();
    }
  }
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
