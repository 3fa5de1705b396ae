// String formats in the non-JSON call syntaxes (tool_args.h): for each format, every canonical
// string of tests/data/grammar/string_formats.json (tools/gen_string_formats.py) is accepted as a
// call's argument, and no string the jsonschema package's FormatChecker (the oracle) calls
// invalid is, in Qwen3-Coder's XML parameters and in Gemma 4's bare keys. The format regexes are
// subsets, so some valid mutations are rejected; their count is printed, not asserted.
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "grammar/tool_grammar.h"
#include "byte_vocabulary.h"

namespace oxyd::grammar {
namespace {

using json = nlohmann::ordered_json;

json load() {
  std::ifstream f(std::string(OXYD_TEST_DATA_DIR) + "/grammar/string_formats.json");
  EXPECT_TRUE(f) << "missing tests/data/grammar/string_formats.json";
  return f ? json::parse(f) : json();
}

struct Syntax {
  ArgsSyntax syntax;
  std::string begin, end, quote;
  std::string call(const std::string& v) const {  // as the chat templates write a one-argument call
    if (syntax == ArgsSyntax::XML_PARAMETERS) return begin + "\n<parameter=v>\n" + v + "\n</parameter>\n" + end;
    return begin + "{v:" + quote + v + quote + "}" + end;
  }
};

void check(const Syntax& sx, const char* name) {
  const json data = load();
  ASSERT_TRUE(data.contains("formats"));
  GrammarCompiler compiler(byte_vocabulary());
  size_t n_cases = 0, n_valid_rejected = 0;
  for (const auto& [format, d] : data["formats"].items()) {
    ToolCallGrammar g;
    g.parallel = false;
    const json schema = {{"type", "object"}, {"properties", {{"v", {{"type", "string"}, {"format", format}}}}},
                         {"required", {"v"}}};
    g.tags = {{sx.begin, schema.dump(), sx.end, sx.syntax, sx.quote}};
    const auto compiled = compiler.compile(tool_call_grammar(g));
    auto accepts = [&](const std::string& v) {
      Matcher m(compiled, {});
      return m.accept_string(sx.call(v)) && m.is_completed();
    };
    for (const json& s : d["canonical"]) {
      EXPECT_TRUE(accepts(s)) << name << " " << format << ": " << s;
    }
    for (const json& c : d["cases"]) {
      const std::string s = c[0];
      const bool valid = c[1], got = accepts(s);
      ++n_cases;
      if (!valid) {
        EXPECT_FALSE(got) << name << " " << format << " accepts the invalid " << json(s).dump();
      }
      n_valid_rejected += valid && !got;
    }
  }
  EXPECT_GT(n_cases, 1500u);
  std::printf("%s: %zu cases, %zu valid ones rejected (outside the formats' subsets)\n", name, n_cases, n_valid_rejected);
}

TEST(StringFormats, XmlParametersAcceptOnlyValidStrings) {
  check({ArgsSyntax::XML_PARAMETERS, "<tool_call>\n<function=f>", "</function>\n</tool_call>", ""}, "xml");
}

TEST(StringFormats, BareKeysAcceptOnlyValidStrings) {
  check({ArgsSyntax::BARE_KEYS, "<|tool_call>call:f", "<tool_call|>", "<|\"|>"}, "bare keys");
}

}  // namespace
}  // namespace oxyd::grammar
