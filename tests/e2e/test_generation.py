"""/v1/completions on the tiny Llama with the real Llama 2 tokenizer: greedy text equals the
transformers float64 golden (decoded by HF tokenizers), first-token logprobs equal the golden
logits' log_softmax, stop strings that span a token boundary cut the text exactly (streaming
too), seeds reproduce, max_tokens ends with "length" and exact usage."""
from __future__ import annotations

import numpy as np
import openai
import pytest

import oracle
from server import stream_post

G = oracle.golden("llama_tok")
TEXTS = G["prompt_text"]
LOGPROB_TOL = 5e-3  # f32 activations vs the float64 oracle on F16 weights, logits span ~40


@pytest.fixture(scope="module")
def srv(start_server, llama_tok_dir):
    return start_server(llama_tok_dir, name="llama_tok")


@pytest.fixture(scope="module")
def client(srv):
    return srv.client()


def golden_text(i: int, n: int = 32) -> str:
    return oracle.continuation_text(oracle.llama2_tokenizer(), G["prompts"][i], G["greedy"][i][:n])


def complete(client, srv, **kw):
    return client.completions.create(model=srv.model_id, **kw)


def test_greedy_text_equals_golden_for_a_prompt_list(srv, client):
    r = complete(client, srv, prompt=TEXTS, temperature=0, max_tokens=32)
    assert r.object == "text_completion" and r.id.startswith("cmpl-")
    assert sorted(c.index for c in r.choices) == [0, 1, 2]
    for c in r.choices:
        assert c.text == golden_text(c.index), f"prompt {c.index}"
        assert c.finish_reason == "length"
    assert r.usage.prompt_tokens == sum(len(p) for p in G["prompts"])  # BOS included, as the tokenizer adds it
    assert r.usage.completion_tokens == 3 * 32


def test_token_id_prompt(srv, client):
    r = complete(client, srv, prompt=G["prompts"][2], temperature=0, max_tokens=32)
    assert r.choices[0].text == golden_text(2)
    assert r.usage.prompt_tokens == len(G["prompts"][2])


def test_empty_string_prompt_starts_from_bos(srv, client):
    # As in OpenAI's API, "" is a prompt: the Llama 2 tokenizer (HF tokenizers, the oracle) makes it
    # [BOS] alone, so the answer is the one for the token-id prompt [BOS].
    bos_only = oracle.llama2_tokenizer().encode("").ids
    assert bos_only == [1]
    r = complete(client, srv, prompt="", temperature=0, max_tokens=8)
    assert r.usage.prompt_tokens == 1 and r.usage.completion_tokens == 8
    assert r.choices[0].text == complete(client, srv, prompt=bos_only, temperature=0, max_tokens=8).choices[0].text
    with pytest.raises(openai.BadRequestError):  # an empty list of ids has nothing to start from
        complete(client, srv, prompt=[], max_tokens=8)


def test_top_p_zero_is_greedy(srv, client):
    # top_p = 0 (allowed by OpenAI's API and HF's warper) keeps the top token alone: the transformers
    # greedy golden at temperature 1, whatever the seed.
    for seed in (1, 2):
        r = complete(client, srv, prompt=TEXTS[0], temperature=1.0, top_p=0, seed=seed, max_tokens=16)
        assert r.choices[0].text == golden_text(0, 16)


def test_max_tokens_length_and_usage(srv, client):
    r = complete(client, srv, prompt=TEXTS[0], temperature=0, max_tokens=5)
    assert r.choices[0].finish_reason == "length"
    assert r.choices[0].text == golden_text(0, 5)
    assert (r.usage.prompt_tokens, r.usage.completion_tokens, r.usage.total_tokens) == (21, 5, 26)


def test_first_token_logprobs_match_golden_logits(srv, client):
    for i, text in enumerate(TEXTS):
        ref = oracle.log_softmax(oracle.logits("llama_tok")[i][-1])
        r = complete(client, srv, prompt=text, temperature=0, max_tokens=1, logprobs=5)
        lp = r.choices[0].logprobs
        assert abs(lp.token_logprobs[0] - ref[G["greedy"][i][0]]) < LOGPROB_TOL
        got = sorted(lp.top_logprobs[0].values(), reverse=True)
        want = np.sort(ref)[::-1][:len(got)]
        assert 1 <= len(got) <= 5
        np.testing.assert_allclose(got, want, atol=LOGPROB_TOL)


def test_echo_returns_prompt_then_generation(srv, client):
    r = complete(client, srv, prompt=TEXTS[0], echo=True, temperature=0, max_tokens=4, logprobs=1)
    c = r.choices[0]
    assert c.text == TEXTS[0] + golden_text(0, 4)
    lp = c.logprobs
    assert len(lp.tokens) == len(lp.token_logprobs) == len(G["prompts"][0]) + 4
    assert lp.token_logprobs[0] is None  # the first prompt token has no context
    assert all(x is not None and x <= 0 for x in lp.token_logprobs[1:])
    ref = oracle.log_softmax(oracle.logits("llama_tok")[0][-1])
    assert abs(lp.token_logprobs[len(G["prompts"][0])] - ref[G["greedy"][0][0]]) < LOGPROB_TOL


def stop_spanning_boundary(i: int) -> tuple[str, str]:
    """A stop string made of the end of one greedy token and the start of the next, and the text
    the server must return: the golden continuation cut right before it."""
    tok, p, gen = oracle.llama2_tokenizer(), G["prompts"][i], G["greedy"][i]
    full = golden_text(i)
    for k in range(2, 20):
        a = oracle.continuation_text(tok, p, gen[:k])          # text through token k-1
        b = oracle.continuation_text(tok, p, gen[:k + 1])      # through token k
        left, right = a[-2:], b[len(a):len(a) + 2]
        if len(left) == 2 and len(right) == 2 and left.strip() and right.strip():
            stop = left + right
            return stop, full[:full.index(stop)]
    raise AssertionError("no boundary with two visible characters each side")


@pytest.mark.parametrize("i", [0, 1, 2])
def test_stop_string_spanning_tokens(srv, client, i):
    stop, want = stop_spanning_boundary(i)
    r = complete(client, srv, prompt=TEXTS[i], temperature=0, max_tokens=32, stop=[stop])
    assert r.choices[0].text == want
    assert r.choices[0].finish_reason == "stop"
    status, events, done = stream_post(srv, "/v1/completions", {
        "model": srv.model_id, "prompt": TEXTS[i], "temperature": 0, "max_tokens": 32, "stop": stop, "stream": True})
    assert status == 200 and done
    pieces = [e["choices"][0]["text"] for e in events if e["choices"]]
    assert "".join(pieces) == want, f"streamed {pieces!r}"
    assert events[-1]["choices"][0]["finish_reason"] == "stop"
    # chat-style SDK stream of the same request
    sdk = "".join(ch.choices[0].text for ch in complete(client, srv, prompt=TEXTS[i], temperature=0, max_tokens=32,
                                                          stop=stop, stream=True) if ch.choices)
    assert sdk == want


def test_earliest_of_several_stops_wins_and_absent_stop_is_harmless(srv, client):
    full = golden_text(0)
    stop0, want0 = stop_spanning_boundary(0)
    late = full[-6:]
    assert full.index(late) > len(want0)
    r = complete(client, srv, prompt=TEXTS[0], temperature=0, max_tokens=32, stop=[late, stop0])
    assert r.choices[0].text == want0
    r = complete(client, srv, prompt=TEXTS[0], temperature=0, max_tokens=32, stop=["never appears @@"])
    assert r.choices[0].text == full and r.choices[0].finish_reason == "length"


def test_seed_reproducibility(srv, client):
    def sample(seed):
        return complete(client, srv, prompt=TEXTS[1], temperature=1.0, max_tokens=24, seed=seed).choices[0].text

    a, b, c = sample(1234), sample(1234), sample(4321)
    assert a == b
    assert a != c
    assert a != golden_text(1, 24)  # temperature 1 over 32000 random tokens is not greedy


def test_n_greater_than_one_with_seed(srv, client):
    r = complete(client, srv, prompt=TEXTS[2], n=4, temperature=1.0, seed=99, max_tokens=16)
    texts = [c.text for c in sorted(r.choices, key=lambda c: c.index)]
    assert [c.index for c in sorted(r.choices, key=lambda c: c.index)] == [0, 1, 2, 3]
    assert len(set(texts)) > 1, "n samples at temperature 1 should not all be equal"
    again = complete(client, srv, prompt=TEXTS[2], n=4, temperature=1.0, seed=99, max_tokens=16)
    assert [c.text for c in sorted(again.choices, key=lambda c: c.index)] == texts
    assert r.usage.completion_tokens == 4 * 16 and r.usage.prompt_tokens == len(G["prompts"][2])


def test_choices_of_nearby_seeds_are_independent(srv, client):
    # Choice 0 of a seeded request is the plain request with that seed; a later choice must not be
    # another seed's choice 0 (as it was when choice i drew with seed + i).
    def texts(seed, n):
        r = complete(client, srv, prompt=TEXTS[2], n=n, temperature=1.0, seed=seed, max_tokens=16)
        return [c.text for c in sorted(r.choices, key=lambda c: c.index)]

    three = texts(500, 3)
    assert texts(500, 1) == three[:1]
    singles = [texts(500 + k, 1)[0] for k in (1, 2)]
    assert three[1] not in singles and three[2] not in singles
