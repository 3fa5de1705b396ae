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

TEST(GgufRwkv, MatchesLlamaCppOnCorpus) {
  loader::GgufFile f = loader::GgufFile::open(data_dir() + "/gguf/rwkv.gguf");
  ASSERT_EQ(f.get_string("tokenizer.ggml.model"), "rwkv");
  auto tok = Tokenizer::from_gguf(f);
  std::ifstream in(data_dir() + "/rwkv_llamacpp.json");
  const json g = json::parse(in);
  const auto texts = corpus_texts();
  ASSERT_EQ(g["num_texts"].get<size_t>(), texts.size());
  size_t p_ok = 0, f_ok = 0, d_ok = 0, reported = 0;
  for (size_t i = 0; i < texts.size(); ++i) {
    const std::string k = std::to_string(i);
    const auto want_p = g["p"][i].get<std::vector<int32_t>>();
    const auto want_f = g["f"].contains(k) ? g["f"][k].get<std::vector<int32_t>>() : want_p;
    const std::string want_d = g["d"].contains(k) ? g["d"][k].get<std::string>() : texts[i];
    const auto got_p = tok->encode(texts[i], false, false);
    const auto got_f = tok->encode(texts[i], true, true);
    const std::string got_d = tok->decode(want_p, true);  // llama.cpp renders control tokens as nothing
    p_ok += got_p == want_p;
    f_ok += got_f == want_f;
    d_ok += got_d == want_d;
    if ((got_p != want_p || got_f != want_f || got_d != want_d) && ++reported <= 5)
      ADD_FAILURE() << "text " << i << " " << jdump(texts[i].substr(0, 200)) << "\n ours p " << show_ids(got_p)
                    << "\n llama p " << show_ids(want_p) << "\n ours f " << show_ids(got_f) << "\n llama f "
                    << show_ids(want_f) << "\n ours d " << jdump(got_d).substr(0, 200) << "\n llama d "
                    << jdump(want_d).substr(0, 200);
  }
  std::printf("rwkv.gguf: %zu/%zu texts match llama.cpp as user text, %zu with specials, %zu decode\n", p_ok,
              texts.size(), f_ok, d_ok);
  EXPECT_EQ(p_ok, texts.size());
  EXPECT_EQ(f_ok, texts.size());
  EXPECT_EQ(d_ok, texts.size());
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
