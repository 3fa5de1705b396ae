// Golden test: every real chat template in tests/data (chat_templates/*.jinja and the
// chat_template of tokenizers/*/tokenizer_config.json) rendered on the conversations of
// tests/data/chat/conversations.json must match transformers' apply_chat_template byte for byte,
// or fail with the same message where transformers raised. Goldens: tools/gen_template_goldens.py.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "chat/chat_template.h"

namespace fs = std::filesystem;
using json = nlohmann::ordered_json;
using oxyd::chat::jinja::Template;
using oxyd::chat::jinja::TemplateError;

namespace {

std::string read_file(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  if (!f) throw std::runtime_error("cannot read " + p.string());
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::string template_source(const std::string& name) {
  const fs::path data = OXYD_TEST_DATA_DIR;
  const std::string prefix = "tokenizer_";
  if (name.rfind(prefix, 0) == 0) {
    json cfg = json::parse(read_file(data / "tokenizers" / name.substr(prefix.size()) / "tokenizer_config.json"));
    return cfg["chat_template"].get<std::string>();
  }
  return read_file(data / "chat_templates" / (name + ".jinja"));
}

std::vector<std::string> golden_names() {
  std::vector<std::string> names;
  fs::path dir = fs::path(OXYD_SOURCE_DIR) / "tests/data/chat/goldens";
  for (auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".jsonl") names.push_back(e.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

oxyd::chat::jinja::RenderOptions fixed_clock() {
  oxyd::chat::jinja::RenderOptions o;
  o.hooks.now = [] {  // FIXED_NOW of the generator: 2025-07-26 14:05:09 (a Saturday)
    std::tm tm{};
    tm.tm_year = 2025 - 1900;
    tm.tm_mon = 6;
    tm.tm_mday = 26;
    tm.tm_hour = 14;
    tm.tm_min = 5;
    tm.tm_sec = 9;
    tm.tm_wday = 6;
    tm.tm_yday = 206;
    return tm;
  };
  return o;
}

class TemplateGolden : public ::testing::TestWithParam<std::string> {};

TEST_P(TemplateGolden, MatchesTransformers) {
  const std::string name = GetParam();
  static const json convs =
      json::parse(read_file(fs::path(OXYD_SOURCE_DIR) / "tests/data/chat/conversations.json"));
  Template tmpl = Template::parse(template_source(name));
  std::ifstream f(fs::path(OXYD_SOURCE_DIR) / "tests/data/chat/goldens" / (name + ".jsonl"));
  std::string line;
  int n = 0, bad = 0;
  auto opts = fixed_clock();
  while (std::getline(f, line)) {
    if (line.empty()) continue;
    json g = json::parse(line);
    const json& conv = convs.at(g["conv"].get<size_t>());
    oxyd::chat::ChatTemplateInputs in;
    in.messages = conv["messages"];
    if (conv.contains("tools")) in.tools = conv["tools"];
    in.kwargs = g["kwargs"];
    in.add_generation_prompt = in.kwargs.value("add_generation_prompt", false);
    in.kwargs.erase("add_generation_prompt");
    std::string got, err;
    try {
      got = oxyd::chat::apply_chat_template(tmpl, in, opts);
    } catch (const std::exception& e) {
      err = e.what();
    }
    ++n;
    std::string where = name + " conv " + std::to_string(g["conv"].get<int>()) + " kwargs " + g["kwargs"].dump();
    if (g.contains("output")) {
      std::string want = g["output"].get<std::string>();
      if (!err.empty() || got != want) {
        if (++bad <= 3) {
          if (!err.empty()) ADD_FAILURE() << where << ": raised '" << err << "'";
          else {
            size_t k = 0;
            while (k < got.size() && k < want.size() && got[k] == want[k]) ++k;
            ADD_FAILURE() << where << ": first difference at byte " << k << "\n want: " << json(want.substr(k > 40 ? k - 40 : 0, 120)).dump()
                          << "\n  got: " << json(got.substr(k > 40 ? k - 40 : 0, 120)).dump();
          }
        }
      }
    } else {
      std::string want = g["error"].get<std::string>();
      if (err != want && ++bad <= 3)
        ADD_FAILURE() << where << ": want error '" << want << "', got " << (err.empty() ? "output" : "'" + err + "'");
    }
  }
  EXPECT_EQ(bad, 0) << name << ": " << bad << " of " << n << " renders differ";
  EXPECT_GE(n, 30);
}

INSTANTIATE_TEST_SUITE_P(Real, TemplateGolden, ::testing::ValuesIn(golden_names()),
                         [](const auto& info) {
                           std::string s = info.param;
                           for (char& c : s)
                             if (!isalnum(static_cast<unsigned char>(c))) c = '_';
                           return s;
                         });

}  // namespace
