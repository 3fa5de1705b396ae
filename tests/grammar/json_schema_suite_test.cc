// The JSON-Schema suite (tests/data/grammar/json_schema_suite.json, tools/gen_json_schema_suite.py:
// hundreds of schemas, instances labelled by the `jsonschema` package): the compiled grammar must
// reject every invalid instance (soundness: nothing it lets a model write is invalid) and accept
// every valid one written plainly (ASCII, no escape sequence), completing after it. XGrammar is
// stricter than JSON Schema on escaped or non-ASCII text: it counts min/maxLength on the written
// characters and matches enum/const strings in one spelling ("é", not "\u00e9"); such valid
// instances may be rejected (a narrower choice for the model, never an invalid output), and are
// counted. Byte-level vocabulary (one token per byte): the check is the grammar's, not a tokenizer's.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/error.h"
#include "grammar/grammar.h"
#include "byte_vocabulary.h"

namespace oxyd::grammar {
namespace {

using json = nlohmann::ordered_json;  // keeps the schema's property order (the grammar follows it)

// Whether `text` is a complete sentence of the matcher's grammar.
bool accepts(Matcher& m, const std::string& text) { return m.accept_string(text) && m.is_completed(); }

TEST(JsonSchemaSuite, GrammarAgreesWithJsonschema) {
  std::ifstream f(std::string(OXYD_TEST_DATA_DIR) + "/grammar/json_schema_suite.json");
  ASSERT_TRUE(f) << "missing suite";
  const json suite = json::parse(f);
  ASSERT_GE(suite["cases"].size(), 200u);
  GrammarCompiler compiler(byte_vocabulary());
  size_t n_valid = 0, n_invalid = 0, failures = 0, n_escaped_rejected = 0, n_escaped = 0;
  for (size_t c = 0; c < suite["cases"].size(); ++c) {
    const json& cs = suite["cases"][c];
    // strict=false: the schema's own additionalProperties decides, as for the jsonschema oracle.
    auto g = compiler.compile({GrammarSpec::Kind::JSON_SCHEMA, cs["schema"].dump(), /*strict=*/false});
    for (const json& inst : cs["instances"]) {
      Matcher m(g, {});
      const std::string text = inst["json"];
      const bool want = inst["valid"];
      const bool got = accepts(m, text);
      (want ? n_valid : n_invalid)++;
      const bool plain = std::all_of(text.begin(), text.end(), [](char ch) { return ch != '\\' && (unsigned char)ch < 0x80; });
      if (want && !plain) {
        ++n_escaped;
        n_escaped_rejected += !got;
        continue;
      }
      if (got != want && ++failures <= 20)
        ADD_FAILURE() << "case " << c << " schema " << cs["schema"].dump() << "\n  instance " << text
                      << "\n  jsonschema: " << (want ? "valid" : "invalid") << ", grammar: " << (got ? "accepts" : "rejects");
    }
  }
  EXPECT_EQ(failures, 0u);
  EXPECT_GE(n_valid - n_escaped, 300u);
  std::printf("%zu schemas: %zu valid instances (%zu escaped/non-ASCII, %zu of them rejected), %zu invalid\n",
              suite["cases"].size(), n_valid, n_escaped, n_escaped_rejected, n_invalid);
  EXPECT_GE(n_invalid, 600u);
}

// A valid instance ends with the stop token allowed (and nothing else); mid-way the stop token is
// masked.
TEST(JsonSchemaSuite, StopTokenOnlyWhenComplete) {
  GrammarCompiler compiler(byte_vocabulary());
  auto g = compiler.compile({GrammarSpec::Kind::JSON_SCHEMA, R"({"type":"object","properties":{"a":{"type":"integer"}},"required":["a"]})", true});
  Matcher m(g, {});
  std::vector<float> logits(257, 0.0f);
  m.apply_mask(logits);
  EXPECT_EQ(logits[256], -INFINITY);
  EXPECT_EQ(logits['{'], 0.0f);
  EXPECT_EQ(logits['['], -INFINITY);
  ASSERT_TRUE(m.accept_string("{\"a\": 12}"));
  std::fill(logits.begin(), logits.end(), 0.0f);
  m.apply_mask(logits);
  for (int i = 0; i < 256; ++i) EXPECT_EQ(logits[size_t(i)], -INFINITY) << i;
  EXPECT_EQ(logits[256], 0.0f);
  EXPECT_TRUE(m.accept(256));
  EXPECT_TRUE(m.is_terminated());
}

TEST(GrammarCompiler, InvalidSchemaIsInvalidArgument) {
  GrammarCompiler compiler(byte_vocabulary());
  EXPECT_THROW(compiler.compile({GrammarSpec::Kind::JSON_SCHEMA, R"({"type": "object", "properties": 5})", true}), Error);
  EXPECT_THROW(compiler.compile({GrammarSpec::Kind::JSON_SCHEMA, "not json", true}), Error);
  EXPECT_THROW(compiler.compile({GrammarSpec::Kind::REGEX, "a(b", true}), Error);
  EXPECT_THROW(compiler.compile({GrammarSpec::Kind::EBNF, "root ::= undefined_rule", true}), Error);
}

TEST(GrammarCompiler, RegexEbnfAndJsonObject) {
  GrammarCompiler compiler(byte_vocabulary());
  {
    Matcher m(compiler.compile({GrammarSpec::Kind::REGEX, "[0-9]{3}-[a-z]+", true}), {});
    EXPECT_TRUE(accepts(m, "123-abc"));
  }
  {
    Matcher m(compiler.compile({GrammarSpec::Kind::REGEX, "[0-9]{3}-[a-z]+", true}), {});
    EXPECT_FALSE(m.accept_string("12a"));
  }
  {  // GBNF as llama.cpp writes it
    const std::string g = "root ::= \"yes\" | \"no\" | num\nnum ::= [1-9] [0-9]*";
    Matcher a(compiler.compile({GrammarSpec::Kind::EBNF, g, true}), {});
    EXPECT_TRUE(accepts(a, "no"));
    Matcher b(compiler.compile({GrammarSpec::Kind::EBNF, g, true}), {});
    EXPECT_TRUE(accepts(b, "1203"));
    Matcher c(compiler.compile({GrammarSpec::Kind::EBNF, g, true}), {});
    EXPECT_FALSE(c.accept_string("maybe"));
  }
  {  // json_object: an object, any keys; not an array
    Matcher a(compiler.compile({GrammarSpec::Kind::JSON_OBJECT, "", false}), {});
    EXPECT_TRUE(accepts(a, "{\"x\": [1, {\"y\": null}], \"z\": \"w\"}"));
    Matcher b(compiler.compile({GrammarSpec::Kind::JSON_OBJECT, "", false}), {});
    EXPECT_FALSE(b.accept_string("[1]"));
  }
}

TEST(Matcher, RollbackRestoresState) {
  GrammarCompiler compiler(byte_vocabulary());
  Matcher m(compiler.compile({GrammarSpec::Kind::REGEX, "ab|ac", true}), {});
  ASSERT_TRUE(m.accept('a'));
  ASSERT_TRUE(m.accept('b'));
  EXPECT_FALSE(m.accept('c'));
  m.rollback(1);
  EXPECT_TRUE(m.accept('c'));
  EXPECT_TRUE(m.is_completed());
}

}  // namespace
}  // namespace oxyd::grammar
