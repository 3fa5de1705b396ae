"""Independent oracles for the e2e tests: the transformers goldens committed in tests/data/archs
(greedy tokens, float64 logits), Hugging Face `tokenizers` on the same tokenizer.json, and
`jinja2` for the chat template. Nothing here is the server's own output captured once.
"""
from __future__ import annotations

import functools
import json
import pathlib
import shutil

import jinja2
import numpy as np
from tokenizers import Tokenizer

from server import ARCHS, CHAT_TEMPLATE, TEST_DATA

LLAMA2_TOKENIZER = TEST_DATA / "tokenizers" / "llama2" / "tokenizer.json"


@functools.lru_cache(None)
def golden(family: str) -> dict:
    return json.loads((ARCHS / family / "goldens.json").read_text())


@functools.lru_cache(None)
def logits(family: str) -> list[np.ndarray]:
    """Per prompt [positions, vocab] float64 logits (every position, or only the last ones)."""
    g = golden(family)
    raw = np.fromfile(ARCHS / family / g["logits_file"], dtype="<f4").astype(np.float64)
    out, off = [], 0
    for p in g["prompts"]:
        n = g["logits_last_positions"] or len(p)
        out.append(raw[off:off + n * g["vocab_size"]].reshape(n, g["vocab_size"]))
        off += n * g["vocab_size"]
    assert off == raw.size
    return out


def log_softmax(x: np.ndarray) -> np.ndarray:
    m = x.max(axis=-1, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis=-1, keepdims=True))


@functools.lru_cache(None)
def llama2_tokenizer() -> Tokenizer:
    return Tokenizer.from_file(str(LLAMA2_TOKENIZER))


def continuation_text(tok: Tokenizer, prompt_ids: list[int], gen_ids: list[int]) -> str:
    """What a server streams after the prompt: decode(prompt + gen) minus decode(prompt)."""
    full = tok.decode(prompt_ids + gen_ids, skip_special_tokens=True)
    head = tok.decode(prompt_ids, skip_special_tokens=True)
    assert full.startswith(head)
    return full[len(head):]


def make_llama_tok_dir(tmp: pathlib.Path) -> pathlib.Path:
    """tests/data/archs/llama_tok is committed without its tokenizer (the real Llama 2 one lives in
    tests/data/tokenizers/llama2): assemble a model folder the way tests/archs/cli_run_test does."""
    d = tmp / "llama_tok"
    d.mkdir(parents=True, exist_ok=True)
    for f in ("config.json", "generation_config.json", "model.safetensors"):
        shutil.copyfile(ARCHS / "llama_tok" / f, d / f)
    shutil.copyfile(LLAMA2_TOKENIZER, d / "tokenizer.json")
    return d


def render_chat(messages: list[dict], add_generation_prompt: bool = True) -> str:
    # transformers renders chat templates with trim_blocks and lstrip_blocks (chat_template_utils).
    env = jinja2.Environment(trim_blocks=True, lstrip_blocks=True)
    return env.from_string(CHAT_TEMPLATE.read_text()).render(
        messages=messages, add_generation_prompt=add_generation_prompt, bos_token="<s>", eos_token="</s>")


def chat_prompt_ids(messages: list[dict]) -> list[int]:
    return llama2_tokenizer().encode(render_chat(messages), add_special_tokens=False).ids
