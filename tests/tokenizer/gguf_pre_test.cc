// GGUF pre-tokenizers (tokenizer.ggml.pre) beyond the families of gguf_llamacpp_test.cc.
// SmolLM2: tests/data/tokenizer/gguf/smollm2.gguf (the tokenizer keys of the real SmolLM2-135M-Instruct
// GGUF, pre "smollm") against Hugging Face `tokenizers` on SmolLM2's own pipeline, every text of the
// corpus (tests/data/tokenizer/smollm2_hf.json from tools/gen_smollm2_tokenizer.py).
#include "golden_util.h"
#include "loader/gguf.h"
#include "loader/gguf_writer.h"

namespace oxyd::tokenizer::testing {
namespace {

using json = nlohmann::json;

// The corpus texts that are valid JSON strings ("t" entries), in file order.
const std::vector<std::string>& corpus_texts() {
  static const std::vector<std::string> v = [] {
    std::vector<std::string> out;
    std::ifstream f(data_dir() + "/corpus.jsonl");
    std::string line;
    while (std::getline(f, line)) {
      json j = json::parse(line);
      if (j.contains("t")) out.push_back(j["t"].get<std::string>());
    }
    return out;
  }();
  return v;
}

TEST(GgufPre, SmolLm2MatchesHfOnCorpus) {
  loader::GgufFile f = loader::GgufFile::open(data_dir() + "/gguf/smollm2.gguf");
  ASSERT_EQ(f.get_string("tokenizer.ggml.pre"), "smollm");
  auto tok = Tokenizer::from_gguf(f);
  std::ifstream in(data_dir() + "/smollm2_hf.json");
  const json g = json::parse(in);
  const auto& texts = corpus_texts();
  ASSERT_EQ(g["records"].size(), texts.size());
  size_t ids_ok = 0, text_ok = 0, reported = 0;
  for (size_t i = 0; i < texts.size(); ++i) {
    const json& r = g["records"][i];
    const auto want = r["p"].get<std::vector<int32_t>>();
    const std::string want_text = r.contains("d") ? r["d"].get<std::string>() : texts[i];
    const auto got = tok->encode(texts[i], false, false);
    const std::string got_text = tok->decode(want, false);
    ids_ok += got == want;
    text_ok += got_text == want_text;
    if ((got != want || got_text != want_text) && ++reported <= 5) {
      ADD_FAILURE() << "text " << i << " " << jdump(texts[i].substr(0, 200)) << "\n ours " << show_ids(got)
                    << "\n HF   " << show_ids(want) << "\n decode ours " << jdump(got_text).substr(0, 200)
                    << "\n decode HF   " << jdump(want_text).substr(0, 200);
    }
  }
  std::printf("smollm2.gguf: %zu/%zu texts ids match HF, %zu decode match\n", ids_ok, texts.size(), text_ok);
  EXPECT_EQ(ids_ok, texts.size());
  EXPECT_EQ(text_ok, texts.size());
  // SmolLM2's end-of-turn token ends a generation.
  EXPECT_TRUE(tok->is_end_of_generation(tok->token_to_id("<|im_end|>")));
}

TEST(GgufPre, UnknownPreValueIsAClearError) {
  loader::GgufWriter w;
  w.add_string("general.architecture", "llama");
  w.add_string("tokenizer.ggml.model", "gpt2");
  w.add_string("tokenizer.ggml.pre", "no-such-pre");
  w.add("tokenizer.ggml.tokens", loader::GgufValue::string_array({"a", "b"}));
  w.add("tokenizer.ggml.merges", loader::GgufValue::string_array({}));
  auto bytes = w.to_bytes();
  auto f = loader::GgufFile::from_buffer(bytes, "vocab.gguf");
  try {
    Tokenizer::from_gguf(f);
    FAIL() << "no error";
  } catch (const std::exception& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("vocab.gguf"), std::string::npos) << m;
    EXPECT_NE(m.find("tokenizer.ggml.pre"), std::string::npos) << m;
    EXPECT_NE(m.find("'no-such-pre'"), std::string::npos) << m;
  }
}

}  // namespace
}  // namespace oxyd::tokenizer::testing
