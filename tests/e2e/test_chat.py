"""/v1/chat/completions through the openai SDK (and raw SSE where the wire format itself is the
point), /v1/models, the llama.cpp-style /tokenize, /detokenize, /apply-template and /metrics.
Model: the tiny Llama with the real Llama 2 tokenizer and tests/e2e/chat_template.jinja; prompt
token counts come from jinja2 + Hugging Face tokenizers, never from the server."""
from __future__ import annotations

import math

import openai
import pytest

import oracle
from server import CHAT_TEMPLATE, stream_post

MESSAGES = [{"role": "system", "content": "You are a terse assistant."},
            {"role": "user", "content": "Name three colours of the rainbow."}]


@pytest.fixture(scope="module")
def srv(start_server, llama_tok_dir):
    return start_server(llama_tok_dir, "--chat-template", str(CHAT_TEMPLATE), name="llama_tok+template")


@pytest.fixture(scope="module")
def client(srv):
    return srv.client()


def chat(client, srv, **kw):
    kw.setdefault("messages", MESSAGES)
    return client.chat.completions.create(model=srv.model_id, **kw)


def test_health_and_models(srv, client):
    assert srv.get("/health").status_code == 200
    models = client.models.list().data
    assert [m.id for m in models] == [srv.model_id]
    assert models[0].object == "model"
    assert client.models.retrieve(srv.model_id).id == srv.model_id
    with pytest.raises(openai.NotFoundError) as e:
        client.models.retrieve("no-such-model")
    assert e.value.status_code == 404


def test_non_streaming_shape_and_usage(srv, client):
    r = chat(client, srv, temperature=0, max_tokens=8)
    assert r.object == "chat.completion" and r.id.startswith("chatcmpl-") and r.model == srv.model_id
    assert len(r.choices) == 1
    c = r.choices[0]
    assert c.index == 0 and c.message.role == "assistant" and isinstance(c.message.content, str)
    assert c.finish_reason in ("length", "stop")
    assert r.usage.prompt_tokens == len(oracle.chat_prompt_ids(MESSAGES))
    assert 1 <= r.usage.completion_tokens <= 8
    assert r.usage.total_tokens == r.usage.prompt_tokens + r.usage.completion_tokens


def test_chat_prompt_is_the_oracle_rendering(srv, client):
    """Greedy chat output equals greedy completion on the ids that jinja2 + tokenizers make of the
    same messages, and /apply-template returns the jinja2 rendering."""
    r = srv.post("/apply-template", {"messages": MESSAGES})
    assert r.status_code == 200, r.text
    assert r.json()["prompt"] == oracle.render_chat(MESSAGES)
    c = chat(client, srv, temperature=0, max_tokens=12)
    ids = oracle.chat_prompt_ids(MESSAGES)
    t = client.completions.create(model=srv.model_id, prompt=ids, temperature=0, max_tokens=12)
    assert c.choices[0].message.content == t.choices[0].text
    assert t.usage.prompt_tokens == len(ids)


def test_streaming_wire_format(srv, client):
    full = chat(client, srv, temperature=0, max_tokens=10)
    status, events, done = stream_post(srv, "/v1/chat/completions", {
        "model": srv.model_id, "messages": MESSAGES, "temperature": 0, "max_tokens": 10, "stream": True})
    assert status == 200 and done, "stream must end with data: [DONE]"
    assert len({e["id"] for e in events}) == 1 and all(e["object"] == "chat.completion.chunk" for e in events)
    assert all(e.get("usage") is None for e in events)  # no usage unless include_usage
    first = events[0]["choices"][0]
    assert first["delta"].get("role") == "assistant" and not first["delta"].get("content")
    assert all("role" not in e["choices"][0]["delta"] for e in events[1:])
    finishes = [e["choices"][0]["finish_reason"] for e in events]
    assert finishes[-1] == full.choices[0].finish_reason and all(f is None for f in finishes[:-1])
    text = "".join(e["choices"][0]["delta"].get("content") or "" for e in events)
    assert text == full.choices[0].message.content
    # The SDK reads the same stream.
    sdk = "".join(ch.choices[0].delta.content or "" for ch in
                  chat(client, srv, temperature=0, max_tokens=10, stream=True) if ch.choices)
    assert sdk == text


def test_stream_include_usage(srv, client):
    ref = chat(client, srv, temperature=0, max_tokens=6)
    chunks = list(chat(client, srv, temperature=0, max_tokens=6, stream=True,
                       stream_options={"include_usage": True}))
    last = chunks[-1]
    assert last.choices == [] and last.usage is not None
    assert (last.usage.prompt_tokens, last.usage.completion_tokens) == (ref.usage.prompt_tokens, ref.usage.completion_tokens)
    assert last.usage.total_tokens == ref.usage.total_tokens
    assert all(c.usage is None and c.choices for c in chunks[:-1])
    plain = list(chat(client, srv, temperature=0, max_tokens=6, stream=True))
    assert all(c.choices and c.usage is None for c in plain)


def test_logprobs_and_top_logprobs(srv, client):
    r = chat(client, srv, temperature=0, max_tokens=8, logprobs=True, top_logprobs=5)
    content = r.choices[0].logprobs.content
    assert len(content) == r.usage.completion_tokens
    assert b"".join(bytes(t.bytes) for t in content).decode() == r.choices[0].message.content
    for t in content:
        tops = t.top_logprobs
        assert len(tops) == 5
        vals = [x.logprob for x in tops]
        assert vals == sorted(vals, reverse=True) and all(v <= 0 for v in vals)
        assert sum(math.exp(v) for v in vals) <= 1 + 1e-4
        assert math.isclose(t.logprob, vals[0], abs_tol=1e-5)  # greedy picks the top token
        assert t.token == tops[0].token
    r = chat(client, srv, temperature=0, max_tokens=3)
    assert r.choices[0].logprobs is None


def test_n_choices_streaming_and_not(srv, client):
    r = chat(client, srv, n=3, temperature=1.0, seed=11, max_tokens=6, logprobs=True)
    assert sorted(c.index for c in r.choices) == [0, 1, 2]
    assert r.usage.completion_tokens == sum(len(c.logprobs.content) for c in r.choices)
    status, events, done = stream_post(srv, "/v1/chat/completions", {
        "model": srv.model_id, "messages": MESSAGES, "n": 2, "max_tokens": 5, "seed": 3, "stream": True})
    assert status == 200 and done
    for i in range(2):
        mine = [e["choices"][0] for e in events if e["choices"] and e["choices"][0]["index"] == i]
        assert mine[0]["delta"].get("role") == "assistant"
        assert mine[-1]["finish_reason"] in ("length", "stop")
        assert all(m["finish_reason"] is None for m in mine[:-1])


def test_tokenize_detokenize(srv):
    tok = oracle.llama2_tokenizer()
    text = "Hello world, ünïcödé and 日本語 text."
    r = srv.post("/tokenize", {"content": text})
    assert r.status_code == 200, r.text
    assert r.json()["tokens"] == tok.encode(text, add_special_tokens=False).ids
    r = srv.post("/tokenize", {"content": text, "add_special": True})
    assert r.json()["tokens"] == tok.encode(text, add_special_tokens=True).ids
    ids = tok.encode(text, add_special_tokens=False).ids
    r = srv.post("/detokenize", {"tokens": ids})
    assert r.status_code == 200, r.text
    assert r.json()["content"].strip() == tok.decode(ids).strip()


def test_metrics_count_what_usage_reports(srv, client):
    before = srv.metrics()
    r = chat(client, srv, temperature=0, max_tokens=7)
    after = srv.metrics()
    for name in ("oxydllm_kv_blocks_total", "oxydllm_kv_blocks_used", "oxydllm_queue_depth",
                 "oxydllm_running_requests", "oxydllm_prefix_cache_queries_total", "oxydllm_prefix_cache_hits_total"):
        assert after.has(name), f"/metrics lacks {name}"
    assert after.value("oxydllm_kv_blocks_total", model=srv.model_id) > 0

    def delta(name, **labels):
        return after.value(name, **labels) - before.value(name, **labels)

    assert delta("oxydllm_prompt_tokens_total") == r.usage.prompt_tokens
    assert delta("oxydllm_generation_tokens_total") == r.usage.completion_tokens
    assert delta("oxydllm_ttft_milliseconds_count") == 1
    ok_chat = lambda ls: "chat" in ls.get("endpoint", "") and ls.get("status") == "200"  # noqa: E731
    assert after.matching("oxydllm_requests_total", ok_chat) - before.matching("oxydllm_requests_total", ok_chat) == 1


def test_chat_stop_string_streamed_and_not(srv, client):
    """The stop string is cut from the model's own greedy text (string logic is the oracle): both
    paths return exactly the text before its first occurrence, and no stream chunk leaks past it."""
    full = chat(client, srv, temperature=0, max_tokens=16).choices[0].message.content
    stop = full[6:10]
    assert len(stop) == 4 and stop.strip(), repr(full)
    want = full[:full.index(stop)]
    r = chat(client, srv, temperature=0, max_tokens=16, stop=[stop])
    assert r.choices[0].message.content == want and r.choices[0].finish_reason == "stop"
    pieces = [ch.choices[0].delta.content or "" for ch in
              chat(client, srv, temperature=0, max_tokens=16, stop=stop, stream=True) if ch.choices]
    assert "".join(pieces) == want, pieces
