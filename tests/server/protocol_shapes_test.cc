// server/protocol response builders against bodies validated by the official openai SDK's pydantic
// types (tests/data/server/openai_shapes.json, made by tools/gen_openai_shape_goldens.py), and the
// UTF-8 helpers against Python's bytes.decode(errors="replace") from the same script.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

#include "server/protocol.h"
#include "server/protocol_detail.h"

namespace oxyd::server::protocol {
namespace {

const json& goldens() {
  static const json j = [] {
    std::ifstream f(std::string(OXYD_SOURCE_DIR) + "/tests/data/server/openai_shapes.json");
    return json::parse(f);
  }();
  return j;
}

std::string bytes_str(const json& a) {
  std::string s;
  for (const json& b : a) s += static_cast<char>(b.get<int>());
  return s;
}

float lp_in(const json& v) { return v.is_null() ? -INFINITY : static_cast<float>(v.get<double>()); }

std::optional<std::vector<TokenLogprob>> tokens_in(const json& v) {
  if (v.is_null()) return std::nullopt;
  std::vector<TokenLogprob> out;
  for (const json& t : v) {
    TokenLogprob tl;
    tl.token = bytes_str(t["bytes"]);  // bytes left empty: the builder takes them from the token text
    tl.logprob = lp_in(t["logprob"]);
    for (const json& x : t["top"]) tl.top.emplace_back(bytes_str(x["bytes"]), lp_in(x["logprob"]));
    out.push_back(std::move(tl));
  }
  return out;
}

Usage usage_in(const json& u) {
  return {u["prompt_tokens"].get<int64_t>(), u["completion_tokens"].get<int64_t>(), u["cached_tokens"].get<int64_t>()};
}

CompletionChoice completion_choice_in(const json& c) {
  CompletionChoice cc;
  cc.index = c["index"];
  cc.text = c["text"];
  cc.finish_reason = c["finish_reason"];
  cc.logprobs = tokens_in(c["logprobs"]);
  cc.first_logprob_null = c["first_logprob_null"];
  cc.text_offset_start = c["text_offset_start"];
  return cc;
}

json build(const json& c) {
  const std::string kind = c["kind"];
  const json& in = c["input"];
  if (kind == "error") {
    const ApiError e(in["status"], in["type"], in["message"], in["param"], in["code"]);
    return json::parse(error_body(e));
  }
  const std::string id = in["id"], model = in["model"];
  const int64_t created = in["created"];
  if (kind == "chat_completion") {
    std::vector<ChatChoice> choices;
    for (const json& ch : in["choices"])
      choices.push_back({ch["index"], ch["content"], ch["finish_reason"], tokens_in(ch["logprobs"])});
    return chat_completion(id, created, model, choices, usage_in(in["usage"]));
  }
  if (kind == "chat_chunk") {
    const json& d = in["delta"];
    ChatDelta cd;
    cd.index = d["index"];
    cd.role = d.value("role", false);
    if (d.contains("content")) cd.content = d["content"].get<std::string>();
    if (d.contains("finish_reason")) cd.finish_reason = d["finish_reason"].get<std::string>();
    if (d.contains("logprobs")) cd.logprobs = tokens_in(d["logprobs"]);
    return chat_chunk(id, created, model, cd, in["include_usage"]);
  }
  if (kind == "chat_usage_chunk") return chat_usage_chunk(id, created, model, usage_in(in["usage"]));
  if (kind == "text_completion") {
    std::vector<CompletionChoice> choices;
    for (const json& ch : in["choices"]) choices.push_back(completion_choice_in(ch));
    return text_completion(id, created, model, choices, usage_in(in["usage"]));
  }
  if (kind == "completion_chunk")
    return completion_chunk(id, created, model, completion_choice_in(in["choice"]), in["include_usage"]);
  if (kind == "completion_usage_chunk") return completion_usage_chunk(id, created, model, usage_in(in["usage"]));
  ADD_FAILURE() << "unknown kind " << kind;
  return nullptr;
}

TEST(ProtocolShapes, BuildersMatchSdkValidatedGoldens) {
  ASSERT_GE(goldens()["cases"].size(), 15u);
  for (const json& c : goldens()["cases"]) {
    SCOPED_TRACE(c["name"].get<std::string>());
    const json got = build(c);
    // Value equality, key order aside (clients never depend on it).
    EXPECT_EQ(nlohmann::json::parse(got.dump()), nlohmann::json::parse(c["expected"].dump()))
        << "got      " << got.dump() << "\nexpected " << c["expected"].dump();
    // Whatever the input bytes, what we send is valid UTF-8 JSON (dump would throw otherwise).
    EXPECT_NO_THROW((void)got.dump());
  }
}

TEST(ProtocolShapes, Utf8HelpersMatchPython) {
  for (const json& s : goldens()["utf8"]) {
    const std::string in = bytes_str(s["bytes"]);
    SCOPED_TRACE(s["bytes"].dump());
    EXPECT_EQ(detail::invalid_utf8_at(in) == std::string::npos, s["valid"].get<bool>());
    const std::string out = detail::sanitize_utf8(in);
    EXPECT_EQ(out, bytes_str(s["replaced"]));
    EXPECT_EQ(detail::utf8_length(out), s["length"].get<int64_t>());
  }
}

TEST(ProtocolShapes, SseFraming) {
  const json j = {{"a", 1}, {"b", "x\ny"}};
  EXPECT_EQ(sse(j), "data: {\"a\":1,\"b\":\"x\\ny\"}\n\n");
  EXPECT_EQ(sse_done(), "data: [DONE]\n\n");
  // A stray invalid byte never makes sse() throw.
  json bad = {{"t", std::string("\xff")}};
  EXPECT_EQ(sse(bad), "data: {\"t\":\"\xEF\xBF\xBD\"}\n\n");
}

TEST(ProtocolShapes, ErrorMapping) {
  struct Case { ErrorCode code; int status; const char* type; };
  for (const Case& c : {Case{ErrorCode::INVALID_ARGUMENT, 400, "invalid_request_error"},
                        Case{ErrorCode::UNSUPPORTED, 400, "invalid_request_error"},
                        Case{ErrorCode::NOT_FOUND, 404, "not_found_error"},
                        Case{ErrorCode::OUT_OF_MEMORY, 500, "server_error"}, Case{ErrorCode::IO, 500, "server_error"},
                        Case{ErrorCode::INTERNAL, 500, "server_error"}}) {
    const ApiError e = from_error(Error(c.code, "what happened"));
    EXPECT_EQ(e.status, c.status);
    EXPECT_EQ(e.type, c.type);
    EXPECT_STREQ(e.what(), "what happened");
    const json body = json::parse(error_body(e));
    EXPECT_EQ(body["error"]["message"], "what happened");
    EXPECT_TRUE(body["error"]["param"].is_null());
    EXPECT_TRUE(body["error"]["code"].is_null());
  }
  const ApiError b = bad_request("m", "temperature", "invalid_type");
  EXPECT_EQ(b.status, 400);
  EXPECT_EQ(json::parse(error_body(b))["error"]["param"], "temperature");
  // A message quoting invalid client bytes still yields a valid body.
  EXPECT_TRUE(json::accept(error_body(bad_request(std::string("bad \xc3")))));
}

TEST(ProtocolShapes, NewIdIsRandomAlnum) {
  const std::string a = new_id("chatcmpl"), b = new_id("chatcmpl-"), c = new_id("cmpl");
  ASSERT_EQ(a.size(), 9u + 24u);
  EXPECT_EQ(a.rfind("chatcmpl-", 0), 0u);
  EXPECT_EQ(b.rfind("chatcmpl-", 0), 0u);
  EXPECT_EQ(b.size(), a.size());
  EXPECT_EQ(c.rfind("cmpl-", 0), 0u);
  for (char ch : a.substr(9)) EXPECT_TRUE(std::isalnum(static_cast<unsigned char>(ch)));
  EXPECT_NE(a, b);
}

}  // namespace
}  // namespace oxyd::server::protocol
