"""Tiny random-weight Llama models over a real tokenizer, written at test time (numpy only, no
committed weights): one layer, hidden size 32, the tokenizer's whole vocabulary, tied embeddings,
a 4096-token context (tool prompts are long). What such a model writes is noise, which is the point
for constrained decoding: under a grammar every output must still be valid (issue 25). A model can
also be built to write a given token chain (an untied head then), e.g. a call opener."""
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


def _program_chain(t: dict[str, np.ndarray], chain: list[int], lm_head: np.ndarray) -> None:
    """Makes the model write chain[i + 1] after chain[i], whatever came before: the layer's outputs
    (o_proj, down_proj) are zeroed so the final hidden state is the normed embedding of the last
    token; chain[i]'s embedding becomes the unit vector e_i (RMS-normed: sqrt(HIDDEN) e_i) and the
    untied head row of chain[i + 1] is 10 e_i, a logit of ~57 against the random rows' ~5 at most
    (std 0.2 sqrt(HIDDEN) over the vocabulary). Every other token keeps its random embedding, so
    its next token is noise as before. Used to make a tiny model write a call opener of several
    tokens, which no single logit_bias can."""
    assert len(chain) <= HIDDEN and len(set(chain)) == len(chain)
    p = "model.layers.0."
    t[p + "self_attn.o_proj.weight"][:] = 0
    t[p + "mlp.down_proj.weight"][:] = 0
    emb = t["model.embed_tokens.weight"]
    for i, tok in enumerate(chain):
        emb[tok] = np.eye(HIDDEN)[i]
        lm_head[tok] = 0
    for i, tok in enumerate(chain[1:]):
        lm_head[tok] = 10 * np.eye(HIDDEN)[i]
    t["lm_head.weight"] = lm_head


def make_tiny_llama(out: pathlib.Path, tokenizer: str, vocab_size: int, eos_ids: list[int], seed: int = 0,
                    chain: list[int] | None = None) -> pathlib.Path:
    """tokenizer: a folder under tests/data/tokenizers (tokenizer.json, maybe tokenizer_config.json).
    chain: token ids [a, b, c, ...] the model is built to follow (a -> b -> c, see _program_chain)."""
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
    if chain:
        _program_chain(t, chain, n(vocab_size, HIDDEN))
    _write_safetensors(out / "model.safetensors", t)
    cfg = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": HIDDEN,
           "intermediate_size": INTER, "num_attention_heads": HEADS, "num_key_value_heads": 1, "head_dim": HEAD_DIM,
           "num_hidden_layers": 1, "hidden_act": "silu", "max_position_embeddings": 4096, "rms_norm_eps": 1e-6,
           "rope_theta": 10000.0, "tie_word_embeddings": not chain, "vocab_size": vocab_size, "torch_dtype": "float16",
           "eos_token_id": eos_ids}
    (out / "config.json").write_text(json.dumps(cfg, indent=1))
    (out / "generation_config.json").write_text(json.dumps({"eos_token_id": eos_ids}))
    return out
