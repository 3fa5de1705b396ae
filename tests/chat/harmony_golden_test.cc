// The gpt-oss chat template against openai-harmony, the harmony format's reference renderer
// (goldens: tools/gen_harmony_goldens.py). Our render must equal transformers' render of the
// template byte for byte, and equal harmony's exactly where the template agrees with harmony
// ("same"); where it does not (developer instructions followed by "\n\n", a closing final
// message ending in <|return|>), the golden pins that both renders are what they are.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "chat/chat_template.h"

namespace fs = std::filesystem;
using json = nlohmann::ordered_json;
using oxyd::chat::jinja::Template;

namespace {

std::string read_file(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  if (!f) throw std::runtime_error("cannot read " + p.string());
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

oxyd::chat::jinja::RenderOptions pinned_date() {  // the generator's 2025-07-26 (a Saturday)
  oxyd::chat::jinja::RenderOptions o;
  o.hooks.now = [] {
    std::tm tm{};
    tm.tm_year = 2025 - 1900, tm.tm_mon = 6, tm.tm_mday = 26, tm.tm_wday = 6, tm.tm_yday = 206;
    return tm;
  };
  return o;
}

TEST(HarmonyGolden, TemplateRendersAsHarmonyDoes) {
  const fs::path src = OXYD_SOURCE_DIR;
  Template tmpl = Template::parse(read_file(src / "tests/data/chat_templates/openai-gpt-oss-120b.jinja"));
  std::ifstream f(src / "tests/data/chat/harmony_goldens.jsonl");
  std::string line;
  int n = 0, same = 0;
  while (std::getline(f, line)) {
    if (line.empty()) continue;
    const json g = json::parse(line);
    oxyd::chat::ChatTemplateInputs in;
    in.messages = g["messages"];
    if (!g["tools"].is_null()) in.tools = g["tools"];
    in.add_generation_prompt = g["add_generation_prompt"].get<bool>();
    in.kwargs = g["kwargs"];
    in.kwargs["bos_token"] = "<|startoftext|>";
    in.kwargs["eos_token"] = "<|return|>";
    const std::string got = oxyd::chat::apply_chat_template(tmpl, in, pinned_date());
    const std::string name = g["name"].get<std::string>();
    EXPECT_EQ(got, g["template"].get<std::string>()) << name << ": differs from transformers' render";
    if (g["same"].get<bool>()) {
      EXPECT_EQ(got, g["harmony"].get<std::string>()) << name << ": differs from openai-harmony";
      ++same;
    } else {
      EXPECT_NE(got, g["harmony"].get<std::string>()) << name << ": the golden says the template departs here";
    }
    EXPECT_EQ(g["stop_tokens"], json::parse(R"(["<|call|>", "<|return|>"])")) << name;
    ++n;
  }
  EXPECT_GE(n, 9);
  EXPECT_GE(same, 6);
}

}  // namespace
