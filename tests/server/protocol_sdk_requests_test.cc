// server/protocol request parsing on bodies exactly as the official openai SDK serializes them
// (recorded through a mock transport by tools/gen_openai_shape_goldens.py), with the values the
// parse must produce. The body text goes through parse_body first, as over HTTP.
#include <gtest/gtest.h>

#include <fstream>

#include "server/protocol.h"

namespace oxyd::server::protocol {
namespace {

const json& requests() {
  static const json j = [] {
    std::ifstream f(std::string(OXYD_SOURCE_DIR) + "/tests/data/server/openai_shapes.json");
    return json::parse(f)["requests"];
  }();
  return j;
}

void check_common(const CommonParams& c, const json& e) {
  EXPECT_FLOAT_EQ(c.sampling.temperature, e["temperature"].get<float>());
  EXPECT_FLOAT_EQ(c.sampling.top_p, e["top_p"].get<float>());
  EXPECT_EQ(c.n, e["n"].get<int>());
  EXPECT_EQ(c.stop, e["stop"].get<std::vector<std::string>>());
  if (e["max_tokens"].is_null()) {
    EXPECT_FALSE(c.max_tokens.has_value());
  } else {
    EXPECT_EQ(c.max_tokens, std::optional<int32_t>(e["max_tokens"].get<int32_t>()));
  }
  if (e["seed"].is_null()) {
    EXPECT_FALSE(c.sampling.seed.has_value());
  } else {
    EXPECT_EQ(c.sampling.seed, std::optional<uint64_t>(e["seed"].get<uint64_t>()));
  }
  EXPECT_EQ(c.sampling.logprobs, e["sampling_logprobs"].get<int32_t>());
  EXPECT_EQ(c.sampling.top_k, e["top_k"].get<int32_t>());
  EXPECT_EQ(c.stream, e["stream"].get<bool>());
  EXPECT_EQ(c.include_usage, e["include_usage"].get<bool>());
  EXPECT_EQ(c.model, "m");
}

TEST(ProtocolSdkRequests, ParsesWhatTheSdkSends) {
  ASSERT_EQ(requests().size(), 4u);
  for (const json& r : requests()) {
    SCOPED_TRACE(r["body"].dump());
    const json body = parse_body(r["body"].dump());
    const json& e = r["expect"];
    if (r["endpoint"] == "chat") {
      const ChatRequest c = parse_chat_request(body);
      check_common(c.common, e);
      EXPECT_EQ(c.messages, e["messages"]) << c.messages.dump();
      EXPECT_EQ(c.chat_template_kwargs, e["chat_template_kwargs"]);
      if (body.contains("tools")) {
        EXPECT_EQ(c.tools, body["tools"]);
        EXPECT_EQ(c.tool_choice, body["tool_choice"]);
        EXPECT_TRUE(c.logprobs);
        EXPECT_EQ(c.top_logprobs, body["top_logprobs"].get<int32_t>());
        ASSERT_EQ(c.common.sampling.logit_bias.size(), 2u);
        EXPECT_EQ(c.common.sampling.logit_bias[0], (std::pair<int32_t, float>{15, -100.f}));
      }
    } else {
      const CompletionRequest c = parse_completion_request(body);
      check_common(c.common, e);
      EXPECT_EQ(c.echo, e["echo"].get<bool>());
      ASSERT_EQ(c.prompts.size(), e["prompts"].size());
      for (size_t i = 0; i < c.prompts.size(); ++i) {
        const json& p = e["prompts"][i];
        EXPECT_EQ(c.prompts[i].is_ids, p.is_array());
        if (p.is_array()) {
          EXPECT_EQ(c.prompts[i].ids, p.get<std::vector<int32_t>>());
        } else {
          EXPECT_EQ(c.prompts[i].text, p.get<std::string>());
        }
      }
    }
  }
}

}  // namespace
}  // namespace oxyd::server::protocol
