"""Tiny random-weight Llama models over a real tokenizer, written at test time (numpy only, no
committed weights): one layer, hidden size 32, the tokenizer's whole vocabulary, tied embeddings,
a 4096-token context (tool prompts are long). What such a model writes is noise, which is the point
for constrained decoding: under a grammar every output must still be valid (issue 25)."""
from __future__ import annotations

import json
import pathlib
import shutil

import numpy as np

from server import TEST_DATA

HIDDEN, INTER, HEADS, HEAD_DIM = 32, 64, 2, 16


def _write_safetensors(path: pathlib.Path, tensors: dict[str, np.ndarray]) -> None:
    """The safetensors layout: u64 header size, JSON header (dtype, shape, data offsets), data."""
    header, blobs, off = {}, [], 0
    for name, a in tensors.items():
        b = np.ascontiguousarray(a, dtype=np.float16).tobytes()
        header[name] = {"dtype": "F16", "shape": list(a.shape), "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    h = json.dumps(header).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(len(h).to_bytes(8, "little"))
        f.write(h)
        for b in blobs:
            f.write(b)


def make_tiny_llama(out: pathlib.Path, tokenizer: str, vocab_size: int, eos_ids: list[int], seed: int = 0) -> pathlib.Path:
    """tokenizer: a folder under tests/data/tokenizers (tokenizer.json, maybe tokenizer_config.json)."""
    out.mkdir(parents=True, exist_ok=True)
    src = TEST_DATA / "tokenizers" / tokenizer
    for f in ("tokenizer.json", "tokenizer_config.json"):
        if (src / f).exists():
            shutil.copyfile(src / f, out / f)
    rng = np.random.default_rng(seed)
    n = lambda *shape, s=0.2: rng.normal(0.0, s, shape)  # noqa: E731
    t = {"model.embed_tokens.weight": n(vocab_size, HIDDEN, s=1.0), "model.norm.weight": np.ones(HIDDEN)}
    p = "model.layers.0."
    t.update({p + "input_layernorm.weight": np.ones(HIDDEN), p + "post_attention_layernorm.weight": np.ones(HIDDEN),
              p + "self_attn.q_proj.weight": n(HEADS * HEAD_DIM, HIDDEN), p + "self_attn.k_proj.weight": n(HEAD_DIM, HIDDEN),
              p + "self_attn.v_proj.weight": n(HEAD_DIM, HIDDEN), p + "self_attn.o_proj.weight": n(HIDDEN, HEADS * HEAD_DIM),
              p + "mlp.gate_proj.weight": n(INTER, HIDDEN), p + "mlp.up_proj.weight": n(INTER, HIDDEN),
              p + "mlp.down_proj.weight": n(HIDDEN, INTER)})
    _write_safetensors(out / "model.safetensors", t)
    cfg = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": HIDDEN,
           "intermediate_size": INTER, "num_attention_heads": HEADS, "num_key_value_heads": 1, "head_dim": HEAD_DIM,
           "num_hidden_layers": 1, "hidden_act": "silu", "max_position_embeddings": 4096, "rms_norm_eps": 1e-6,
           "rope_theta": 10000.0, "tie_word_embeddings": True, "vocab_size": vocab_size, "torch_dtype": "float16",
           "eos_token_id": eos_ids}
    (out / "config.json").write_text(json.dumps(cfg, indent=1))
    (out / "generation_config.json").write_text(json.dumps({"eos_token_id": eos_ids}))
    return out
