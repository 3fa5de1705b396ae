// Tokens that stand for a non-text input (Gemma 3's <start_of_image>, Qwen's <|vision_pad|>) are
// never written into generated text unless specials are asked for (issue 21 §5.2). Oracle: the
// `special` flag Hugging Face gives every added token of the real tokenizers
// (tests/data/tokenizer/added_token_flags.json, tools/gen_added_token_flags.py): each token our
// decoder hides as a placeholder is one HF's skip_special_tokens hides too, and all of HF's
// placeholder-like specials are found. Then a GGUF vocabulary where <start_of_image> is
// USER_DEFINED (as in Gemma 3 GGUFs): decoding with skip_special drops it, and only it.
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "loader/gguf.h"
#include "loader/gguf_writer.h"
#include "tokenizer/tokenizer.h"

namespace oxyd::tokenizer {
namespace {

TEST(MediaPlaceholder, AgreesWithHuggingFaceSpecialFlags) {
  std::ifstream f(std::string(OXYD_SOURCE_DIR) + "/tests/data/tokenizer/added_token_flags.json");
  const nlohmann::json j = nlohmann::json::parse(f);
  int placeholders = 0;
  for (const auto& [family, tokens] : j.items()) {
    for (const auto& t : tokens) {
      const std::string content = t[0];
      if (!is_media_placeholder(content)) continue;
      ++placeholders;
      EXPECT_TRUE(t[1].get<bool>()) << family << ": '" << content << "' is not special in Hugging Face";
    }
  }
  EXPECT_EQ(placeholders, 8);  // gemma3: 3 image tokens; qwen3: vision start/end/pad, image, video pad
  for (const char* not_one : {"<table>", "<tool_call>", "<img>", "[multimodal]", "<mask>", "<image", "< image >",
                              "<|im_start|>", "<Image>"})
    EXPECT_FALSE(is_media_placeholder(not_one)) << not_one;
}

TEST(MediaPlaceholder, UserDefinedGgufPlaceholderIsSkippedWhenDecoding) {
  loader::GgufWriter w;
  w.add_string("general.architecture", "llama");
  w.add_string("tokenizer.ggml.model", "gpt2");
  w.add_string("tokenizer.ggml.pre", "default");
  const std::vector<std::string> toks = {"a", "b", "<start_of_image>", "<tool_call>", "<table>", "<eos>"};
  w.add("tokenizer.ggml.tokens", loader::GgufValue::string_array(toks));
  // NORMAL NORMAL USER_DEFINED USER_DEFINED USER_DEFINED CONTROL (llama.cpp's token types)
  w.add("tokenizer.ggml.token_type", loader::GgufValue::array(std::vector<int32_t>{1, 1, 4, 4, 4, 3}));
  w.add("tokenizer.ggml.merges", loader::GgufValue::string_array({}));
  w.add_scalar<uint32_t>("tokenizer.ggml.eos_token_id", 5);
  const auto bytes = w.to_bytes();
  const auto g = loader::GgufFile::from_buffer(bytes, "vocab.gguf");
  const auto tok = Tokenizer::from_gguf(g);
  const std::vector<int32_t> ids = {0, 2, 1, 3, 4, 5};
  EXPECT_EQ(tok->decode(ids, /*skip_special=*/true), "ab<tool_call><table>");
  EXPECT_EQ(tok->decode(ids, /*skip_special=*/false), "a<start_of_image>b<tool_call><table><eos>");
  EXPECT_TRUE(tok->is_special(2));
  EXPECT_FALSE(tok->is_special(3));
  // Matching in text is as before: the placeholder written in a prompt is still its token.
  EXPECT_EQ(tok->encode("a<start_of_image>", false, true), (std::vector<int32_t>{0, 2}));
}

}  // namespace
}  // namespace oxyd::tokenizer
