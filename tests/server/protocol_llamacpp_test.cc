// server/protocol llama.cpp-server extras (/tokenize, /detokenize, /apply-template) in the shapes of
// llama.cpp's tools/server README: defaults add_special=false, parse_special=true,
// with_pieces=false; a piece that is not valid UTF-8 is sent as its byte values.
#include <gtest/gtest.h>

#include "server/protocol.h"

namespace oxyd::server::protocol {
namespace {

TEST(ProtocolLlamaCpp, Tokenize) {
  TokenizeRequest r = parse_tokenize_request(json::parse(R"({"content": "hi"})"));
  EXPECT_EQ(r.content, "hi");
  EXPECT_FALSE(r.add_special);
  EXPECT_TRUE(r.parse_special);
  EXPECT_FALSE(r.with_pieces);
  r = parse_tokenize_request(json::parse(R"({"content": "x", "add_special": true, "parse_special": false,
                                            "with_pieces": true})"));
  EXPECT_TRUE(r.add_special);
  EXPECT_FALSE(r.parse_special);
  EXPECT_TRUE(r.with_pieces);
  // vLLM's field: "prompt", with add_special_tokens defaulting to true as vLLM's.
  r = parse_tokenize_request(json::parse(R"({"prompt": "Hello"})"));
  EXPECT_EQ(r.content, "Hello");
  EXPECT_TRUE(r.vllm);
  EXPECT_TRUE(r.add_special);
  r = parse_tokenize_request(json::parse(R"({"prompt": "Hello", "add_special_tokens": false})"));
  EXPECT_FALSE(r.add_special);
  EXPECT_FALSE(parse_tokenize_request(json::parse(R"({"content": "x"})")).vllm);
  // No input field (or both) is a 400 naming it, not an empty answer.
  for (const char* none : {"{}", R"({"model": "m"})", R"({"content": "a", "prompt": "b"})", R"({"prompt": null})"}) {
    SCOPED_TRACE(none);
    try {
      parse_tokenize_request(json::parse(none));
      ADD_FAILURE() << "accepted";
    } catch (const ApiError& e) {
      EXPECT_EQ(e.status, 400);
      EXPECT_TRUE(e.param == "content" || e.param == "prompt") << e.param;
    }
  }
  EXPECT_EQ(tokenize_response_vllm({5, 6}, 128),
            json::parse(R"({"count": 2, "max_model_len": 128, "tokens": [5, 6], "token_strs": null})"));
  for (const char* bad : {R"({"content": 1})", R"({"prompt": 1})", R"({"content": "a", "add_special": "yes"})",
                          R"({"content": "a", "with_pieces": 1})"}) {
    SCOPED_TRACE(bad);
    EXPECT_THROW(parse_tokenize_request(json::parse(bad)), ApiError);
  }

  EXPECT_EQ(tokenize_response({1, 2}, nullptr), json::parse(R"({"tokens": [1, 2]})"));
  const std::vector<std::string> pieces = {"He", "\xe2\x82"};
  EXPECT_EQ(tokenize_response({7, 9}, &pieces),
            json::parse(R"({"tokens": [{"id": 7, "piece": "He"}, {"id": 9, "piece": [226, 130]}]})"));
}

TEST(ProtocolLlamaCpp, DetokenizeAndTemplate) {
  EXPECT_EQ(parse_detokenize_request(json::parse(R"({"tokens": [3, 0, 5]})")), (std::vector<int32_t>{3, 0, 5}));
  EXPECT_TRUE(parse_detokenize_request(json::object()).empty());
  for (const char* bad : {R"({"tokens": "1 2"})", R"({"tokens": [1, -1]})", R"({"tokens": [1.5]})"}) {
    SCOPED_TRACE(bad);
    try {
      parse_detokenize_request(json::parse(bad));
      ADD_FAILURE() << "accepted";
    } catch (const ApiError& e) {
      EXPECT_EQ(e.status, 400);
      EXPECT_EQ(e.param.rfind("tokens", 0), 0u) << e.param;
    }
  }
  EXPECT_EQ(detokenize_response("a\xc3"), json::parse(R"({"content": "a\ufffd"})"));
  EXPECT_EQ(apply_template_response("<s>[INST] hi"), json::parse(R"({"prompt": "<s>[INST] hi"})"));
}

}  // namespace
}  // namespace oxyd::server::protocol
