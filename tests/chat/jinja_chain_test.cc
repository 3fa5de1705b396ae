// Issue 28: long chains (`.a.a…`, `+1+1…`, `|upper|upper…`, `f(1)(1)…`) and huge templates end in
// a clear TemplateError in bounded time, where every link used to cost one recursion of the
// post-parse checks (stack overflow at 50,000 links). Chains under the limit still render,
// checked against the value jinja2 gives for the same template.
#include <gtest/gtest.h>

#include <chrono>

#include "chat/jinja/ast.h"
#include "chat/jinja/template.h"

using json = nlohmann::ordered_json;
using namespace oxyd::chat::jinja;

namespace {

std::string repeat(const std::string& s, int n) {
  std::string out;
  out.reserve(s.size() * size_t(n));
  for (int i = 0; i < n; ++i) out += s;
  return out;
}

// The parse error of src, failing the test when it parses or takes 2 s or more.
std::string parse_error(const std::string& src) {
  const auto t0 = std::chrono::steady_clock::now();
  std::string msg = "(parsed)";
  try {
    Template::parse(src);
  } catch (const TemplateError& e) {
    EXPECT_EQ(e.kind(), ErrorKind::SYNTAX) << e.what();
    msg = e.what();
  }
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 2.0);
  return msg;
}

TEST(JinjaChains, FiftyThousandLinksAreRefused) {
  const int n = 50'000;
  for (const std::string& src : {"{{ x" + repeat(".a", n) + " }}", "{{ 1" + repeat("+1", n) + " }}",
                                 "{{ 'a'" + repeat("|upper", n) + " }}", "{{ f" + repeat("(1)", n) + " }}",
                                 "{{ x" + repeat("[0]", n) + " }}", "{% if x" + repeat(" and x", n) + " %}{% endif %}"}) {
    SCOPED_TRACE(src.substr(0, 20));
    const std::string msg = parse_error(src);
    EXPECT_NE(msg.find("nesting too deep"), std::string::npos) << msg.substr(0, 300);
    EXPECT_NE(msg.find("line 1"), std::string::npos) << msg.substr(0, 300);
  }
}

TEST(JinjaChains, FlatConcatenationIsNotNesting) {
  // `~` builds one node with all operands as children: 50,000 of them parse and render.
  // jinja2: Template("{{ 'a'" + " ~ 'a'" * 50000 + " }}").render() == "a" * 50001
  EXPECT_EQ(Template::parse("{{ 'a'" + repeat(" ~ 'a'", 50'000) + " }}").render(json::object()),
            std::string(50'001, 'a'));
}

TEST(JinjaChains, ChainsUnderTheLimitRender) {
  // jinja2: Template("{{ 1" + "+1" * 300 + " }}").render() == "301"
  EXPECT_EQ(Template::parse("{{ 1" + repeat("+1", 300) + " }}").render(json::object()), "301");
  // jinja2: Template("{{ 'ab'" + "|upper|lower" * 100 + " }}").render() == "ab"
  EXPECT_EQ(Template::parse("{{ 'ab'" + repeat("|upper|lower", 100) + " }}").render(json::object()), "ab");
  // jinja2: Template("{{ x" + ".a" * 300 + " }}").render(x=d) where d = {"a": d} is "{'a': ...}"-ish;
  // here: a defined chain ends in a string.
  json x = "leaf";
  for (int i = 0; i < 300; ++i) x = json{{"a", x}};
  EXPECT_EQ(Template::parse("{{ x" + repeat(".a", 300) + " }}").render(json{{"x", x}}), "leaf");
}

TEST(JinjaChains, LimitCountsStatementNestingToo) {
  // 150 nested ifs (under the parser's 200) around a 300-link chain: 450 levels in all.
  const std::string src = repeat("{% if true %}", 150) + "{{ 1" + repeat("+1", 300) + " }}" +
                          repeat("{% endif %}", 150);
  EXPECT_NE(parse_error(src).find("nesting too deep"), std::string::npos);
  const std::string ok = repeat("{% if true %}", 50) + "{{ 1" + repeat("+1", 300) + " }}" + repeat("{% endif %}", 50);
  EXPECT_EQ(Template::parse(ok).render(json::object()), "301");
}

TEST(JinjaChains, RecursiveMacrosWithDeepExpressionsHitALimit) {
  // The call sits at the bottom of a 300-link chain, so each of 190 macro levels adds 300 eval
  // levels (57,000 in all): a LIMIT error instead of a stack overflow.
  const std::string src = "{% macro f(n) %}{% if n < 190 %}{{ f(n + 1)" + repeat(" + ''", 300) +
                          " }}{% endif %}{% endmacro %}{{ f(0) }}";
  try {
    Template::parse(src).render(json::object());
    ADD_FAILURE() << "rendered";
  } catch (const TemplateError& e) {
    EXPECT_EQ(e.kind(), ErrorKind::LIMIT) << e.what();
    EXPECT_NE(std::string(e.what()).find("nested deeper than"), std::string::npos) << e.what();
  }
}

TEST(JinjaChains, TemplateSizeIsCapped) {
  const std::string big = "{# " + std::string(kMaxTemplateBytes, 'x') + " #}";
  const std::string msg = parse_error(big);
  EXPECT_NE(msg.find("more than the limit of 1048576"), std::string::npos) << msg.substr(0, 200);
  EXPECT_NO_THROW(Template::parse("{# " + std::string(kMaxTemplateBytes - 10, 'x') + " #}"));
}

}  // namespace
