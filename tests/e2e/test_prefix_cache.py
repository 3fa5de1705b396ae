"""Prefix caching: requests sharing a long system prompt hit the cache (visible in /metrics and in
usage.prompt_tokens_details.cached_tokens) and produce exactly what a --no-prefix-caching server
produces for the same greedy requests."""
from __future__ import annotations

import pytest

import oracle
from server import CHAT_TEMPLATE

BLOCK = 16
SYSTEM = ("You are a careful assistant for a small museum. Answer visitors' questions about opening hours, "
          "tickets, the cafe and the garden in one short sentence, politely and plainly, and never invent "
          "exhibits or prices.")
QUESTIONS = ["When do you open?", "Is the cafe open on Sunday?", "Can I bring a dog to the garden?",
             "How much is a ticket?"]


def messages(q):
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": q}]


@pytest.fixture(scope="module")
def servers(start_server, llama_tok_dir):
    cached = start_server(llama_tok_dir, "--chat-template", str(CHAT_TEMPLATE), name="prefix-cache")
    plain = start_server(llama_tok_dir, "--chat-template", str(CHAT_TEMPLATE), "--no-prefix-caching",
                         name="no-prefix-cache")
    return cached, plain


def shared_prefix_len():
    ids = [oracle.chat_prompt_ids(messages(q)) for q in QUESTIONS]
    n = 0
    while all(len(x) > n and x[n] == ids[0][n] for x in ids):
        n += 1
    return n


def test_shared_system_prompt_hits_the_cache_and_changes_nothing(servers):
    cached, plain = servers
    common = shared_prefix_len()
    assert common >= 3 * BLOCK, "the test needs a system prompt spanning several KV blocks"
    full_blocks = common // BLOCK * BLOCK

    def run(srv):
        c = srv.client()
        return [c.chat.completions.create(model=srv.model_id, messages=messages(q), temperature=0, max_tokens=12)
                for q in QUESTIONS]

    m0 = cached.metrics()
    with_cache = run(cached)
    m1 = cached.metrics()
    hits = m1.value("oxydllm_prefix_cache_hits_total") - m0.value("oxydllm_prefix_cache_hits_total")
    queries = m1.value("oxydllm_prefix_cache_queries_total") - m0.value("oxydllm_prefix_cache_queries_total")
    # every request after the first reuses at least the shared full blocks (counted in tokens)
    assert hits >= (len(QUESTIONS) - 1) * full_blocks, (hits, full_blocks)
    assert queries > 0
    for r in with_cache[1:]:
        details = r.usage.prompt_tokens_details
        if details is not None and details.cached_tokens is not None:
            assert details.cached_tokens >= full_blocks

    p0 = plain.metrics()
    without = run(plain)
    p1 = plain.metrics()
    assert p1.value("oxydllm_prefix_cache_hits_total") == p0.value("oxydllm_prefix_cache_hits_total") == 0
    for a, b, q in zip(with_cache, without, QUESTIONS):
        assert a.choices[0].message.content == b.choices[0].message.content, q
        assert a.usage.prompt_tokens == b.usage.prompt_tokens == len(oracle.chat_prompt_ids(messages(q)))
        assert a.usage.completion_tokens == b.usage.completion_tokens
