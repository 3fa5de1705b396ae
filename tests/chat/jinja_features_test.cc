// Language-feature goldens: small templates exercising every construct the engine supports,
// rendered by transformers' jinja2 environment (tools/gen_jinja_feature_goldens.py). Output must
// match byte for byte; runtime errors must carry the same message and Python exception class;
// syntax errors must be reported as syntax errors (our message adds line and column).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "chat/jinja/template.h"

using json = nlohmann::ordered_json;
using namespace oxyd::chat::jinja;

namespace {

RenderOptions fixed_clock() {
  RenderOptions o;
  o.hooks.now = [] {
    std::tm tm{};
    tm.tm_year = 125, tm.tm_mon = 6, tm.tm_mday = 26, tm.tm_hour = 14, tm.tm_min = 5, tm.tm_sec = 9;
    tm.tm_wday = 6, tm.tm_yday = 206;
    return tm;
  };
  return o;
}

TEST(JinjaFeatures, MatchJinja2) {
  std::ifstream f(std::filesystem::path(OXYD_SOURCE_DIR) / "tests/data/chat/features.jsonl");
  std::string line;
  ASSERT_TRUE(std::getline(f, line));
  json ctx = json::parse(line)["context"];
  int n = 0;
  while (std::getline(f, line)) {
    if (line.empty()) continue;
    json g = json::parse(line);
    std::string src = g["template"].get<std::string>();
    std::string got, err, kind;
    try {
      got = Template::parse(src).render(ctx, fixed_clock());
    } catch (const TemplateError& e) {
      err = e.what();
      kind = std::string(error_kind_name(e.kind()));
    }
    ++n;
    SCOPED_TRACE("template: " + json(src).dump());
    if (g.contains("output")) {
      EXPECT_EQ(err, "");
      EXPECT_EQ(got, g["output"].get<std::string>());
    } else if (g["error_type"] == "TemplateSyntaxError" || g["error_type"] == "TemplateAssertionError") {
      EXPECT_EQ(kind, "TemplateSyntaxError") << "error: " << err << " output: " << got;
    } else {
      EXPECT_EQ(err, g["error"].get<std::string>());
      EXPECT_EQ(kind, g["error_type"].get<std::string>());
    }
  }
  EXPECT_GT(n, 100);
}

}  // namespace
