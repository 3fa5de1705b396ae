"""Load: 64 concurrent streaming chat clients, every third disconnecting mid-stream — no crash,
every completed stream well-formed and equal to the same greedy request made alone, and the KV
cache drains (oxydllm_kv_blocks_used back to 0). A full queue answers 429. SIGTERM drains in-flight
streams and exits 0."""
from __future__ import annotations

import concurrent.futures as cf
import json
import signal

import openai
import pytest

from server import CHAT_TEMPLATE, Server, httpx, sse_events, wait_until

PROMPTS = ["Tell me a story about a lighthouse.", "List some prime numbers.", "What is rain?",
           "Describe the colour blue to someone who cannot see."]
NUM_CLIENTS = 64
MAX_TOKENS = 24


@pytest.fixture(scope="module")
def srv(start_server, llama_tok_dir):
    return start_server(llama_tok_dir, "--chat-template", str(CHAT_TEMPLATE), name="llama_tok-load")


def body(srv, k, stream=True):
    return {"model": srv.model_id, "messages": [{"role": "user", "content": PROMPTS[k % len(PROMPTS)]}],
            "temperature": 0, "max_tokens": MAX_TOKENS, "stream": stream}


def one_client(srv, k):
    disconnect = k % 3 == 2
    with httpx.stream("POST", srv.url + "/v1/chat/completions", json=body(srv, k), timeout=300) as r:
        if r.status_code != 200:
            r.read()
            return k, "status", r.status_code, r.text
        if disconnect:
            n = 0
            for line in r.iter_lines():
                n += line.startswith("data:")
                if n >= 2:
                    break
            return k, "disconnected", n, None  # leaving the with-block drops the connection
        events, done = sse_events(r)
        return k, "done", done, events


def test_64_streams_with_disconnects(srv):
    client = srv.client()
    refs = [client.chat.completions.create(**{**body(srv, k, stream=False)}).choices[0] for k in range(len(PROMPTS))]
    with cf.ThreadPoolExecutor(NUM_CLIENTS) as ex:
        results = list(ex.map(lambda k: one_client(srv, k), range(NUM_CLIENTS)))
    assert srv.alive(), srv.tail()
    completed = 0
    for k, kind, a, events in results:
        assert kind != "status", f"client {k}: HTTP {a} {events}"
        if kind == "disconnected":
            continue
        completed += 1
        assert a, f"client {k}: no [DONE]"
        choices = [e["choices"][0] for e in events if e["choices"]]
        assert choices[0]["delta"].get("role") == "assistant"
        assert choices[-1]["finish_reason"] == refs[k % len(PROMPTS)].finish_reason
        assert all(c["finish_reason"] is None for c in choices[:-1])
        text = "".join(c["delta"].get("content") or "" for c in choices)
        assert text == refs[k % len(PROMPTS)].message.content, f"client {k}"
    assert completed == NUM_CLIENTS - NUM_CLIENTS // 3

    def drained():
        m = srv.metrics()
        return (m.value("oxydllm_kv_blocks_used") == 0 and m.value("oxydllm_running_requests") == 0
                and m.value("oxydllm_queue_depth") == 0)

    assert wait_until(drained, timeout_s=30), "KV blocks / running requests not released:\n" + srv.metrics().text
    # and it still answers correctly
    again = client.chat.completions.create(**body(srv, 1, stream=False)).choices[0]
    assert again.message.content == refs[1].message.content


@pytest.fixture(scope="module")
def small_srv(start_server, llama_tok_dir):
    return start_server(llama_tok_dir, "--max-num-seqs", "1", "--max-queued-requests", "2", name="llama_tok-queue2")


def test_full_queue_is_429(small_srv):
    client = small_srv.client()

    def one(k):
        try:
            r = client.completions.create(model=small_srv.model_id, prompt=f"Request number {k} says",
                                          max_tokens=60, temperature=0, extra_body={"ignore_eos": True})
            return 200, r.choices[0].finish_reason
        except openai.RateLimitError as e:
            return e.status_code, e.body

    with cf.ThreadPoolExecutor(24) as ex:
        results = list(ex.map(one, range(24)))
    statuses = [s for s, _ in results]
    assert 429 in statuses, "24 concurrent requests with 1 running + 2 queued: none was rejected"
    assert 200 in statuses
    for s, detail in results:
        if s == 429:
            assert isinstance(detail, dict) and detail.get("message"), detail
        else:
            assert detail == "length"
    m = small_srv.metrics()
    rejected = m.matching("oxydllm_requests_total", lambda ls: ls.get("status") == "429")
    assert rejected == statuses.count(429), json.dumps(results)[:500]
    assert client.completions.create(model=small_srv.model_id, prompt="after", max_tokens=2).choices


def test_sigterm_drains_in_flight_streams(llama_tok_dir):
    """SIGTERM while streams run: they finish well-formed (finish_reason, [DONE]), the process exits 0."""
    srv = Server(str(llama_tok_dir), name="llama_tok-shutdown").start()
    try:
        req = {"model": srv.model_id, "prompt": "Once upon a time", "max_tokens": 80, "temperature": 0,
               "ignore_eos": True, "stream": True}
        with httpx.stream("POST", srv.url + "/v1/completions", json=req, timeout=120) as r:
            lines = r.iter_lines()
            first = next(line for line in lines if line.startswith("data:"))
            srv.proc.send_signal(signal.SIGTERM)
            rest = list(lines)
        data = [first] + [x for x in rest if x.startswith("data:")]
        assert data[-1] == "data: [DONE]", data[-3:]
        events = [json.loads(x[5:]) for x in data[:-1]]
        assert "error" not in events[-1], events[-1]
        assert events[-1]["choices"][0]["finish_reason"] == "length", events[-1]  # drained, not cut
        assert srv.proc.wait(30) == 0, srv.tail()
    finally:
        srv.kill()
