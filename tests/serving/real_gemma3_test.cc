// The quick-start model: the real Gemma 3 270M Q4_K_M GGUF (base model, no chat template in the
// file) served through LoadedModel. Oracle: llama.cpp (tests/data/gemma3_270m/greedy.json, made by
// tools/gen_gemma3_greedy_golden.py): the fallback Gemma-turn template renders llama.cpp's chat
// prompt text exactly, both encoders give its prompt ids, and greedy generation through the engine
// starts with llama.cpp's tokens. Skipped unless the GGUF exists ($OXYD_GEMMA3_270M_GGUF).
#include <cstdlib>
#include <filesystem>

#include "serving_util.h"

namespace oxyd::server::test {
namespace {

std::string gemma3_path() {
  const char* env = std::getenv("OXYD_GEMMA3_270M_GGUF");
  return env && *env ? env : "/work/models/gemma-3-270m-q4_k_m.gguf";
}

TEST(RealGemma3, FallbackTemplatePromptIdsAndGreedyMatchLlamaCpp) {
  const std::string path = gemma3_path();
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "real Gemma 3 270M GGUF not found at " << path;
  std::ifstream f(std::string(OXYD_SOURCE_DIR) + "/tests/data/gemma3_270m/greedy.json");
  const nlohmann::json g = nlohmann::json::parse(f);
  ModelOptions o;
  o.max_context_len = 256;
  auto m = LoadedModel::load("gemma-3-270m", path, o);
  ASSERT_TRUE(m->has_chat_template());  // the fallback: the file has none
  EXPECT_EQ(m->max_context_len(), 256);

  std::vector<GenerationParams> ps;
  std::vector<std::vector<int32_t>> want;
  for (const auto& c : g["cases"]) {
    const std::string text = c["text"];
    const auto ids = c["prompt_ids"].get<std::vector<int32_t>>();
    if (c["kind"] == "chat") {
      const size_t b = text.find("user\n") + 5, e = text.find("<end_of_turn>");
      chat::ChatTemplateInputs in;
      in.messages.push_back({{"role", "user"}, {"content", text.substr(b, e - b)}});
      in.add_generation_prompt = true;
      const std::string rendered = m->render_chat(in);
      EXPECT_EQ(rendered, text);
      EXPECT_EQ(m->encode_chat_prompt(rendered), ids);
    } else {
      EXPECT_EQ(m->encode_raw_prompt(text), ids);
    }
    ps.push_back(greedy_params(ids, 8));
    want.push_back(c["greedy"].get<std::vector<int32_t>>());
  }
  // Q4_K activations are rounded differently by the two engines, so only the start of each
  // continuation is compared (llama.cpp's margins there are wide; later near-ties may flip).
  const auto rs = run_batch(*m, ps);
  for (size_t i = 0; i < rs.size(); ++i) {
    ASSERT_EQ(rs[i].tokens.size(), 8u);
    for (int k = 0; k < 8; ++k) std::printf("%d/%d ", rs[i].tokens[k], int(want[i][k]));
    std::printf("\n");
    EXPECT_EQ(std::vector<int32_t>(rs[i].tokens.begin(), rs[i].tokens.begin() + 4),
              std::vector<int32_t>(want[i].begin(), want[i].begin() + 4)) << "case " << i;
  }
}

}  // namespace
}  // namespace oxyd::server::test
