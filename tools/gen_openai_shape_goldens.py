#!/usr/bin/env python3
"""Goldens for src/server/protocol response builders, checked by the official `openai` SDK types.

Command (from the repo root):
  /work/venv/bin/python tools/gen_openai_shape_goldens.py tests/data/server/openai_shapes.json

Each case gives the builder's inputs and the JSON OpenAI sends for them (the shapes of the OpenAI
API reference: chat.completion, chat.completion.chunk, text_completion, the error object). Every
expected body is validated here by the SDK's pydantic model (openai.types.chat.ChatCompletion,
ChatCompletionChunk, openai.types.Completion, shared.ErrorObject): it must validate, every key must
be a field the SDK declares (no invented fields), and model_dump(exclude_unset=True) must give the
body back (no field dropped or retyped). Token text is derived with Python's
bytes.decode("utf-8", "replace") and logprobs with numpy's shortest float32 repr: the oracles for
the U+FFFD rule and the number format. The "utf8" cases check sanitize_utf8/invalid_utf8_at the
same way. "requests" are bodies exactly as the SDK serializes them (recorded through a mock
transport) with the parsed values we must get; the SDK's stream reader is also fed our golden
chunk sequences (with include_usage) and must yield every chunk. The C++ test (tests/server/protocol_shapes_test.cc) builds each body from the inputs
and compares JSON values.

One SDK looseness is worked around, not hidden: openai.types.CompletionChoice declares
finish_reason non-null, yet OpenAI streams legacy completions with "finish_reason": null until the
last chunk (the SDK parses stream chunks without validation). Such chunks are validated with the
finish_reason temporarily set to "length". Likewise Logprobs.token_logprobs/top_logprobs are
declared List[float]/List[dict], yet with echo OpenAI sends null for the first prompt token
(nothing predicts it); those entries are validated as 0.0/{}.
"""
import copy
import json
import sys

import httpx2
import numpy as np
import openai
import pydantic
from openai.types import Completion
from openai.types.chat import ChatCompletion, ChatCompletionChunk
from openai.types.shared import ErrorObject

rng = np.random.default_rng(20261202)


def f32(x):
    """A float32 value as the exact double (input side); -inf is written as null."""
    v = float(np.float32(x))
    return None if np.isinf(v) else v


def lp_out(x):
    """What we send for a float32 logprob: its shortest repr; -inf → -9999.0."""
    v = np.float32(-np.inf if x is None else x)
    return -9999.0 if not np.isfinite(v) else float(str(v))


def tok_text(b):
    return bytes(b).decode("utf-8", "replace")


# ---- SDK checks --------------------------------------------------------------------------------

def declared(model_cls):
    names = set()
    for name, f in model_cls.model_fields.items():
        names.add(f.alias or name)
    return names


def check_keys(obj, model):
    """Every key of obj is a field of the validated pydantic model (recursively)."""
    if isinstance(model, pydantic.BaseModel):
        assert isinstance(obj, dict), (obj, type(model))
        known = declared(type(model))
        extra = set(obj) - known
        assert not extra, f"{type(model).__name__}: fields the SDK does not declare: {extra}"
        for k, v in obj.items():
            check_keys(v, getattr(model, k))
    elif isinstance(model, list):
        for a, b in zip(obj, model):
            check_keys(a, b)


def sdk_check(body, cls):
    m = cls.model_validate(body)
    check_keys(body, m)
    back = m.model_dump(mode="json", exclude_unset=True)
    assert back == body, f"{cls.__name__} round trip differs:\n{json.dumps(back)}\n{json.dumps(body)}"


def check_completion(body):
    b = copy.deepcopy(body)
    for c in b["choices"]:
        if c["finish_reason"] is None:
            c["finish_reason"] = "length"
        if c["logprobs"]:
            lp = c["logprobs"]
            lp["token_logprobs"] = [0.0 if x is None else x for x in lp["token_logprobs"]]
            lp["top_logprobs"] = [{} if x is None else x for x in lp["top_logprobs"]]
    m = Completion.model_validate(b)
    check_keys(b, m)
    assert m.model_dump(mode="json", exclude_unset=True) == b


# ---- builders of the expected bodies (the OpenAI API reference shapes) -------------------------

def usage(u):
    return {"prompt_tokens": u["prompt_tokens"], "completion_tokens": u["completion_tokens"],
            "total_tokens": u["prompt_tokens"] + u["completion_tokens"],
            "prompt_tokens_details": {"cached_tokens": u["cached_tokens"]}}


def head(inp, obj):
    return {"id": inp["id"], "object": obj, "created": inp["created"], "model": inp["model"],
            "system_fingerprint": None}


def chat_lps(lps):
    if lps is None:
        return None
    content = []
    for t in lps:
        content.append({"token": tok_text(t["bytes"]), "logprob": lp_out(t["logprob"]), "bytes": list(t["bytes"]),
                        "top_logprobs": [{"token": tok_text(x["bytes"]), "logprob": lp_out(x["logprob"]),
                                          "bytes": list(x["bytes"])} for x in t["top"]]})
    return {"content": content, "refusal": None}


def legacy_lps(c):
    lps = c["logprobs"]
    if lps is None:
        return None
    out = {"tokens": [], "token_logprobs": [], "top_logprobs": [], "text_offset": []}
    off = c["text_offset_start"]
    for i, t in enumerate(lps):
        text = tok_text(t["bytes"])
        null = i < c["first_logprob_null"]
        out["tokens"].append(text)
        out["token_logprobs"].append(None if null else lp_out(t["logprob"]))
        out["top_logprobs"].append(None if null else {tok_text(x["bytes"]): lp_out(x["logprob"]) for x in t["top"]})
        out["text_offset"].append(off)
        off += len(text)
    return out


def token(b, logprob, k):
    top = [{"bytes": list(tb), "logprob": f32(tl)} for tb, tl in k]
    return {"bytes": list(b), "logprob": f32(logprob), "top": top}


def rand_tokens(n, k):
    pieces = [b"Hello", b" world", b"\xe2\x82", b"\xac", b"!", b"\xf0\x9f\x98\x80", b"\xff", b" \"q\"\n", b"\\"]
    out = []
    for _ in range(n):
        top = [(pieces[rng.integers(len(pieces))], -float(rng.exponential(2))) for _ in range(k)]
        out.append(token(pieces[rng.integers(len(pieces))], -float(rng.exponential(1)), top))
    return out


# ---- request bodies exactly as the SDK sends them ---------------------------------------------

def sdk_requests(chat_stream_chunks, completion_stream_chunks):
    """Calls the SDK against a mock transport; records each request body the SDK serializes.

    Stream responses are served from the golden chunk bodies above, so the SDK's own stream
    reader must accept our chunk sequence (SSE framing, final usage chunk, [DONE]).
    """
    recorded = []

    def sse_body(chunks):
        text = "".join("data: " + json.dumps(c, separators=(",", ":")) + "\n\n" for c in chunks)
        return text + "data: [DONE]\n\n"

    def handler(req):
        body = json.loads(req.content)
        recorded.append(body)
        chat = req.url.path.endswith("/chat/completions")
        if body.get("stream"):
            return httpx2.Response(200, headers={"content-type": "text/event-stream"},
                                   text=sse_body(chat_stream_chunks if chat else completion_stream_chunks))
        if chat:
            return httpx2.Response(200, json={"id": "x", "object": "chat.completion", "created": 1, "model": "m",
                                              "choices": [{"index": 0, "message": {"role": "assistant", "content": "hi"},
                                                           "finish_reason": "stop", "logprobs": None}]})
        return httpx2.Response(200, json={"id": "x", "object": "text_completion", "created": 1, "model": "m",
                                          "choices": [{"index": 0, "text": "hi", "finish_reason": "stop",
                                                       "logprobs": None}]})

    client = openai.OpenAI(api_key="k", base_url="http://test/v1",
                           http_client=httpx2.Client(transport=httpx2.MockTransport(handler)))
    out = []
    tools = [{"type": "function", "function": {"name": "get_weather", "description": "Weather of a city",
                                               "parameters": {"type": "object",
                                                              "properties": {"city": {"type": "string"}}}}}]
    messages = [
        {"role": "developer", "content": "Be brief."},
        {"role": "user", "content": [{"type": "text", "text": "Weather in"}, {"type": "text", "text": "Paris?"}]},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "sunny"},
    ]
    client.chat.completions.create(
        model="m", messages=messages, temperature=0.25, top_p=0.5, n=2, stop="END", max_tokens=7,
        max_completion_tokens=9, presence_penalty=0.5, frequency_penalty=-0.5, logit_bias={"15": -100, "3": 2},
        seed=42, logprobs=True, top_logprobs=3, tools=tools, tool_choice="auto", parallel_tool_calls=False,
        response_format={"type": "text"}, user="u1", reasoning_effort="low",
        extra_body={"top_k": 20, "min_p": 0.05, "repetition_penalty": 1.1, "chat_template_kwargs": {"foo": "bar"}})
    out.append({"endpoint": "chat", "body": recorded[-1],
                "expect": {"temperature": 0.25, "top_p": 0.5, "n": 2, "stop": ["END"], "max_tokens": 9, "seed": 42,
                           "sampling_logprobs": 3, "top_k": 20, "stream": False, "include_usage": False,
                           "messages": [
                               {"role": "system", "content": "Be brief."},
                               {"role": "user", "content": "Weather in\nParis?"},
                               {"role": "assistant", "content": "", "tool_calls": [
                                   {"id": "call_1", "type": "function",
                                    "function": {"name": "get_weather", "arguments": {"city": "Paris"}}}]},
                               {"role": "tool", "content": "sunny", "tool_call_id": "call_1"}],
                           "chat_template_kwargs": {"foo": "bar", "reasoning_effort": "low"}}})
    got = list(client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}], stream=True,
                                              stream_options={"include_usage": True}))
    assert len(got) == len(chat_stream_chunks) and got[-1].usage is not None and got[-1].choices == []
    out.append({"endpoint": "chat", "body": recorded[-1],
                "expect": {"temperature": 1.0, "top_p": 1.0, "n": 1, "stop": [], "max_tokens": None, "seed": None,
                           "sampling_logprobs": -1, "top_k": 0, "stream": True, "include_usage": True,
                           "messages": [{"role": "user", "content": "hi"}], "chat_template_kwargs": {}}})
    client.completions.create(model="m", prompt=["Once upon", "a time"], max_tokens=5, echo=True, logprobs=2,
                              best_of=1, temperature=0, stop=["\n", "."], seed=7)
    out.append({"endpoint": "completions", "body": recorded[-1],
                "expect": {"temperature": 0.0, "top_p": 1.0, "n": 1, "stop": ["\n", "."], "max_tokens": 5, "seed": 7,
                           "sampling_logprobs": 2, "top_k": 0, "stream": False, "include_usage": False,
                           "prompts": ["Once upon", "a time"], "echo": True}})
    got = list(client.completions.create(model="m", prompt=[[1, 2, 3], [4]], stream=True,
                                         stream_options={"include_usage": True}))
    assert len(got) == len(completion_stream_chunks) and got[-1].usage is not None
    out.append({"endpoint": "completions", "body": recorded[-1],
                "expect": {"temperature": 1.0, "top_p": 1.0, "n": 1, "stop": [], "max_tokens": 16, "seed": None,
                           "sampling_logprobs": -1, "top_k": 0, "stream": True, "include_usage": True,
                           "prompts": [[1, 2, 3], [4]], "echo": False}})
    return out


def main(path):
    cases = []
    base = {"id": "chatcmpl-AbCdEfGhIjKlMnOpQrStUvWx", "created": 1764700000, "model": "tiny-llama"}
    u = {"prompt_tokens": 12, "completion_tokens": 5, "cached_tokens": 4}

    # chat.completion: plain, with logprobs (partial UTF-8 pieces, -inf), n=2 with "length".
    special = [token(b"\xe2\x82", -0.1, [(b"\xe2\x82", -0.1), (b"\xe2", float("-inf"))]),
               token(b"\xac", 0.0, []), token(b"caf\xc3\xa9", -1e-8, [(b"caf\xc3\xa9", -1e-8)])]
    for name, choices in [
        ("chat_plain", [{"index": 0, "content": "Hi there!", "finish_reason": "stop", "logprobs": None}]),
        ("chat_logprobs", [{"index": 0, "content": "\u20ac caf\u00e9", "finish_reason": "stop", "logprobs": special}]),
        ("chat_n2", [{"index": 0, "content": "a \"quoted\"\nline", "finish_reason": "length",
                      "logprobs": rand_tokens(4, 3)},
                     {"index": 1, "content": "", "finish_reason": "stop", "logprobs": rand_tokens(1, 0)}]),
    ]:
        inp = dict(base, choices=choices, usage=u)
        exp = head(inp, "chat.completion")
        exp["choices"] = [{"index": c["index"],
                           "message": {"role": "assistant", "content": c["content"], "refusal": None,
                                       "annotations": []},
                           "logprobs": chat_lps(c["logprobs"]), "finish_reason": c["finish_reason"]}
                          for c in choices]
        exp["usage"] = usage(u)
        sdk_check(exp, ChatCompletion)
        cases.append({"name": name, "kind": "chat_completion", "input": inp, "expected": exp})

    # chat.completion.chunk: role, content (+logprobs), finish; with and without include_usage.
    deltas = [("role", {"index": 0, "role": True}),
              ("content", {"index": 0, "content": "Hel", "logprobs": rand_tokens(2, 2)}),
              ("content_i1", {"index": 1, "content": "\u00e9"}),
              ("finish", {"index": 0, "finish_reason": "length"})]
    for include_usage in (False, True):
        for dname, d in deltas:
            inp = dict(base, delta=d, include_usage=include_usage)
            exp = head(inp, "chat.completion.chunk")
            delta = {}
            if d.get("role"):
                delta = {"role": "assistant", "content": d.get("content", ""), "refusal": None}
            elif "content" in d:
                delta = {"content": d["content"]}
            exp["choices"] = [{"index": d["index"], "delta": delta, "logprobs": chat_lps(d.get("logprobs")),
                               "finish_reason": d.get("finish_reason")}]
            if include_usage:
                exp["usage"] = None
            sdk_check(exp, ChatCompletionChunk)
            cases.append({"name": f"chat_chunk_{dname}_{include_usage}", "kind": "chat_chunk", "input": inp,
                          "expected": exp})
    inp = dict(base, usage=u)
    exp = dict(head(inp, "chat.completion.chunk"), choices=[], usage=usage(u))
    sdk_check(exp, ChatCompletionChunk)
    cases.append({"name": "chat_usage_chunk", "kind": "chat_usage_chunk", "input": inp, "expected": exp})

    # text_completion: plain, legacy logprobs with echo (first entry null), offsets continuing.
    cbase = dict(base, id="cmpl-AbCdEfGhIjKlMnOpQrStUvWx")
    comp_choices = [
        {"index": 0, "text": "Once upon", "finish_reason": "length", "logprobs": None, "first_logprob_null": 0,
         "text_offset_start": 0},
        {"index": 1, "text": "\u20ac!", "finish_reason": "stop", "logprobs": special, "first_logprob_null": 1,
         "text_offset_start": 0},
        {"index": 2, "text": "x", "finish_reason": "stop", "logprobs": rand_tokens(5, 2), "first_logprob_null": 0,
         "text_offset_start": 17},
    ]
    inp = dict(cbase, choices=comp_choices, usage=u)
    exp = head(inp, "text_completion")
    exp["choices"] = [{"index": c["index"], "text": c["text"], "logprobs": legacy_lps(c),
                       "finish_reason": c["finish_reason"]} for c in comp_choices]
    exp["usage"] = usage(u)
    check_completion(exp)
    cases.append({"name": "text_completion", "kind": "text_completion", "input": inp, "expected": exp})
    for include_usage in (False, True):
        for i, c in enumerate([dict(comp_choices[2], finish_reason=""), comp_choices[1]]):
            inp = dict(cbase, choice=c, include_usage=include_usage)
            exp = head(inp, "text_completion")
            exp["choices"] = [{"index": c["index"], "text": c["text"], "logprobs": legacy_lps(c),
                               "finish_reason": c["finish_reason"] or None}]
            if include_usage:
                exp["usage"] = None
            check_completion(exp)
            cases.append({"name": f"completion_chunk_{i}_{include_usage}", "kind": "completion_chunk",
                          "input": inp, "expected": exp})
    inp = dict(cbase, usage=u)
    exp = dict(head(inp, "text_completion"), choices=[], usage=usage(u))
    check_completion(exp)
    cases.append({"name": "completion_usage_chunk", "kind": "completion_usage_chunk", "input": inp,
                  "expected": exp})

    chat_stream = [c["expected"] for c in cases if c["name"].startswith("chat_chunk_") and c["name"].endswith("True")]
    chat_stream.append(cases[[c["name"] for c in cases].index("chat_usage_chunk")]["expected"])
    comp_stream = [c["expected"] for c in cases if c["name"].startswith("completion_chunk_") and c["name"].endswith("True")]
    comp_stream.append(exp)
    requests = sdk_requests(chat_stream, comp_stream)

    # Error bodies.
    for status, typ, msg, param, code in [
        (400, "invalid_request_error", "Invalid 'n': integer above maximum value.", "n", "integer_above_max_value"),
        (404, "not_found_error", "The model 'x' does not exist.", "", ""),
    ]:
        exp = {"error": {"message": msg, "type": typ, "param": param or None, "code": code or None}}
        m = ErrorObject.model_validate(exp["error"])
        check_keys(exp["error"], m)
        cases.append({"name": f"error_{status}", "kind": "error",
                      "input": {"status": status, "type": typ, "message": msg, "param": param, "code": code},
                      "expected": exp})

    # UTF-8: well-formedness and U+FFFD substitution of maximal subparts, per Python.
    samples = [b"", b"plain", b"\xc3\xa9", b"\xc3", b"\xe2\x82", b"\xe2\x82\xac", b"\xed\xa0\x80", b"\xf4\x90\x80\x80",
               b"\xf0\x9f\x98", b"\xf0\x9f\x98\x80", b"\xc0\xaf", b"\xe0\x80\xaf", b"\xff\xfe", b"a\x80b",
               b"\xf1\x80\x80\xe1\x80\xc2", b"\xef\xbf\xbd", b"\xf5\x80", b"\xe1\x80\x41"]
    for _ in range(40):
        n = int(rng.integers(1, 9))
        samples.append(bytes(int(x) for x in rng.choice([0x41, 0x80, 0xbf, 0xc2, 0xe0, 0xed, 0xf0, 0xf4, 0x9f, 0xa0,
                                                         0x90, 0xff], size=n)))
    utf8 = []
    for s in samples:
        try:
            s.decode("utf-8")
            valid = True
        except UnicodeDecodeError:
            valid = False
        utf8.append({"bytes": list(s), "valid": valid, "replaced": list(s.decode("utf-8", "replace").encode()),
                     "length": len(s.decode("utf-8", "replace"))})

    with open(path, "w") as f:
        json.dump({"cases": cases, "utf8": utf8, "requests": requests}, f, indent=1, ensure_ascii=True, allow_nan=False)
        f.write("\n")
    print(f"{len(cases)} cases, {len(utf8)} utf8 samples, {len(requests)} SDK requests → {path}")


if __name__ == "__main__":
    main(sys.argv[1])
