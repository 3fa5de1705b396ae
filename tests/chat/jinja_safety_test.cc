// Safety limits and API contracts of the Jinja engine: hostile templates end in a clear
// TemplateError (loop budget, call depth, output size, wall time, parse nesting) instead of a
// hang or crash; parse errors name line and column; one compiled Template renders concurrently.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "chat/jinja/template.h"

using json = nlohmann::ordered_json;
using namespace oxyd::chat::jinja;

namespace {

ErrorKind render_error(const std::string& src, const RenderOptions& opts, std::string* msg = nullptr) {
  try {
    Template::parse(src).render(json::object(), opts);
  } catch (const TemplateError& e) {
    if (msg) *msg = e.what();
    return e.kind();
  }
  ADD_FAILURE() << "no error for " << src;
  return ErrorKind::TEMPLATE;
}

TEST(JinjaSafety, LoopBudget) {
  RenderOptions o;
  o.limits.max_loop_iterations = 100000;
  std::string msg;
  EXPECT_EQ(render_error("{% for i in range(1000) %}{% for j in range(1000) %}{% endfor %}{% endfor %}", o, &msg),
            ErrorKind::LIMIT);
  EXPECT_NE(msg.find("loop iterations"), std::string::npos) << msg;
}

TEST(JinjaSafety, RecursionDepth) {
  RenderOptions o;
  std::string msg;
  EXPECT_EQ(render_error("{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}", o, &msg), ErrorKind::LIMIT);
  EXPECT_NE(msg.find("nested macro calls"), std::string::npos) << msg;
}

TEST(JinjaSafety, OutputSize) {
  RenderOptions o;
  o.limits.max_output_bytes = 1 << 20;
  EXPECT_EQ(render_error("{% for i in range(100000) %}{{ 'x' * 1000 }}{% endfor %}", o), ErrorKind::LIMIT);
  EXPECT_EQ(render_error("{{ 'x' * 10000000000 }}", o), ErrorKind::LIMIT);
  EXPECT_EQ(render_error("{% set ns = namespace(s='xxxxxxxx') %}{% for i in range(40) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}", o),
            ErrorKind::LIMIT);
}

// An empty sequence times a huge count is empty, at once (jinja_fuzz found `[] * 3 ** 20` looping
// 3.5e9 times past its 10 s timeout; Python gives [] and '').
TEST(JinjaSafety, EmptySequenceTimesHugeCount) {
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(Template::parse("{{ ([] * 3 ** 20)|length }}|{{ '' * 10000000000 }}|{{ (() * 3 ** 20)|length }}")
                .render(json::object()),
            "0||0");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
}

TEST(JinjaSafety, WallTime) {
  RenderOptions o;
  o.limits.max_wall_ms = 20;
  o.limits.max_loop_iterations = int64_t{1} << 40;
  std::string msg;
  EXPECT_EQ(render_error("{% for i in range(100000) %}{% for j in range(100000) %}{{ j|string|length }}{% endfor %}{% endfor %}",
                         o, &msg),
            ErrorKind::LIMIT);
  EXPECT_NE(msg.find("time limit"), std::string::npos) << msg;
}

TEST(JinjaSafety, SandboxRange) {
  std::string msg;
  EXPECT_EQ(render_error("{{ range(100001)|length }}", {}, &msg), ErrorKind::OVERFLOW);
}

TEST(JinjaSafety, ParseErrorsNameLineAndColumn) {
  try {
    Template::parse("ok\n{% if x %}\n{{ 1 + }}\n{% endif %}");
    FAIL();
  } catch (const TemplateError& e) {
    EXPECT_EQ(e.kind(), ErrorKind::SYNTAX);
    EXPECT_EQ(e.line(), 3);
    EXPECT_NE(std::string(e.what()).find("line 3, column"), std::string::npos) << e.what();
  }
  EXPECT_THROW(Template::parse("{{ " + std::string(5000, '(') + " }}"), TemplateError);
  EXPECT_THROW(Template::parse("{{ " + std::string(5000, '-') + "1 }}"), TemplateError);
  EXPECT_THROW(Template::parse("{{ " + std::string(3000, '[') + std::string(3000, ']') + " }}"), TemplateError);
  EXPECT_THROW(Template::parse(std::string(3000, '{') + "% if x %}"), TemplateError);
  std::string deep;
  for (int i = 0; i < 500; ++i) deep += "{% if x %}";
  EXPECT_THROW(Template::parse(deep), TemplateError);
}

TEST(JinjaSafety, NoFileAccess) {
  EXPECT_THROW(Template::parse("{% include '/etc/passwd' %}"), TemplateError);
  EXPECT_THROW(Template::parse("{% extends 'base.html' %}"), TemplateError);
  EXPECT_THROW(Template::parse("{% import 'm' as m %}"), TemplateError);
}

TEST(JinjaApi, ConcurrentRenders) {
  Template t = Template::parse(
      "{%- set ns = namespace(n=0) %}{% for m in messages %}{% set ns.n = ns.n + 1 %}{{ m.role }}:{{ m.content|trim }}|"
      "{% endfor %}{{ ns.n }}");
  json ctx = {{"messages", json::array()}};
  for (int i = 0; i < 40; ++i) ctx["messages"].push_back({{"role", i % 2 ? "user" : "assistant"}, {"content", " m" + std::to_string(i)}});
  const std::string want = t.render(ctx);
  std::vector<std::thread> th;
  std::atomic<int> bad{0};
  for (int k = 0; k < 4; ++k)
    th.emplace_back([&] {
      for (int i = 0; i < 200; ++i)
        if (t.render(ctx) != want) ++bad;
    });
  for (auto& x : th) x.join();
  EXPECT_EQ(bad.load(), 0);
  EXPECT_NE(want.find("40"), std::string::npos);
}

TEST(JinjaApi, StrftimeHook) {
  RenderOptions o;
  o.hooks.now = [] {
    std::tm tm{};
    tm.tm_year = 124, tm.tm_mon = 1, tm.tm_mday = 29;
    return tm;
  };
  EXPECT_EQ(Template::parse("{{ strftime_now('%Y-%m-%d') }}").render(json::object(), o), "2024-02-29");
}

}  // namespace
