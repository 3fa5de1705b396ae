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

TEST(GgufPlamo2, MatchesLlamaCppOnCorpus) {
  loader::GgufFile f = loader::GgufFile::open(data_dir() + "/gguf/plamo2.gguf");
  ASSERT_EQ(f.get_string("tokenizer.ggml.model"), "plamo2");
  auto tok = Tokenizer::from_gguf(f);
  std::ifstream in(data_dir() + "/plamo2_llamacpp.json");
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
  std::printf("plamo2.gguf: %zu/%zu texts match llama.cpp as user text, %zu with specials, %zu decode\n", p_ok,
              texts.size(), f_ok, d_ok);
  EXPECT_EQ(p_ok, texts.size());
  EXPECT_EQ(f_ok, texts.size());
  EXPECT_EQ(d_ok, texts.size());
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
