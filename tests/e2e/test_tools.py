"""Tool calling and reasoning through the openai SDK, on the tiny Llama with the real Llama 2
tokenizer and tests/e2e/tool_template.jinja: a template that teaches the <tool_call>{json}
syntax and opens <think> in its generation prompt (unless enable_thinking is false), so the server
reads reasoning and tool calls from this model's output. A tiny random model does not choose to
call a tool: the streamed tool-call deltas themselves are checked at the serving layer on scripted
token streams (tests/server/chat_output_test.cc). Here: what the server does around them, with
jinja2 + tokenizers and /v1/completions on the same prompt as the oracles."""
from __future__ import annotations

import json
import pathlib

import jinja2
import pytest

import oracle
from server import stream_post

TEMPLATE = pathlib.Path(__file__).parent / "tool_template.jinja"
TOOLS = [{"type": "function", "function": {"name": "get_weather", "description": "Weather in a city.",
                                           "parameters": {"type": "object",
                                                          "properties": {"city": {"type": "string"}}}}}]
MESSAGES = [{"role": "user", "content": "Weather in Paris?"}]
ROUND_TRIP = MESSAGES + [
    {"role": "assistant", "content": None,
     "tool_calls": [{"id": "call_1", "type": "function",
                     "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}}]},
    {"role": "tool", "tool_call_id": "call_1", "content": "20 C"},
    {"role": "user", "content": "Thanks. And Lyon?"}]


def render(messages, tools=None, **kw) -> str:
    env = jinja2.Environment(trim_blocks=True, lstrip_blocks=True)
    return env.from_string(TEMPLATE.read_text()).render(messages=messages, tools=tools, add_generation_prompt=True,
                                                        bos_token="<s>", eos_token="</s>", **kw)


def normalised(messages):
    """What src/server/protocol_chat.cc documents: null content "", JSON-string arguments parsed."""
    out = json.loads(json.dumps(messages))
    for m in out:
        if m.get("content") is None:
            m["content"] = ""
        for tc in m.get("tool_calls", []):
            tc["function"]["arguments"] = json.loads(tc["function"]["arguments"])
    return out


def n_tokens(text: str) -> int:
    return len(oracle.llama2_tokenizer().encode(text, add_special_tokens=False).ids)


@pytest.fixture(scope="module")
def srv(start_server, llama_tok_dir):
    return start_server(llama_tok_dir, "--chat-template", str(TEMPLATE), name="llama_tok+tools")


@pytest.fixture(scope="module")
def client(srv):
    return srv.client()


def test_round_trip_renders_as_jinja2(srv):
    r = srv.post("/apply-template", {"messages": ROUND_TRIP, "tools": TOOLS})
    assert r.status_code == 200, r.text
    assert r.json()["prompt"] == render(normalised(ROUND_TRIP), TOOLS)


def test_tool_choice_none_keeps_tools_out_of_the_prompt(srv, client):
    for choice, tools in (("none", None), ("auto", TOOLS)):
        r = client.chat.completions.create(model=srv.model_id, messages=ROUND_TRIP, tools=TOOLS, tool_choice=choice,
                                           max_tokens=2, temperature=0)
        assert r.usage.prompt_tokens == n_tokens(render(normalised(ROUND_TRIP), tools)), choice


def greedy_completion(srv, prompt: str, n: int) -> str:
    """Greedy /v1/completions on the ids tokenizers makes of the jinja2-rendered prompt."""
    ids = oracle.llama2_tokenizer().encode(prompt, add_special_tokens=False).ids
    r = srv.post("/v1/completions", {"model": srv.model_id, "prompt": ids, "max_tokens": n, "temperature": 0})
    assert r.status_code == 200, r.text
    return r.json()["choices"][0]["text"]


def test_reasoning_opened_by_the_template_is_reasoning_content(srv, client):
    """The generation prompt ends in <think>: everything this model says (it never closes it) is
    reasoning, none of it content; the text is /v1/completions' greedy text on the same prompt,
    trimmed; reasoning_tokens counts every completion token."""
    r = client.chat.completions.create(model=srv.model_id, messages=MESSAGES, tools=TOOLS, max_tokens=12,
                                       temperature=0)
    m = r.choices[0].message
    expected = greedy_completion(srv, render(MESSAGES, TOOLS), 12).strip()
    assert "</think>" not in expected  # the premise: the tiny model does not close it
    assert m.content in ("", None) and m.tool_calls is None
    assert m.reasoning_content == expected and m.model_extra["reasoning"] == expected
    assert r.usage.completion_tokens_details.reasoning_tokens == r.usage.completion_tokens


def test_streamed_reasoning_equals_the_whole_message(srv, client):
    kw = dict(model=srv.model_id, messages=MESSAGES, tools=TOOLS, max_tokens=12, temperature=0)
    whole = client.chat.completions.create(**kw).choices[0].message
    status, events, done = stream_post(srv, "/v1/chat/completions",
                                       {**kw, "stream": True, "stream_options": {"include_usage": True}})
    assert status == 200 and done
    deltas = [e["choices"][0]["delta"] for e in events if e["choices"]]
    assert "".join(d.get("reasoning_content", "") for d in deltas) == whole.reasoning_content
    assert "".join(d.get("content") or "" for d in deltas) == (whole.content or "")
    assert not any("tool_calls" in d for d in deltas)
    usage = events[-1]["usage"]
    assert usage["completion_tokens_details"]["reasoning_tokens"] == usage["completion_tokens"]
    # The SDK's own stream accumulation agrees (its final parse refuses finish_reason "length").
    with client.chat.completions.stream(**kw) as s:
        for _ in s:
            pass
        snapshot = s.current_completion_snapshot
    assert snapshot.choices[0].message.content in ("", None)
    assert snapshot.choices[0].message.model_extra["reasoning_content"] == whole.reasoning_content


def test_enable_thinking_false_reaches_the_template(srv, client):
    """enable_thinking false (top level, or in chat_template_kwargs) closes the think block in the
    prompt: the output is content, the same greedy text."""
    prompt = render(MESSAGES, TOOLS, enable_thinking=False)
    assert prompt.endswith("<think></think>")
    expected = greedy_completion(srv, prompt, 10)
    for extra in ({"enable_thinking": False}, {"chat_template_kwargs": {"enable_thinking": False}}):
        r = client.chat.completions.create(model=srv.model_id, messages=MESSAGES, tools=TOOLS, max_tokens=10,
                                           temperature=0, extra_body=extra)
        m = r.choices[0].message
        assert r.usage.prompt_tokens == n_tokens(prompt)
        if "<tool_call>" not in expected and "<think>" not in expected:
            assert m.content == expected and getattr(m, "reasoning_content", None) is None
            assert r.usage.completion_tokens_details.reasoning_tokens == 0


def test_server_default_enable_thinking(start_server, llama_tok_dir):
    s = start_server(llama_tok_dir, "--chat-template", str(TEMPLATE), "--enable-thinking", "false",
                     name="llama_tok+tools+no-thinking")
    r = s.post("/apply-template", {"messages": MESSAGES})
    assert r.json()["prompt"] == render(MESSAGES, None, enable_thinking=False)
    r = s.post("/apply-template", {"messages": MESSAGES, "enable_thinking": True})  # the request wins
    assert r.json()["prompt"] == render(MESSAGES, None, enable_thinking=True)
