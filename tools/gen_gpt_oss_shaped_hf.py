#!/usr/bin/env python3
"""Writes a random-weight Hugging Face checkpoint with gpt-oss-20b's shapes, for benchmarks only.

The layout is that of openai/gpt-oss-20b: BF16 attention (q/k/v/o with biases, sinks), embeddings,
head and router; the experts as MXFP4 `*_blocks` U8 [E, rows, cols/32, 16] and `*_scales` U8
[E, rows, cols/32] (ARCHITECTURES.md §5.4). Values are random: the checkpoint times decode and
prefill, its tokens mean nothing. gpt-oss-20b: hidden 2880, 64 query / 8 KV heads of 64, 32
experts of 2880, top-4, vocab 201088, 24 layers (--layers to keep fewer: memory).

  tools/gen_gpt_oss_shaped_hf.py --out build/models/gpt-oss-20b-shaped-hf --layers 12

Needs numpy only (the safetensors file is written directly: an 8-byte header length, the JSON
header, the tensors back to back).
"""
import argparse
import json
import os
import struct

import numpy as np

H, HEADS, KV, HD, E, TOPK, I, VOCAB = 2880, 64, 8, 64, 32, 4, 2880, 201088


def bf16(rng, shape, scale):
    x = (rng.standard_normal(size=shape, dtype=np.float32) * scale).view(np.uint32)
    return ((x + 0x7FFF + ((x >> 16) & 1)) >> 16).astype(np.uint16)  # round to nearest even


ONE = 0x3F80  # 1.0 in bf16


def specs(layers, vocab):
    """(name, dtype, shape, make(rng, shape)) of every tensor, in file order."""
    normal = lambda scale: lambda rng, shape: bf16(rng, shape, scale)
    ones = lambda rng, shape: np.full(shape, ONE, np.uint16)
    out = [("model.embed_tokens.weight", "BF16", (vocab, H), normal(0.02)),
           ("lm_head.weight", "BF16", (vocab, H), normal(0.02)),
           ("model.norm.weight", "BF16", (H,), ones)]
    for l in range(layers):
        p = f"model.layers.{l}."
        out += [(p + "input_layernorm.weight", "BF16", (H,), ones),
                (p + "post_attention_layernorm.weight", "BF16", (H,), ones)]
        for name, rows, cols in (("q_proj", HEADS * HD, H), ("k_proj", KV * HD, H), ("v_proj", KV * HD, H),
                                 ("o_proj", H, HEADS * HD)):
            out += [(p + f"self_attn.{name}.weight", "BF16", (rows, cols), normal(0.02)),
                    (p + f"self_attn.{name}.bias", "BF16", (rows,), normal(0.02))]
        out += [(p + "self_attn.sinks", "BF16", (HEADS,), normal(1.0)),
                (p + "mlp.router.weight", "BF16", (E, H), normal(0.02)),
                (p + "mlp.router.bias", "BF16", (E,), normal(0.02))]
        for name, rows, cols in (("gate_up_proj", 2 * I, H), ("down_proj", H, I)):
            out += [(p + f"mlp.experts.{name}_blocks", "U8", (E, rows, cols // 32, 16),
                     lambda rng, shape: rng.integers(0, 256, shape, np.uint8)),
                    # E8M0 2^(e-127), e in 119..122: |w| up to 6·2^-5
                    (p + f"mlp.experts.{name}_scales", "U8", (E, rows, cols // 32),
                     lambda rng, shape: rng.integers(119, 123, shape, np.uint8)),
                    (p + f"mlp.experts.{name}_bias", "BF16", (E, rows), normal(0.02))]
    return out


def write_safetensors(path, items, rng):
    """Header first (from the shapes), then each tensor made and written in turn."""
    header, offset = {}, 0
    for name, dtype, shape, _ in items:
        nbytes = int(np.prod(shape)) * (2 if dtype == "BF16" else 1)
        header[name] = {"dtype": dtype, "shape": list(shape), "data_offsets": [offset, offset + nbytes]}
        offset += nbytes
    raw = json.dumps(header).encode()
    raw += b" " * (-len(raw) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(raw)))
        f.write(raw)
        for _, _, shape, make in items:
            f.write(np.ascontiguousarray(make(rng, shape)).tobytes())


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--layers", type=int, default=24)
    ap.add_argument("--vocab", type=int, default=VOCAB)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    rng = np.random.default_rng(0)
    config = {
        "architectures": ["GptOssForCausalLM"], "model_type": "gpt_oss", "attention_bias": True,
        "hidden_size": H, "intermediate_size": I, "head_dim": HD, "num_attention_heads": HEADS,
        "num_key_value_heads": KV, "num_hidden_layers": a.layers, "num_local_experts": E,
        "num_experts_per_tok": TOPK, "vocab_size": a.vocab, "max_position_embeddings": 131072,
        "layer_types": ["sliding_attention" if l % 2 == 0 else "full_attention" for l in range(a.layers)],
        "sliding_window": 128, "rms_norm_eps": 1e-5, "hidden_act": "silu", "swiglu_limit": 7.0,
        "tie_word_embeddings": False, "bos_token_id": 199998, "eos_token_id": 200002, "pad_token_id": 199999,
        "rope_parameters": {"rope_type": "yarn", "rope_theta": 150000.0, "factor": 32.0, "beta_fast": 32.0,
                            "beta_slow": 1.0, "original_max_position_embeddings": 4096, "truncate": False},
        "quantization_config": {"quant_method": "mxfp4", "modules_to_not_convert": [
            "model.layers.*.self_attn", "model.layers.*.mlp.router", "model.embed_tokens", "lm_head"]},
        "dtype": "bfloat16",
    }
    with open(os.path.join(a.out, "config.json"), "w") as f:
        json.dump(config, f, indent=1)
    write_safetensors(os.path.join(a.out, "model.safetensors"), specs(a.layers, a.vocab), rng)
    print(f"wrote {a.out}: {a.layers} layers, vocab {a.vocab}")


if __name__ == "__main__":
    main()
