#!/usr/bin/env python3
"""Chat-template goldens for tests/chat: transformers' own renderer on real templates.

Run from the repo root:
    /work/venv/bin/python tools/gen_template_goldens.py
Writes tests/data/chat/conversations.json (the inputs, before transformers' normalisation) and
tests/data/chat/goldens/<template>.jsonl, one line per render:
    {"conv": i, "kwargs": {...}, "output": "..."}   or   {"conv": i, "kwargs": {...}, "error": "..."}
kwargs holds every extra template variable (special tokens, add_generation_prompt, enable_thinking,
reasoning_effort). Rendering goes through transformers.utils.chat_template_utils.render_jinja_template
after _normalize_chat_messages, exactly the path of PreTrainedTokenizerBase.apply_chat_template, with
strftime_now pinned to FIXED_NOW so the goldens are stable.
"""
import copy
import datetime
import glob
import json
import os
import sys

from transformers import AutoTokenizer
from transformers.utils import chat_template_utils as ctu

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "tests", "data")
OUT = os.path.join(ROOT, "tests", "data", "chat")
FIXED_NOW = datetime.datetime(2025, 7, 26, 14, 5, 9)

WEATHER = {"type": "function", "function": {
    "name": "get_weather", "description": "Get the current weather for a city.",
    "parameters": {"type": "object", "properties": {
        "city": {"type": "string", "description": "City name, e.g. Paris"},
        "unit": {"type": "string", "enum": ["celsius", "fahrenheit"], "description": "Temperature unit"},
        "days": {"type": "integer", "description": "Forecast days", "default": 1}},
        "required": ["city"]}}}
BOOKING = {"type": "function", "function": {
    "name": "book_flight", "description": "Book a flight with passengers and options.",
    "parameters": {"type": "object", "properties": {
        "route": {"type": "object", "description": "Origin and destination",
                  "properties": {"from": {"type": "string"}, "to": {"type": "string"}},
                  "required": ["from", "to"]},
        "passengers": {"type": "array", "description": "People flying",
                       "items": {"type": "object", "properties": {
                           "name": {"type": "string"}, "age": {"type": "number"}}}},
        "flexible": {"type": "boolean", "description": "Dates may move"}},
        "required": ["route", "passengers"]}}}
NOPARAMS = {"type": "function", "function": {"name": "get_time", "description": "Current time.",
                                              "parameters": {"type": "object", "properties": {}}}}
TOOLS = [WEATHER, BOOKING]

U = lambda t: {"role": "user", "content": t}
A = lambda t: {"role": "assistant", "content": t}
S = lambda t: {"role": "system", "content": t}


def call(name, args, cid=None, as_str=False):
    c = {"type": "function", "function": {"name": name, "arguments": json.dumps(args) if as_str else args}}
    if cid:
        c["id"] = cid
    return c


def tool_msg(content, cid=None, name=None):
    m = {"role": "tool", "content": content}
    if cid:
        m["tool_call_id"] = cid
    if name:
        m["name"] = name
    return m


W_ARGS = {"city": "Paris", "unit": "celsius"}
B_ARGS = {"route": {"from": "CDG", "to": "NRT"}, "passengers": [{"name": "Zoë", "age": 31.5}, {"name": "Li", "age": 2}],
          "flexible": False, "note": None}

CONVS = [
    {"messages": [U("Hello")]},
    {"messages": [S("You are a helpful assistant."), U("Hi there")]},
    {"messages": [S("Be brief."), U("What is 2+2?"), A("4"), U("And 3+3?")]},
    {"messages": [U("one"), A("two"), U("three"), A("four"), U("five"), A("six"), U("seven")]},
    {"messages": [U("first user"), U("second user")]},
    {"messages": [U("question"), A("part one"), A("part two")]},
    {"messages": [U("")]},
    {"messages": [U("say nothing"), A(""), U("ok")]},
    {"messages": [S("Réponds en français ✓"), U("Grüße 你好 🎉 \"quoted\" \\ back\nnew line\ttab")]},
    {"messages": [{"role": "user", "content": [{"type": "text", "text": "Part A."}, {"type": "text", "text": "Part B."}]}]},
    {"messages": [{"role": "system", "content": [{"type": "text", "text": "System as parts."}]},
                  {"role": "user", "content": [{"type": "text", "text": "Hi"}]}, A("Hello!"),
                  {"role": "user", "content": [{"type": "text", "text": "More"}]}]},
    {"messages": [U("What's the weather in Paris?")], "tools": TOOLS},
    {"messages": [S("You can call tools."), U("Book me a flight.")], "tools": TOOLS},
    {"messages": [U("Weather in Paris?"),
                  {"role": "assistant", "content": "", "tool_calls": [call("get_weather", W_ARGS, "call_1")]},
                  tool_msg("{\"temp\": 21}", "call_1", "get_weather"), A("It is 21 °C in Paris.")], "tools": TOOLS},
    {"messages": [U("Weather in Paris?"),
                  {"role": "assistant", "content": None, "tool_calls": [call("get_weather", W_ARGS, "call_1", True)]},
                  tool_msg("{\"temp\": 21}", "call_1", "get_weather")], "tools": TOOLS},
    {"messages": [S("Tools allowed."), U("Weather in Paris and book CDG to NRT."),
                  {"role": "assistant", "content": "", "tool_calls": [call("get_weather", W_ARGS, "c1"),
                                                                      call("book_flight", B_ARGS, "c2")]},
                  tool_msg("sunny", "c1", "get_weather"), tool_msg("{\"booked\": true}", "c2", "book_flight"),
                  A("Done: sunny, and booked.")], "tools": TOOLS},
    {"messages": [U("Weather?"),
                  {"role": "assistant", "content": "", "tool_calls": [call("get_weather", {"city": "Oslo"})]},
                  tool_msg("cold")], "tools": TOOLS},
    {"messages": [U("Weather?"),
                  {"role": "assistant", "content": "Let me check.", "tool_calls": [call("get_weather", {"city": "Rome"}, "x9", True)]},
                  tool_msg("warm", "x9"), U("Thanks, and tomorrow?")], "tools": TOOLS},
    {"messages": [U("Why is the sky blue?"),
                  {"role": "assistant", "content": "Rayleigh scattering.", "reasoning_content": "Short wavelengths scatter more."},
                  U("And sunsets?")]},
    {"messages": [U("Hi"), A("Hello"), U("Think about 17*3."),
                  {"role": "assistant", "content": "51", "reasoning_content": "17*3 = 51."}]},
    {"messages": [U("Weather in Paris?"),
                  {"role": "assistant", "content": "", "reasoning_content": "I should call the tool.",
                   "tool_calls": [call("get_weather", W_ARGS, "r1")]},
                  tool_msg("rain", "r1", "get_weather")], "tools": TOOLS},
    {"messages": [U("Count to three."), {"role": "assistant", "content": "1 2 3", "thinking": "Easy."}, U("Again")]},
    {"messages": [U("Finish my sentence"), A("The quick brown fox")]},
    {"messages": [A("I speak first."), U("ok")]},
    {"messages": [S("Only a system prompt.")]},
    {"messages": [U("A tool answered unasked"), tool_msg("orphan result", "z1", "get_time")], "tools": [NOPARAMS]},
    {"messages": [{"role": "developer", "content": "Developer instructions."}, U("hi")]},
    {"messages": [U("Literal {{ braces }} {% tags %} <|im_start|> <think>x</think> [INST]")]},
    {"messages": [S("  padded system  \n"), U("\n  padded user\n\n"), A("  padded answer  "), U("x")]},
    {"messages": [U("What time is it?")], "tools": [NOPARAMS, WEATHER]},
    {"messages": [U("Weather in Oslo?"),
                  {"role": "assistant", "content": "", "tool_calls": [call("get_weather", {"city": "Oslo"}, "o1")]},
                  tool_msg("-3", "o1", "get_weather"), A("It is -3."), U("Book a flight from there."),
                  {"role": "assistant", "content": "", "tool_calls": [call("book_flight", B_ARGS, "o2", True)]},
                  tool_msg("{\"ok\": true, \"price\": 412.5}", "o2", "book_flight"), A("Booked.")], "tools": TOOLS},
    {"messages": [U("Edge numbers"),
                  {"role": "assistant", "content": "", "tool_calls": [call("book_flight", {
                      "route": {"from": "A", "to": "B"}, "passengers": [], "n": 10**12, "f": 2.0, "g": -0.25,
                      "u": "ünï\"q\"", "nested": {"a": [1, [2, {"b": None}]], "t": True}})]}]},
    {"messages": [U("a"), A("b"), U("c"), A("d"), U("e"), A("f"), U("g"), A("h"), U("i"), A("j"), U("k")]},
    {"messages": [S("sys"), U("hi"), {"role": "assistant", "content": [{"type": "text", "text": "list reply"}]}, U("ok")]},
    {"messages": [U("Tell me"), {"role": "assistant", "content": "Sure", "reasoning_content": ""}, U("More")]},
    {"messages": [U("Both"), {"role": "assistant", "content": "ok", "thinking": "B", "reasoning_content": "A",
                              "reasoning": "C"}, U("again"), {"role": "assistant", "content": "x", "reasoning": "R"}]},
]

# (conversation indices, extra kwargs) — every conversation gets add_generation_prompt=True;
# the others vary one knob at a time.
VARIANTS = [
    (range(len(CONVS)), {"add_generation_prompt": True}),
    ([0, 1, 2, 3, 5, 9, 13, 19, 22, 24, 29, 31], {"add_generation_prompt": False}),
    ([0, 2, 11, 13, 18, 19, 20], {"add_generation_prompt": True, "enable_thinking": False}),
    ([0, 19, 20], {"add_generation_prompt": True, "enable_thinking": True}),
    ([1, 13], {"add_generation_prompt": True, "reasoning_effort": "low"}),
    ([1, 13], {"add_generation_prompt": True, "reasoning_effort": "medium"}),
    ([1, 13], {"add_generation_prompt": True, "reasoning_effort": "high"}),
]

JINJA_SPECIALS = [  # file prefix → special tokens transformers would pass from that model's tokenizer
    ("meta-llama-Llama-2", {"bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>"}),
    ("meta-llama", {"bos_token": "<|begin_of_text|>", "eos_token": "<|eot_id|>"}),
    ("NousResearch", {"bos_token": "<|begin_of_text|>", "eos_token": "<|im_end|>"}),
    ("deepseek-ai-DeepSeek-R1-Distill-Llama", {"bos_token": "<｜begin▁of▁sentence｜>", "eos_token": "<｜end▁of▁sentence｜>"}),
    ("deepseek", {"bos_token": "<｜begin▁of▁sentence｜>", "eos_token": "<｜end▁of▁sentence｜>"}),
    ("Qwen", {"eos_token": "<|im_end|>", "pad_token": "<|endoftext|>"}),
    ("google", {"bos_token": "<bos>", "eos_token": "<eos>", "pad_token": "<pad>", "unk_token": "<unk>"}),
    ("openai", {"bos_token": "<|startoftext|>", "eos_token": "<|return|>", "pad_token": "<|endoftext|>"}),
    ("microsoft", {"bos_token": "<s>", "eos_token": "<|endoftext|>", "unk_token": "<unk>"}),
    ("", {"bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>"}),
]


def template_sources():
    out = []
    for path in sorted(glob.glob(os.path.join(DATA, "chat_templates", "*.jinja"))):
        name = os.path.basename(path)[:-len(".jinja")]
        with open(path, encoding="utf-8") as f:
            src = f.read()
        specials = next(s for p, s in JINJA_SPECIALS if name.startswith(p))
        out.append((name, src, dict(specials)))
    for cfg in sorted(glob.glob(os.path.join(DATA, "tokenizers", "*", "tokenizer_config.json"))):
        with open(cfg, encoding="utf-8") as f:
            tmpl = json.load(f).get("chat_template")
        if not isinstance(tmpl, str):
            continue
        d = os.path.dirname(cfg)
        tok = AutoTokenizer.from_pretrained(d)
        specials = {k: v for k, v in tok.special_tokens_map.items() if isinstance(v, str)}
        out.append(("tokenizer_" + os.path.basename(d), tmpl, specials))
    return out


def render(src, conv, kwargs):
    chat = ctu._normalize_chat_messages(copy.deepcopy(conv["messages"]))
    kw = dict(kwargs)
    agp = kw.pop("add_generation_prompt")
    rendered, _ = ctu.render_jinja_template(conversations=[chat], tools=copy.deepcopy(conv.get("tools")),
                                            chat_template=src, add_generation_prompt=agp, **kw)
    return rendered[0]


def main():
    os.makedirs(os.path.join(OUT, "goldens"), exist_ok=True)
    with open(os.path.join(OUT, "conversations.json"), "w", encoding="utf-8") as f:
        json.dump(CONVS, f, ensure_ascii=False, indent=0)
        f.write("\n")
    summary = []
    for name, src, specials in template_sources():
        env = ctu._compile_jinja_template(src).environment
        env.globals["strftime_now"] = lambda fmt: FIXED_NOW.strftime(fmt)
        lines, errors = [], 0
        for convs, extra in VARIANTS:
            for i in convs:
                kwargs = {**specials, **extra}
                rec = {"conv": i, "kwargs": kwargs}
                try:
                    rec["output"] = render(src, CONVS[i], kwargs)
                except Exception as e:  # noqa: BLE001 — the message is the golden
                    rec["error"] = str(e)
                    rec["error_type"] = type(e).__name__
                    errors += 1
                lines.append(json.dumps(rec, ensure_ascii=False))
        with open(os.path.join(OUT, "goldens", name + ".jsonl"), "w", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")
        summary.append(f"{name}: {len(lines)} renders, {errors} errors")
    print("\n".join(summary))


if __name__ == "__main__":
    sys.exit(main())
