#!/usr/bin/env python3
"""Golden corpus for the tool-call / reasoning output parsers (src/chat/output_parser.h).

Writes tests/data/chat/tool_calls/multiturn.jsonl (see multiturn_cases) and
tests/data/chat/tool_calls/cases.jsonl, one case a line:
    {"name", "syntax" (output_parser.h ToolSyntax), "think", "reasoning_open", "tools",
     "output" (generated text, markers included), "expected" (the OpenAI assistant message),
     "source"}
Three sources, each independent of the C++ code:
  - "template:<file>": a well-formed assistant message (content, reasoning_content, tool_calls)
    rendered by the family's real chat template (tests/data/chat_templates, transformers' jinja2
    renderer) after a user turn; the output is the render minus the generation-prompt render,
    minus the end-of-turn stop token. Expected: that message.
  - "openai-harmony": a harmony completion parsed by openai-harmony's
    parse_messages_from_completion_tokens: analysis → reasoning_content, final / no channel /
    commentary without recipient → content, recipient functions.N → a call N with the message text
    as arguments.
  - "spec": hand-written from the format's published description (the template's instructions),
    for malformed, truncated and interleaved outputs, with the expected message by the fallback rule
    in tests/data/chat/tool_calls/README.md.
Run from the repo root: /work/main/.venv/bin/python tools/gen_tool_goldens.py --make-vocab /tmp/tiktoken
(--make-vocab: see tools/gen_harmony_goldens.py; openai-harmony needs o200k_base offline).
"""
import argparse
import datetime
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TEMPLATES = os.path.join(ROOT, "tests", "data", "chat_templates")
OUT = os.path.join(ROOT, "tests", "data", "chat", "tool_calls", "cases.jsonl")
sys.path.insert(0, os.path.join(ROOT, "tools"))

WEATHER = {"type": "function", "function": {
    "name": "get_weather", "description": "Get the weather.",
    "parameters": {"type": "object", "properties": {
        "city": {"type": "string"}, "days": {"type": "integer"}, "unit": {"type": "string"}},
        "required": ["city"]}}}
TIME = {"type": "function", "function": {
    "name": "get_time", "description": "Get the time.",
    "parameters": {"type": "object", "properties": {"tz": {"type": "string"}, "exact": {"type": "boolean"}}}}}
TOOLS = [WEATHER, TIME]
USER = [{"role": "user", "content": "What is the weather in Paris?"}]


def call(name, args, cid):
    return {"id": cid, "type": "function", "function": {"name": name, "arguments": args}}


def render(tfile, msgs, gen, kwargs):
    from transformers.utils import chat_template_utils as ctu
    src = open(os.path.join(TEMPLATES, tfile)).read()
    ctu._compile_jinja_template(src).environment.globals["strftime_now"] = \
        lambda fmt: datetime.datetime(2025, 7, 26).strftime(fmt)
    out, _ = ctu.render_jinja_template(conversations=[msgs], tools=TOOLS, chat_template=src, add_generation_prompt=gen,
                                       bos_token="<s>", eos_token="</s>", **kwargs)
    return out[0]


def expected_message(msg):
    m = {"role": "assistant"}
    calls = msg.get("tool_calls") or []
    m["content"] = msg.get("content") or (None if calls else "")
    if msg.get("reasoning_content"):
        m["reasoning_content"] = msg["reasoning_content"]
    if calls:
        m["tool_calls"] = [call(c["function"]["name"], json.dumps(c["function"]["arguments"]), c["id"]) for c in calls]
    return m


def from_template(name, tfile, syntax, msg, stops, think=False, kwargs=None):
    kwargs = kwargs or {}
    prompt = render(tfile, USER, True, kwargs)
    full = render(tfile, USER + [msg], False, kwargs)
    assert full.startswith(prompt), (name, prompt, full)
    out = full[len(prompt):].strip()  # whitespace at the ends separates turns
    for s in stops:
        if out.endswith(s):
            out = out[:-len(s)].rstrip()
            break
    else:
        raise SystemExit(f"{name}: no stop token at the end of {out!r}")
    if msg.get("content") and msg["content"] not in out:
        raise ValueError("the template drops the content of a turn with tool calls")
    if msg.get("tool_calls") and "get_weather" not in out:
        raise ValueError("the template does not render tool calls")
    src = open(os.path.join(TEMPLATES, tfile)).read()
    think_open, think_close = ("<|channel>thought", "<channel|>") if "<|channel>thought" in src else ("<think>", "</think>")
    return {"name": name, "syntax": syntax, "think": think, "think_open": think_open, "think_close": think_close,
            "reasoning_open": prompt.rstrip().endswith(think_open), "tools": TOOLS, "output": out,
            "expected": expected_message(msg), "source": "template:" + tfile}


def spec(name, syntax, output, content, calls=(), reasoning=None, think=False, reasoning_open=False):
    m = {"role": "assistant", "content": content}
    if reasoning is not None:
        m["reasoning_content"] = reasoning
    if calls:
        m["tool_calls"] = [call(n, a, f"call{i}") for i, (n, a) in enumerate(calls)]
    return {"name": name, "syntax": syntax, "think": think, "reasoning_open": reasoning_open, "tools": TOOLS,
            "output": output, "expected": m, "source": "spec"}


PARIS = {"city": "Paris", "days": 3}
TOKYO = {"tz": "Asia/Tokyo", "exact": True}
ONE = {"role": "assistant", "content": "", "tool_calls": [call("get_weather", PARIS, "abcDEF123")]}
TWO = {"role": "assistant", "content": "",
       "tool_calls": [call("get_weather", PARIS, "abcDEF123"), call("get_time", TOKYO, "xyzXYZ789")]}
TEXT_ONE = {"role": "assistant", "content": "Let me check.", "tool_calls": [call("get_weather", PARIS, "abcDEF123")]}


def template_cases():
    c = []
    for tfile, syntax, stops, think in [
        ("Qwen-Qwen2.5-7B-Instruct.jinja", "TAG_JSON", ["<|im_end|>"], False),
        ("NousResearch-Hermes-3-Llama-3.1-8B-tool_use.jinja", "TAG_JSON", ["<|im_end|>"], False),
        ("ibm-granite-granite-4.0.jinja", "TAG_JSON", ["<|end_of_text|>"], False),
        ("Qwen3-Coder.jinja", "TAG_XML", ["<|im_end|>"], False),
        ("Qwen3.5-4B.jinja", "TAG_XML", ["<|im_end|>"], True),
        ("meta-llama-Llama-3.2-3B-Instruct.jinja", "PYTHON_TAG", ["<|eot_id|>"], False),
        ("meta-llama-Llama-3.3-70B-Instruct.jinja", "PYTHON_TAG", ["<|eot_id|>"], False),
        ("mistralai-Mistral-7B-Instruct-v0.3.jinja", "BRACKET_LIST", ["</s>"], False),
        ("Mistral-Small-3.2-24B-Instruct-2506.jinja", "BRACKET_ARGS", ["</s>"], False),
        ("unsloth-mistral-Devstral-Small-2507.jinja", "BRACKET_ARGS", ["</s>"], False),
        ("google-gemma-4-it.jinja", "CALL_COLON", ["<|tool_response>", "<turn|>"], True),
    ]:
        base = tfile.split(".jinja")[0]
        for label, msg in [("one", ONE), ("parallel", TWO), ("text_then_call", TEXT_ONE),
                           ("text_only", {"role": "assistant", "content": "It is sunny in Paris."})]:
            try:
                c.append(from_template(f"{base}/{label}", tfile, syntax, msg, stops, think))
            except Exception as e:  # a template that cannot express the message (one call only, ...)
                print(f"skip {base}/{label}: {type(e).__name__}: {str(e)[:100]}", file=sys.stderr)
    # Thinking templates: a reasoning turn with a call.
    for tfile, syntax in [("Qwen-Qwen3-0.6B.jinja", "TAG_JSON"), ("Qwen3.5-4B.jinja", "TAG_XML")]:
        msg = {"role": "assistant", "content": "", "reasoning_content": "The user wants Paris weather.",
               "tool_calls": [call("get_weather", PARIS, "abcDEF123")]}
        c.append(from_template(f"{tfile.split('.jinja')[0]}/reasoning_call", tfile, syntax, msg, ["<|im_end|>"], True))
        msg = {"role": "assistant", "content": "Sunny.", "reasoning_content": "Easy.\nJust answer."}
        c.append(from_template(f"{tfile.split('.jinja')[0]}/reasoning_text", tfile, syntax, msg, ["<|im_end|>"], True))
    nested = {"role": "assistant", "content": "", "tool_calls": [
        call("get_weather", {"city": "Pa\"ris, <b>", "days": 3, "opts": {"a": [1, "x", None], "b": True, "f": -1.5}},
             "abcDEF123")]}
    c.append(from_template("google-gemma-4-it/nested", "google-gemma-4-it.jinja", "CALL_COLON", nested,
                           ["<|tool_response>"], True))
    # Its reasoning is a "thought" channel, rendered before calls.
    msg = {"role": "assistant", "content": "", "reasoning_content": "The user wants Paris weather.",
           "tool_calls": [call("get_weather", PARIS, "abcDEF123")]}
    c.append(from_template("google-gemma-4-it/reasoning_call", "google-gemma-4-it.jinja", "CALL_COLON", msg,
                           ["<|tool_response>"], True))
    return c


W = '{"city": "Paris", "days": 3}'
T = '{"tz": "Asia/Tokyo", "exact": true}'


def spec_cases():
    s = []
    # <tool_call>{json}</tool_call>
    s += [
        spec("tag_json/interleaved", "TAG_JSON",
             f'First.\n<tool_call>\n{{"name": "get_weather", "arguments": {W}}}\n</tool_call>\nThen.\n'
             f'<tool_call>\n{{"name": "get_time", "arguments": {T}}}\n</tool_call>',
             "First.Then.", [("get_weather", W), ("get_time", T)]),
        spec("tag_json/keys_reversed", "TAG_JSON", f'<tool_call>{{"arguments": {W}, "name": "get_weather"}}</tool_call>',
             None, [("get_weather", W)]),
        spec("tag_json/arguments_string", "TAG_JSON",
             '<tool_call>{"name": "get_weather", "arguments": "{\\"city\\": \\"Paris\\"}"}</tool_call>',
             None, [("get_weather", '{"city": "Paris"}')]),
        spec("tag_json/not_json", "TAG_JSON", "<tool_call>get_weather(Paris)</tool_call> ok",
             "<tool_call>get_weather(Paris)</tool_call> ok"),
        spec("tag_json/no_name", "TAG_JSON", '<tool_call>{"arguments": {}}</tool_call>',
             '<tool_call>{"arguments": {}}</tool_call>'),
        spec("tag_json/truncated_args", "TAG_JSON", '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Pa',
             None, [("get_weather", '{"city": "Pa')]),
        spec("tag_json/truncated_name", "TAG_JSON", '<tool_call>\n{"name": "get_wea',
             '<tool_call>\n{"name": "get_wea'),
        spec("tag_json/opener_split_text", "TAG_JSON", "a <tool_c b < c <tool_call", "a <tool_c b < c <tool_call"),
        spec("tag_json/extra_key", "TAG_JSON", f'<tool_call>{{"name": "get_weather", "arguments": {W}, "id": "x}}"}}</tool_call>',
             None, [("get_weather", W)]),
        spec("tag_json/unicode", "TAG_JSON",
             '<tool_call>{"name": "get_weather", "arguments": {"city": "Zürich 🌧"}}</tool_call>',
             None, [("get_weather", '{"city": "Zürich 🌧"}')]),
        spec("tag_json/missing_close_brace", "TAG_JSON", f'<tool_call>{{"name": "get_weather", "arguments": {W}</tool_call>',
             None, [("get_weather", W)]),
        spec("tag_json/plain", "TAG_JSON", "No tools needed.\n", "No tools needed.\n"),
    ]
    # <think>
    s += [
        spec("think/open_in_prompt", "TAG_JSON", "Plan: call it.\n</think>\n\nAnswer.", "Answer.", [],
             reasoning="Plan: call it.", think=True, reasoning_open=True),
        spec("think/unclosed", "TAG_JSON", "<think>\nStill thinking", "", [], reasoning="Still thinking", think=True),
        spec("think/no_think", "TAG_JSON", "Just text <think> inside", "Just text <think> inside", think=True),
        spec("think/empty", "TAG_JSON", "<think>\n\n</think>\n\nHi", "Hi", think=True),
        spec("think/then_call", "TAG_JSON",
             f'<think>\nneed weather\n</think>\n\n<tool_call>\n{{"name": "get_weather", "arguments": {W}}}\n</tool_call>',
             None, [("get_weather", W)], reasoning="need weather", think=True),
        spec("think/close_only_no_prompt_open", "TAG_JSON", "text</think>more", "text</think>more", think=True),
    ]
    # <tool_call><function=…>
    xml = '<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n<parameter=days>\n3\n</parameter>\n</function>\n</tool_call>'
    s += [
        spec("tag_xml/types", "TAG_XML", xml, None, [("get_weather", '{"city": "Paris", "days": 3}')]),
        spec("tag_xml/multiline_string", "TAG_XML",
             '<tool_call>\n<function=get_weather>\n<parameter=city>\nSan "Fran"\ncisco\n</parameter>\n</function>\n</tool_call>',
             None, [("get_weather", '{"city": "San \\"Fran\\"\\ncisco"}')]),
        spec("tag_xml/no_params", "TAG_XML", "<tool_call>\n<function=get_time>\n</function>\n</tool_call>",
             None, [("get_time", "{}")]),
        spec("tag_xml/bool_and_unknown", "TAG_XML",
             '<tool_call>\n<function=get_time>\n<parameter=exact>\ntrue\n</parameter>\n<parameter=other>\n5\n</parameter>\n</function>\n</tool_call>',
             None, [("get_time", '{"exact": true, "other": "5"}')]),
        spec("tag_xml/bad_int", "TAG_XML",
             '<tool_call>\n<function=get_weather>\n<parameter=days>\nthree\n</parameter>\n</function>\n</tool_call>',
             None, [("get_weather", '{"days": "three"}')]),
        spec("tag_xml/truncated", "TAG_XML", "<tool_call>\n<function=get_weather>\n<parameter=city>\nPar",
             None, [("get_weather", '{"city": "Par')]),
        spec("tag_xml/not_function", "TAG_XML", "<tool_call>\n{\"name\": 1}\n</tool_call>",
             "<tool_call>\n{\"name\": 1}\n</tool_call>"),
        spec("tag_xml/text_around", "TAG_XML", "Sure.\n\n" + xml + "\n\n" + xml.replace("Paris", "Lyon"),
             "Sure.", [("get_weather", '{"city": "Paris", "days": 3}'), ("get_weather", '{"city": "Lyon", "days": 3}')]),
    ]
    # <|python_tag|> / bare JSON
    s += [
        spec("python_tag/bare", "PYTHON_TAG", f'{{"name": "get_weather", "parameters": {W}}}', None, [("get_weather", W)]),
        spec("python_tag/tag", "PYTHON_TAG", f'<|python_tag|>{{"name": "get_weather", "parameters": {W}}}', None,
             [("get_weather", W)]),
        spec("python_tag/two_semicolon", "PYTHON_TAG",
             f'{{"name": "get_weather", "parameters": {W}}}; {{"name": "get_time", "parameters": {T}}}', None,
             [("get_weather", W), ("get_time", T)]),
        spec("python_tag/json_not_call", "PYTHON_TAG", '{"answer": 42}', '{"answer": 42}'),
        spec("python_tag/text_braces", "PYTHON_TAG", "Use {x} here.", "Use {x} here."),
        spec("python_tag/truncated", "PYTHON_TAG", '{"name": "get_weather", "parameters": {"city": ', None,
             [("get_weather", '{"city": ')]),
    ]
    # [TOOL_CALLS] [...]
    s += [
        spec("bracket_list/two", "BRACKET_LIST",
             f'[TOOL_CALLS] [{{"name": "get_weather", "arguments": {W}}}, {{"name": "get_time", "arguments": {T}}}]',
             None, [("get_weather", W), ("get_time", T)]),
        spec("bracket_list/bad", "BRACKET_LIST", "[TOOL_CALLS] oops", "[TOOL_CALLS] oops"),
        spec("bracket_list/text_first", "BRACKET_LIST",
             f'Checking. [TOOL_CALLS][{{"name": "get_weather", "arguments": {W}, "id": "abcDEF123"}}]',
             "Checking.", [("get_weather", W)]),
    ]
    # [TOOL_CALLS]name[ARGS]{…}
    s += [
        spec("bracket_args/two", "BRACKET_ARGS", f"[TOOL_CALLS]get_weather[ARGS]{W}[TOOL_CALLS]get_time[ARGS]{T}",
             None, [("get_weather", W), ("get_time", T)]),
        spec("bracket_args/call_id", "BRACKET_ARGS", f"[TOOL_CALLS]get_weather[CALL_ID]abcDEF123[ARGS]{W}",
             None, [("get_weather", W)]),
        spec("bracket_args/no_args_marker", "BRACKET_ARGS", "[TOOL_CALLS]get weather", "[TOOL_CALLS]get weather"),
        spec("bracket_args/truncated", "BRACKET_ARGS", '[TOOL_CALLS]get_weather[ARGS]{"city": "Pa', None,
             [("get_weather", '{"city": "Pa')]),
    ]
    # <|tool_call|>[...]
    s += [
        spec("pipe_list/two", "PIPE_LIST",
             f'<|tool_call|>[{{"name": "get_weather", "arguments": {W}}}, {{"name": "get_time", "arguments": {T}}}]',
             None, [("get_weather", W), ("get_time", T)]),
        spec("pipe_list/bad", "PIPE_LIST", "<|tool_call|>[1, 2]", "<|tool_call|>[1, 2]"),
        spec("pipe_list/second_bad", "PIPE_LIST", f'<|tool_call|>[{{"name": "get_weather", "arguments": {W}}}, 7]',
             ", 7]", [("get_weather", W)]),
    ]
    # <|tool_call>call:N{…}<tool_call|>
    s += [
        spec("call_colon/text_then_call", "CALL_COLON",
             'Checking.<|tool_call>call:get_weather{city:<|"|>Paris<|"|>,days:3}<tool_call|>', "Checking.",
             [("get_weather", W)]),
        spec("call_colon/quoted_keys", "CALL_COLON",
             '<|tool_call>call:get_weather{<|"|>city<|"|>:<|"|>Paris<|"|>,<|"|>days<|"|>:3}<tool_call|>', None,
             [("get_weather", W)]),
        spec("call_colon/not_a_call", "CALL_COLON", "<|tool_call>hello<tool_call|>", "<|tool_call>hello<tool_call|>"),
        spec("call_colon/truncated", "CALL_COLON", '<|tool_call>call:get_weather{city:<|"|>Par', None,
             [("get_weather", '{"city":"Par')]),
    ]
    return s


HARMONY = [
    "<|channel|>final<|message|>Hello there!",
    "<|channel|>analysis<|message|>User says hi.<|end|><|start|>assistant<|channel|>final<|message|>Hi!",
    "<|channel|>analysis<|message|>Need weather.<|end|><|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{\"city\":\"Paris\"}",
    "<|channel|>analysis<|message|>Two calls.<|end|><|start|>assistant to=functions.get_weather<|channel|>commentary json<|message|>{\"city\":\"Paris\"}<|call|>",
    "<|channel|>commentary<|message|>Checking now.<|end|><|start|>assistant<|channel|>commentary to=functions.get_time <|constrain|>json<|message|>{\"tz\":\"UTC\"}",
    "<|channel|>analysis<|message|>Think <|channel|> | <b>x</b>.<|end|><|start|>assistant<|channel|>final<|message|>Use a < b |> c 🙂",
]


def harmony_cases(oh):
    enc = oh.load_harmony_encoding(oh.HarmonyEncodingName.HARMONY_GPT_OSS)
    out = []
    for i, text in enumerate(HARMONY):
        full = text if text.endswith("<|call|>") else text + "<|end|>"  # the parser wants each message closed
        msgs = enc.parse_messages_from_completion_tokens(enc.encode(full, allowed_special="all"), oh.Role.ASSISTANT)
        content, reasoning, calls = "", "", []
        for m in msgs:
            t = "".join(c.text for c in m.content)
            if m.recipient and m.recipient.startswith("functions."):
                calls.append((m.recipient[len("functions."):], t))
            elif m.recipient:
                continue
            elif m.channel == "analysis":
                reasoning += t
            else:
                content += t
        gen = text[:-len("<|call|>")] if text.endswith("<|call|>") else text  # <|call|> is a stop token
        case = spec(f"harmony/{i}", "HARMONY", gen, content or (None if calls else ""), calls,
                    reasoning=reasoning or None)
        case["source"] = "openai-harmony"
        out.append(case)
    return out


MULTITURN_TEMPLATES = [
    "Qwen-Qwen2.5-7B-Instruct.jinja", "Qwen-Qwen3-0.6B.jinja", "Qwen3-Coder.jinja", "Qwen3.5-4B.jinja",
    "NousResearch-Hermes-3-Llama-3.1-8B-tool_use.jinja", "ibm-granite-granite-4.0.jinja",
    "ibm-granite-granite-3.3-2B-Instruct.jinja", "meta-llama-Llama-3.2-3B-Instruct.jinja",
    "meta-llama-Llama-3.1-8B-Instruct.jinja", "mistralai-Mistral-7B-Instruct-v0.3.jinja",
    "Mistral-Small-3.2-24B-Instruct-2506.jinja", "unsloth-mistral-Devstral-Small-2507.jinja",
    "HuggingFaceTB-SmolLM3-3B.official.jinja", "google-gemma-4-it.jinja",
]


def multiturn_cases():
    """An OpenAI request body with a tool round trip (assistant tool_calls with JSON-string
    arguments and null content, then role tool with tool_call_id) → the jinja2 render of the same
    conversation normalised as src/server/protocol_chat.cc documents it (arguments parsed to an
    object, null content ""), for tests/server/protocol_multiturn_test.cc."""
    out = []
    for tfile in MULTITURN_TEMPLATES:
        for label, with_reasoning in [("round_trip", False), ("reasoning_round_trip", True)]:
            asst = {"role": "assistant", "content": None,
                    "tool_calls": [{"id": "abcDEF123", "type": "function",
                                    "function": {"name": "get_weather", "arguments": json.dumps(PARIS)}}]}
            if with_reasoning:
                asst["reasoning_content"] = "Need the weather."
            body_msgs = [{"role": "system", "content": "Be brief."}, USER[0], asst,
                         {"role": "tool", "tool_call_id": "abcDEF123", "content": "{\"temp\": 20}"},
                         {"role": "assistant", "content": "It is 20 C."},
                         {"role": "user", "content": "And in Tokyo?"}]
            norm = json.loads(json.dumps(body_msgs))
            norm[2]["content"] = ""
            norm[2]["tool_calls"][0]["function"]["arguments"] = PARIS
            try:
                expected = render(tfile, norm, True, {})
            except Exception as e:
                print(f"skip multiturn {tfile}: {type(e).__name__}: {str(e)[:80]}", file=sys.stderr)
                continue
            body = {"model": "m", "messages": body_msgs, "tools": TOOLS}
            out.append({"name": f"{tfile.split('.jinja')[0]}/{label}", "template": tfile, "body": body,
                        "bos_token": "<s>", "eos_token": "</s>", "expected": expected})
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--make-vocab", help="rebuild o200k_base.tiktoken into this folder first")
    args = ap.parse_args()
    if args.make_vocab:
        import gen_harmony_goldens
        gen_harmony_goldens.make_vocab(args.make_vocab)
    import openai_harmony as oh
    cases = template_cases() + spec_cases() + harmony_cases(oh)
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w") as f:
        for c in cases:
            f.write(json.dumps(c, ensure_ascii=False) + "\n")
    print(f"wrote {len(cases)} cases to {OUT}")
    mt = multiturn_cases()
    with open(OUT.replace("cases.jsonl", "multiturn.jsonl"), "w") as f:
        for c in mt:
            f.write(json.dumps(c, ensure_ascii=False) + "\n")
    print(f"wrote {len(mt)} multi-turn cases")


if __name__ == "__main__":
    main()
