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

using json = nlohmann::json;

std::vector<std::string> corpus_texts() {
  std::vector<std::string> out;
  std::ifstream f(data_dir() + "/corpus.jsonl");
  std::string line;
  while (std::getline(f, line)) {
    json j = json::parse(line);
    if (j.contains("t")) out.push_back(j["t"].get<std::string>());
  }
  return out;
}

TEST(GgufUgm, MatchesLlamaCppOnCorpus) {
  loader::GgufFile f = loader::GgufFile::open(data_dir() + "/gguf/ugm.gguf");
  ASSERT_EQ(f.get_string("tokenizer.ggml.model"), "t5");
  ASSERT_GT(f.find("tokenizer.ggml.precompiled_charsmap")->size(), 1000u);
  auto tok = Tokenizer::from_gguf(f);
  std::ifstream in(data_dir() + "/ugm_llamacpp.json");
  const json g = json::parse(in);
  const auto texts = corpus_texts();
  ASSERT_EQ(g["num_texts"].get<size_t>(), texts.size());
  size_t p_ok = 0, f_ok = 0, reported = 0;
  for (size_t i = 0; i < texts.size(); ++i) {
    const auto want_p = g["p"][i].get<std::vector<int32_t>>();
    std::vector<int32_t> want_f = want_p;
    want_f.push_back(1);  // add_eos_token, </s>
    if (g["f"].contains(std::to_string(i))) want_f = g["f"][std::to_string(i)].get<std::vector<int32_t>>();
    const auto got_p = tok->encode(texts[i], false, false);
    const auto got_f = tok->encode(texts[i], true, true);
    p_ok += got_p == want_p;
    f_ok += got_f == want_f;
    if ((got_p != want_p || got_f != want_f) && ++reported <= 5)
      ADD_FAILURE() << "text " << i << " " << jdump(texts[i].substr(0, 200)) << "\n ours p " << show_ids(got_p)
                    << "\n llama p " << show_ids(want_p) << "\n ours f " << show_ids(got_f) << "\n llama f "
                    << show_ids(want_f);
  }
  std::printf("ugm.gguf: %zu/%zu texts match llama.cpp as user text, %zu/%zu with specials\n", p_ok, texts.size(),
              f_ok, texts.size());
  EXPECT_EQ(p_ok, texts.size());
  EXPECT_EQ(f_ok, texts.size());
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
