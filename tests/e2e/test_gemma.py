"""Real text on the real Gemma 3 270M Q4_K_M, only when OXYD_GEMMA_GGUF names the file (never
committed; see tools/requirements.txt). Oracle: llama.cpp's greedy ids in
tests/data/gemma3_270m/greedy.json (tools/gen_gemma3_greedy_golden.py), decoded by HF tokenizers.
Only the first tokens are compared: Q4_K near-ties may flip later (tests/archs/real_gemma3_test)."""
from __future__ import annotations

import json
import os
import pathlib

import pytest
from tokenizers import Tokenizer

from server import ROOT, SHARED

GGUF = os.environ.get("OXYD_GEMMA_GGUF", "")
pytestmark = pytest.mark.skipif(not GGUF or not pathlib.Path(GGUF).is_file(),
                                reason="OXYD_GEMMA_GGUF does not name the Gemma 3 270M GGUF")
GOLDEN = json.loads((ROOT / "tests" / "data" / "gemma3_270m" / "greedy.json").read_text())
TEMPLATE = SHARED / "data" / "chat_templates" / "google-gemma-3-it.jinja"
N = 8


@pytest.fixture(scope="module")
def srv(start_server):
    return start_server(GGUF, "--chat-template", str(TEMPLATE), name="gemma-3-270m")


@pytest.fixture(scope="module")
def tok():
    return Tokenizer.from_file(str(SHARED / "data" / "tokenizers" / "gemma3" / "tokenizer.json"))


def case(kind, text):
    return next(c for c in GOLDEN["cases"] if c["kind"] == kind and (c["text"] == text or text in c["text"]))


def test_raw_greedy_real_text(srv, tok):
    c = case("raw", "What is the capital of France?")
    r = srv.client().completions.create(model=srv.model_id, prompt=c["text"], temperature=0, max_tokens=N)
    want = tok.decode(c["prompt_ids"] + c["greedy"][:N], skip_special_tokens=True)[len(c["text"]):]
    assert r.choices[0].text == want
    assert "Paris" in want
    assert r.usage.prompt_tokens == len(c["prompt_ids"])
    r = srv.client().completions.create(model=srv.model_id, prompt=c["text"], temperature=0, max_tokens=N,
                                        stop=["aris."])
    assert r.choices[0].text == want[:want.index("aris.")] and r.choices[0].finish_reason == "stop"


def test_chat_streaming_real_text(srv, tok):
    c = case("chat", "What is the capital of France?")
    client = srv.client()
    chunks = list(client.chat.completions.create(
        model=srv.model_id, messages=[{"role": "user", "content": "What is the capital of France?"}],
        temperature=0, max_tokens=N, stream=True, stream_options={"include_usage": True}))
    text = "".join(ch.choices[0].delta.content or "" for ch in chunks if ch.choices)
    assert text == tok.decode(c["greedy"][:N], skip_special_tokens=True)
    assert chunks[-1].usage.prompt_tokens == len(c["prompt_ids"])
    r = srv.post("/tokenize", {"content": c["text"], "add_special": False, "parse_special": True})
    assert r.json()["tokens"] == c["prompt_ids"][1:] or r.json()["tokens"] == c["prompt_ids"]
