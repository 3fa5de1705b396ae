// server/protocol robustness: every value of the SDK-serialized request bodies (the goldens of
// tools/gen_openai_shape_goldens.py), containers included, replaced in turn by each of a set of
// wrong-typed or extreme values. The parser must either accept the body or throw ApiError 400:
// never another exception (a nlohmann type_error escaping would be a 500), never a crash.
#include <gtest/gtest.h>

#include <fstream>

#include "server/protocol.h"

namespace oxyd::server::protocol {
namespace {

void pointers(const json& v, const json::json_pointer& at, std::vector<json::json_pointer>& out) {
  out.push_back(at);
  if (v.is_object()) {
    for (const auto& [k, x] : v.items()) pointers(x, at / k, out);
  } else if (v.is_array()) {
    for (size_t i = 0; i < v.size(); ++i) pointers(v[i], at / i, out);
  }
}

TEST(ProtocolRobustness, MutatedSdkBodiesGiveAcceptOr400) {
  std::ifstream f(std::string(OXYD_SOURCE_DIR) + "/tests/data/server/openai_shapes.json");
  const json requests = json::parse(f)["requests"];
  const json replacements = json::parse(R"([null, true, -1, 0, 2147483648, -9223372036854775808,
      18446744073709551615, 1.5, -1e308, "", "x", [], [1], {}, {"type": "text"}, [[[]]], [{"a": null}]])");
  int accepted = 0, rejected = 0;
  for (const json& r : requests) {
    const bool chat = r["endpoint"] == "chat";
    std::vector<json::json_pointer> ptrs;
    pointers(r["body"], json::json_pointer(), ptrs);
    for (const auto& p : ptrs) {
      if (p.empty()) continue;
      for (const json& rep : replacements) {
        json body = r["body"];
        body[p] = rep;
        SCOPED_TRACE(p.to_string() + " = " + rep.dump());
        try {
          if (chat) {
            (void)parse_chat_request(body);
          } else {
            (void)parse_completion_request(body);
          }
          ++accepted;
        } catch (const ApiError& e) {
          EXPECT_EQ(e.status, 400) << e.what();
          EXPECT_FALSE(std::string(e.what()).empty());
          ++rejected;
        } catch (const std::exception& e) {
          ADD_FAILURE() << "non-ApiError exception: " << e.what();
        }
      }
    }
  }
  EXPECT_GT(accepted, 100);
  EXPECT_GT(rejected, 500);
}

}  // namespace
}  // namespace oxyd::server::protocol
