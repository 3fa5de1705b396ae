// The grammar's view of real vocabularies: Tokenizer::token_bytes of a text's tokens concatenate
// to the text (byte-level BPE, byte-fallback SentencePiece), and a schema-valid text tokenized
// by the real tokenizer passes the mask token by token, with EOS allowed only at its end.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "engine/grammar_vocab.h"
#include "grammar/grammar.h"
#include "tokenizer/tokenizer.h"

namespace oxyd::grammar {
namespace {

std::unique_ptr<tokenizer::Tokenizer> load(const std::string& name) {
  const std::string dir = std::string(OXYD_TEST_DATA_DIR) + "/tokenizers/" + name;
  return tokenizer::Tokenizer::from_hf_files(dir + "/tokenizer.json", dir + "/tokenizer_config.json");
}

class VocabTest : public ::testing::TestWithParam<const char*> {};

TEST_P(VocabTest, TokenBytesConcatenateToTheText) {
  auto tok = load(GetParam());
  std::ifstream f(std::string(OXYD_TEST_DATA_DIR) + "/tokenizer/corpus.jsonl");
  std::string line;
  int n = 0;
  while (std::getline(f, line) && n < 200) {
    const auto j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.contains("t")) continue;
    const std::string text = j["t"];
    const auto ids = tok->encode(text, /*add_special=*/false, /*parse_special=*/false);
    std::string bytes;
    for (int32_t id : ids) bytes += tok->token_bytes(id);
    const std::string decoded = tok->decode(ids);
    if (decoded.find("\xEF\xBF\xBD") != std::string::npos) continue;  // text the tokenizer does not round-trip
    // SentencePiece prepends a space the decoder strips from the whole text.
    EXPECT_TRUE(bytes == decoded || bytes == " " + decoded) << GetParam() << ": " << text << "\n  bytes: " << bytes;
    ++n;
  }
  EXPECT_GT(n, 10);
}

TEST_P(VocabTest, SchemaValidTextPassesTheMaskTokenByToken) {
  auto tok = load(GetParam());
  const int32_t vocab = int32_t(tok->vocab_size()) + 7;  // padded logits row, as models have
  GrammarCompiler compiler(engine::grammar_vocabulary(*tok, vocab));
  const std::string schema = R"({"type":"object","properties":{
      "name":{"type":"string"},"tags":{"type":"array","items":{"type":"string"}},
      "owner":{"type":"object","properties":{"id":{"type":"integer"},"ok":{"type":"boolean"}},"required":["id","ok"]}},
      "required":["name","tags","owner"]})";
  auto g = compiler.compile({GrammarSpec::Kind::JSON_SCHEMA, schema, true});
  const std::string text = R"({"name": "Zoë \"q\" 東京", "tags": ["a b", ""], "owner": {"id": -42, "ok": true}})";
  const auto ids = tok->encode(text, false, false);
  const int32_t eos = tok->end_of_generation_ids().at(0);
  Matcher m(g, tok->end_of_generation_ids());
  std::vector<float> logits(static_cast<size_t>(vocab), 0.0f);
  size_t first = 0;
  if (tok->token_bytes(ids[0])[0] == ' ') {  // SentencePiece's prefix space: not part of the text
    ASSERT_TRUE(m.accept_string(tok->token_bytes(ids[0]).substr(1)));
    first = 1;
  }
  for (size_t i = first; i < ids.size(); ++i) {
    std::fill(logits.begin(), logits.end(), 0.0f);
    m.apply_mask(logits);
    ASSERT_EQ(logits[size_t(ids[i])], 0.0f) << GetParam() << ": token " << i << " '" << tok->token_bytes(ids[i]) << "' masked";
    ASSERT_EQ(logits[size_t(eos)], -INFINITY) << "EOS allowed before the object is complete";
    ASSERT_TRUE(m.accept(ids[i]));
  }
  std::fill(logits.begin(), logits.end(), 0.0f);
  m.apply_mask(logits);
  EXPECT_EQ(logits[size_t(eos)], 0.0f);
  EXPECT_EQ(logits[size_t(vocab - 1)], -INFINITY);  // padding
  size_t allowed = 0;
  for (float x : logits) allowed += x == 0.0f;
  EXPECT_EQ(allowed, tok->end_of_generation_ids().size());  // only the stop ids
}

INSTANTIATE_TEST_SUITE_P(Tokenizers, VocabTest, ::testing::Values("qwen3", "llama2", "gemma3"));

}  // namespace
}  // namespace oxyd::grammar
