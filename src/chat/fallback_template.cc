// Fallback templates (see fallback_template.h). Both render a text conversation exactly as the
// family's official template does (tests/chat/fallback_template_test.cc compares them with
// google-gemma-3-it.jinja and Qwen3's template); message content may be a string or a list of
// {"type": "text", "text": ...} parts.
#include "chat/fallback_template.h"

namespace oxyd::chat {
namespace {

// Gemma turns: system text prefixes the first turn, "assistant" is called "model", BOS first.
constexpr const char* kGemma = R"JINJA({{ bos_token }}
{%- set ns = namespace(prefix='', text='') -%}
{%- for message in messages -%}
    {%- if message['content'] is string -%}
        {%- set ns.text = message['content'] -%}
    {%- else -%}
        {%- set ns.text = '' -%}
        {%- for part in message['content'] if part['type'] == 'text' -%}
            {%- set ns.text = ns.text + part['text'] -%}
        {%- endfor -%}
    {%- endif -%}
    {%- if loop.first and message['role'] == 'system' -%}
        {%- set ns.prefix = ns.text + '\n\n' -%}
    {%- else -%}
        {{- '<start_of_turn>' + ('model' if message['role'] == 'assistant' else message['role']) + '\n' -}}
        {{- ns.prefix + (ns.text | trim) + '<end_of_turn>\n' -}}
        {%- set ns.prefix = '' -%}
    {%- endif -%}
{%- endfor -%}
{%- if add_generation_prompt -%}
    {{- '<start_of_turn>model\n' -}}
{%- endif -%}
)JINJA";

// ChatML: <|im_start|>role\ncontent<|im_end|>\n per message, no BOS.
constexpr const char* kChatMl = R"JINJA({%- set ns = namespace(text='') -%}
{%- for message in messages -%}
    {%- if message['content'] is string -%}
        {%- set ns.text = message['content'] -%}
    {%- else -%}
        {%- set ns.text = '' -%}
        {%- for part in message['content'] if part['type'] == 'text' -%}
            {%- set ns.text = ns.text + part['text'] -%}
        {%- endfor -%}
    {%- endif -%}
    {{- '<|im_start|>' + message['role'] + '\n' + ns.text + '<|im_end|>\n' -}}
{%- endfor -%}
{%- if add_generation_prompt -%}
    {{- '<|im_start|>assistant\n' -}}
{%- endif -%}
)JINJA";

}  // namespace

std::optional<FallbackTemplate> fallback_chat_template(const std::function<bool(std::string_view)>& has_token) {
  if (has_token("<start_of_turn>") && has_token("<end_of_turn>")) return FallbackTemplate{"gemma", kGemma};
  if (has_token("<|im_start|>") && has_token("<|im_end|>")) return FallbackTemplate{"chatml", kChatMl};
  return std::nullopt;
}

}  // namespace oxyd::chat
