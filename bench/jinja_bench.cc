// Chat-template render speed: a 50-message conversation with 10 tools through the Qwen3 template
// (issue 4 target: well under 1 ms per render). Run from the repo root:
//   build/bin/jinja_bench [template.jinja] [--dump ctx.json]
// --dump writes the exact input (and our output to <file>.out) so tools/jinja_peer_bench.py can
// time transformers on it and check the two renders are identical.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "chat/chat_template.h"

using json = nlohmann::ordered_json;
using Clock = std::chrono::steady_clock;

static json make_tools() {
  json tools = json::array();
  for (int i = 0; i < 10; ++i) {
    json params = {{"type", "object"},
                   {"properties",
                    {{"query", {{"type", "string"}, {"description", "What to look up"}}},
                     {"limit", {{"type", "integer"}, {"description", "Max results"}, {"default", 10}}},
                     {"filters",
                      {{"type", "object"},
                       {"properties", {{"lang", {{"type", "string"}, {"enum", {"en", "fr", "de"}}}},
                                       {"tags", {{"type", "array"}, {"items", {{"type", "string"}}}}}}}}}}},
                   {"required", {"query"}}};
    tools.push_back({{"type", "function"},
                     {"function",
                      {{"name", "tool_" + std::to_string(i)},
                       {"description", "Tool number " + std::to_string(i) + " searches a corpus."},
                       {"parameters", params}}}});
  }
  return tools;
}

static json make_messages() {
  json msgs = json::array();
  msgs.push_back({{"role", "system"}, {"content", "You are a helpful assistant. Answer concisely."}});
  int turn = 0;
  while (msgs.size() < 50) {
    msgs.push_back({{"role", "user"}, {"content", "Question " + std::to_string(turn) + ": what does tool " +
                                                      std::to_string(turn % 10) + " say about topic " +
                                                      std::to_string(turn * 7) + "?"}});
    if (turn % 3 == 1 && msgs.size() + 3 <= 50) {
      std::string id = "call_" + std::to_string(turn);
      msgs.push_back({{"role", "assistant"},
                      {"content", ""},
                      {"tool_calls", {{{"id", id}, {"type", "function"},
                                       {"function", {{"name", "tool_" + std::to_string(turn % 10)},
                                                     {"arguments", {{"query", "topic " + std::to_string(turn)}, {"limit", 3}}}}}}}}});
      msgs.push_back({{"role", "tool"}, {"tool_call_id", id}, {"content", "{\"results\": [\"a\", \"b\", \"c\"]}"}});
    }
    if (msgs.size() < 50)
      msgs.push_back({{"role", "assistant"},
                      {"content", "Here is a reasonably long answer for turn " + std::to_string(turn) +
                                      ", with several clauses, so that the content is not trivially short."},
                      {"reasoning_content", "Thinking about turn " + std::to_string(turn) + "."}});
    ++turn;
  }
  return msgs;
}

int main(int argc, char** argv) {
  std::string path = "tests/data/chat_templates/Qwen-Qwen3-0.6B.jinja";
  std::string dump;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--dump" && i + 1 < argc) dump = argv[++i];
    else path = a;
  }
  std::ifstream f(path);
  if (!f) {
    std::fprintf(stderr, "cannot open %s (run from the repo root or pass the template path)\n", path.c_str());
    return 1;
  }
  std::stringstream ss;
  ss << f.rdbuf();
  const std::string src = ss.str();

  oxyd::chat::ChatTemplateInputs in;
  in.messages = make_messages();
  in.tools = make_tools();
  in.add_generation_prompt = true;
  in.kwargs = {{"eos_token", "<|im_end|>"}, {"pad_token", "<|endoftext|>"}, {"enable_thinking", true}};
  if (!dump.empty()) {
    std::ofstream o(dump);
    o << json({{"messages", in.messages}, {"tools", in.tools}, {"kwargs", in.kwargs}}).dump();
  }

  auto t0 = Clock::now();
  const int kParse = 200;
  for (int i = 0; i < kParse - 1; ++i) (void)oxyd::chat::jinja::Template::parse(src);
  auto tmpl = oxyd::chat::jinja::Template::parse(src);
  double parse_us = std::chrono::duration<double, std::micro>(Clock::now() - t0).count() / kParse;

  std::string out = oxyd::chat::apply_chat_template(tmpl, in);  // warm-up
  if (!dump.empty()) std::ofstream(dump + ".out", std::ios::binary) << out;
  const int kIters = 2000;
  std::vector<double> us(kIters);
  for (int i = 0; i < kIters; ++i) {
    auto a = Clock::now();
    out = oxyd::chat::apply_chat_template(tmpl, in);
    us[i] = std::chrono::duration<double, std::micro>(Clock::now() - a).count();
  }
  std::sort(us.begin(), us.end());
  double mean = 0;
  for (double x : us) mean += x;
  mean /= kIters;
  std::printf("| what                                   | ours        |\n");
  std::printf("|----------------------------------------|-------------|\n");
  std::printf("| parse Qwen3 template                   | %8.1f us |\n", parse_us);
  std::printf("| render 50 msgs + 10 tools (mean)       | %8.1f us |\n", mean);
  std::printf("| render 50 msgs + 10 tools (median)     | %8.1f us |\n", us[kIters / 2]);
  std::printf("| render 50 msgs + 10 tools (p99)        | %8.1f us |\n", us[kIters * 99 / 100]);
  std::printf("output bytes: %zu; target: well under 1000 us per render. Peer (transformers/jinja2): "
              "tools/jinja_peer_bench.py on the --dump file.\n", out.size());
  return 0;
}
