// libFuzzer target for the Jinja engine: the input is a template; it is parsed and rendered on
// a fixed chat context (messages with tool calls and reasoning, tools, flags) under tight safety
// limits. Any TemplateError is an accepted outcome; crashes, sanitizer reports, hangs and other
// exception types are bugs. Seeds: fuzz/seeds/jinja (the real templates + feature snippets).
//   build-fuzz/bin/jinja_fuzz -max_total_time=300 -max_len=65536 -timeout=10 fuzz/corpus-jinja fuzz/seeds/jinja
// libFuzzer's default -max_len of 4096 could never make a 20,000-link chain (`x.a.a.a...`, `1+1+...`):
// fuzz-flags: -max_len=65536 -timeout=10
#include <cstddef>
#include <cstdint>
#include <string>

#include "chat/chat_template.h"

using json = nlohmann::ordered_json;

static const json& context() {
  static const json ctx = json::parse(R"({
    "messages": [
      {"role": "system", "content": "sys"},
      {"role": "user", "content": [{"type": "text", "text": "hi"}]},
      {"role": "assistant", "content": "", "reasoning_content": "think",
       "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": {"a": [1, 2.5, null, true]}}}]},
      {"role": "tool", "tool_call_id": "c1", "content": "{\"r\": 1}"},
      {"role": "assistant", "content": "Grüße 🎉"}
    ],
    "tools": [{"type": "function", "function": {"name": "f", "description": "d",
               "parameters": {"type": "object", "properties": {"a": {"type": "array", "items": {"type": "number"}}}}}}],
    "documents": null, "add_generation_prompt": true, "bos_token": "<s>", "eos_token": "</s>",
    "enable_thinking": false, "reasoning_effort": "high"
  })");
  return ctx;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 64 * 1024) return 0;
  std::string src(reinterpret_cast<const char*>(data), size);
  oxyd::chat::jinja::RenderOptions opts;
  opts.limits.max_loop_iterations = 20000;
  opts.limits.max_output_bytes = 1 << 20;
  opts.limits.max_call_depth = 64;
  opts.limits.max_wall_ms = 2000;
  try {
    auto t = oxyd::chat::jinja::Template::parse(src);
    (void)t.render(context(), opts);
  } catch (const oxyd::chat::jinja::TemplateError&) {
  }
  return 0;
}
