#!/usr/bin/env python3
"""Harmony goldens for tests/chat: openai-harmony's own renderer (the format's reference), not
the jinja template, on conversations that the gpt-oss chat template can express.

Run from the repo root (openai-harmony needs the o200k_base vocabulary; offline, rebuild it from
the gpt-oss tokenizer.json with --make-vocab DIR, whose sha256 must be tiktoken's
446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d):
    /work/main/.venv/bin/python tools/gen_harmony_goldens.py --make-vocab /tmp/tiktoken
Writes tests/data/chat/harmony_completions.jsonl: generated assistant turns (text with markers)
and the final-channel text openai-harmony's parser (parse_messages_from_completion_tokens) finds
in them, for chat/harmony_output.h. And tests/data/chat/harmony_goldens.jsonl, one line per
conversation:
    {"name": ..., "messages": [...OpenAI chat messages...], "kwargs": {...template variables...},
     "add_generation_prompt": bool, "harmony": "<rendered text>", "stop_tokens": [...]}
`messages`/`kwargs` are what tests/chat/harmony_golden_test.cc feeds the template
(tests/data/chat_templates/openai-gpt-oss-120b.jinja); `harmony` is the same conversation built
as harmony Messages and rendered by HarmonyEncoding.render_conversation[_for_completion], decoded
to text, and "template": transformers' render of the template (strftime_now pinned to the same
date). The two agree except where the template itself departs from harmony (a developer message
gets "\n\n" after its instructions; a final assistant message without a generation prompt ends in
<|return|>, harmony's history form is <|end|>); "same" says which, and the test pins both.
"""
import argparse
import base64
import hashlib
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "tests", "data", "chat", "harmony_goldens.jsonl")
TOKENIZER = os.path.join(ROOT, "tests", "data", "tokenizers", "gptoss", "tokenizer.json")
O200K_SHA256 = "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"
DATE = "2025-07-26"


def make_vocab(dirname):
    """o200k_base.tiktoken (base64 bytes + rank per line) from the byte-level BPE vocab."""
    vocab = json.load(open(TOKENIZER))["model"]["vocab"]
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs, n = bs[:], 0
    for b in range(256):
        if b not in bs:
            bs.append(b), cs.append(256 + n)
            n += 1
    dec = {chr(c): b for b, c in zip(bs, cs)}
    lines = [base64.b64encode(bytes(dec[ch] for ch in tok)).decode() + " " + str(rank) + "\n"
             for tok, rank in sorted(vocab.items(), key=lambda kv: kv[1]) if rank < 199998]
    data = "".join(lines).encode()
    if hashlib.sha256(data).hexdigest() != O200K_SHA256:
        sys.exit("rebuilt o200k_base.tiktoken does not match tiktoken's sha256")
    os.makedirs(dirname, exist_ok=True)
    open(os.path.join(dirname, "o200k_base.tiktoken"), "wb").write(data)
    os.environ["TIKTOKEN_ENCODINGS_BASE"] = dirname


WEATHER = {"type": "function", "function": {
    "name": "get_weather", "description": "Get the current weather for a city.",
    "parameters": {"type": "object", "properties": {
        "city": {"type": "string", "description": "City name"},
        "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}},
        "required": ["city"]}}}


def cases():
    """(name, chat messages, template kwargs, tools, add_generation_prompt)."""
    U = lambda t: {"role": "user", "content": t}
    A = lambda t, **k: {"role": "assistant", "content": t, **k}
    return [
        ("user_only", [U("Hello")], {}, None, True),
        ("system_as_developer", [{"role": "system", "content": "You are terse."}, U("Hi there")], {}, None, True),
        ("developer_role", [{"role": "developer", "content": "Answer in French."}, U("Hi")], {}, None, True),
        ("effort_low", [U("What is 2+2?")], {"reasoning_effort": "low"}, None, True),
        ("effort_high_multiturn", [U("Hi"), A("Hello! How can I help?"), U("Tell me a joke.")],
         {"reasoning_effort": "high"}, None, True),
        ("history_with_thinking", [U("Hi"), A("Hello!", thinking="The user greets me."), U("Bye")], {}, None, True),
        ("unicode_and_newlines", [U("Dis «bonjour»\nen deux lignes 🙂")], {"reasoning_effort": "low"}, None, True),
        ("tools", [U("Weather in Paris?")], {}, [WEATHER], True),
        ("no_generation_prompt", [U("Hello"), A("Hi!")], {}, None, False),
    ]


def to_harmony(oh, msgs, kwargs, tools):
    effort = {"low": oh.ReasoningEffort.LOW, "medium": oh.ReasoningEffort.MEDIUM,
              "high": oh.ReasoningEffort.HIGH}[kwargs.get("reasoning_effort", "medium")]
    system = (oh.SystemContent.new().with_model_identity("You are ChatGPT, a large language model trained by OpenAI.")
              .with_reasoning_effort(effort).with_conversation_start_date(DATE).with_knowledge_cutoff("2024-06"))
    out = [oh.Message.from_role_and_content(oh.Role.SYSTEM, system)]
    instructions = [m["content"] for m in msgs if m["role"] in ("system", "developer")]
    if instructions or tools:
        dev = oh.DeveloperContent.new()
        if instructions:
            dev = dev.with_instructions(instructions[0])
        if tools:
            dev = dev.with_function_tools([oh.ToolDescription.new(
                t["function"]["name"], t["function"]["description"], parameters=t["function"]["parameters"])
                for t in tools])
        out.append(oh.Message.from_role_and_content(oh.Role.DEVELOPER, dev))
    for m in msgs:
        if m["role"] == "user":
            out.append(oh.Message.from_role_and_content(oh.Role.USER, m["content"]))
        elif m["role"] == "assistant":
            if m.get("thinking"):
                out.append(oh.Message.from_role_and_content(oh.Role.ASSISTANT, m["thinking"]).with_channel("analysis"))
            out.append(oh.Message.from_role_and_content(oh.Role.ASSISTANT, m["content"]).with_channel("final"))
    return oh.Conversation.from_messages(out)


def render_template(msgs, kwargs, tools, gen):
    import datetime
    from transformers.utils import chat_template_utils as ctu
    src = open(os.path.join(ROOT, "tests", "data", "chat_templates", "openai-gpt-oss-120b.jinja")).read()
    ctu._compile_jinja_template(src).environment.globals["strftime_now"] = \
        lambda fmt: datetime.datetime(2025, 7, 26).strftime(fmt)
    out, _ = ctu.render_jinja_template(conversations=[msgs], tools=tools, chat_template=src, add_generation_prompt=gen,
                                       bos_token="<|startoftext|>", eos_token="<|return|>", **kwargs)
    return out[0]


COMPLETIONS = [
    "<|channel|>final<|message|>Hello there!<|return|>",
    "<|channel|>analysis<|message|>User says hi. Respond.<|end|><|start|>assistant<|channel|>final<|message|>Hi! How can I help?<|return|>",
    "<|channel|>analysis<|message|>Need <b>bold</b> and a pipe | here.<|end|><|start|>assistant<|channel|>final<|message|>Use **bold** < and | or |> freely.<|return|>",
    "<|channel|>analysis<|message|>Call the tool.<|end|><|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{\"city\":\"Paris\"}<|call|>",
    "<|channel|>analysis<|message|>Think.\nMore.<|end|><|start|>assistant<|channel|>commentary<|message|>Checking…<|end|><|start|>assistant<|channel|>final<|message|>Multi\nline 🙂 answer<|return|>",
    "<|channel|>final<|message|>Déjà vu<|end|>",
]


def completion_goldens(oh, enc):
    recs = []
    for text in COMPLETIONS:
        toks = enc.encode(text, allowed_special="all")
        msgs = enc.parse_messages_from_completion_tokens(toks, oh.Role.ASSISTANT)
        final = "".join(c.text for m in msgs if m.channel in (None, "final") for c in m.content)
        recs.append({"completion": text, "final": final, "channels": [m.channel for m in msgs]})
    return recs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--make-vocab", help="rebuild o200k_base.tiktoken into this folder first")
    args = ap.parse_args()
    if args.make_vocab:
        make_vocab(args.make_vocab)
    import openai_harmony as oh
    enc = oh.load_harmony_encoding(oh.HarmonyEncodingName.HARMONY_GPT_OSS)
    with open(OUT, "w") as f:
        for name, msgs, kwargs, tools, gen in cases():
            conv = to_harmony(oh, msgs, kwargs, tools)
            if gen:
                toks = enc.render_conversation_for_completion(conv, oh.Role.ASSISTANT)
            else:
                toks = enc.render_conversation(conv)
            harmony = enc.decode_utf8(toks)
            template = render_template(msgs, kwargs, tools, gen)
            rec = {"name": name, "messages": msgs, "kwargs": kwargs, "tools": tools, "add_generation_prompt": gen,
                   "harmony": harmony, "template": template, "same": harmony == template,
                   "stop_tokens": sorted(enc.decode_utf8([t]) for t in enc.stop_tokens_for_assistant_actions())}
            f.write(json.dumps(rec, ensure_ascii=False) + "\n")
    with open(OUT.replace("harmony_goldens", "harmony_completions"), "w") as f:
        for rec in completion_goldens(oh, enc):
            f.write(json.dumps(rec, ensure_ascii=False) + "\n")
    print("wrote", OUT)


if __name__ == "__main__":
    main()
