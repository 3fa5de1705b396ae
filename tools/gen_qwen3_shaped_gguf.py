#!/usr/bin/env python3
"""Random-weight GGUFs with the exact shapes of Qwen3-0.6B, for speed benchmarks only (bench/).

Qwen3-0.6B: 28 layers, hidden 1024, 16 query heads, 8 KV heads, head_dim 128, FFN 3072, vocab 151936,
tied embeddings (no output.weight: the LM head reads token_embd), q/k RMSNorm, rope theta 1e6.
Weights are N(0, 0.02) (norms 1), seeded per tensor name, so every file of one seed holds the same
underlying values. Every 2-D weight, token_embd included, is stored in the requested type
(like llama-quantize --pure); norms stay F32. Quantization is gguf-py's own (gguf.quants.quantize).
Tokenizer metadata: the real Qwen3 vocabulary (tokenizer.json from tests/data/tokenizers/qwen3,
151669 tokens padded with UNUSED "[PADi]" tokens to 151936, as convert_hf_to_gguf.py does), so
llama.cpp and oxydllm both load the file as a normal qwen3 model.

Command (from the repository root; ~1 min per file on 2 cores, files are 340 / 640 MB, never committed):
  /work/venv/bin/python tools/gen_qwen3_shaped_gguf.py --out build/models --types Q4_0 Q8_0
Writes build/models/qwen3-0.6b-shaped-{Q4_0,Q8_0}.gguf (skips a file that already exists).
F16 is written the same way. The K-quant mixes gguf-py cannot make (Q2_K, Q3_K_M, Q4_K_M) are
llama.cpp's own llama_model_quantize of the F16 file (llama-cpp-python, importable as in bench/, e.g.
PYTHONPATH=build/pylib), so they hold exactly the tensor types llama-quantize gives a real model.
"""
import argparse
import json
import os
import sys
import zlib

import numpy as np
import gguf

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_tokenizer_gguf import config_token, looks_special  # noqa: E402

LAYERS, HIDDEN, HEADS, KV_HEADS, HEAD_DIM, FFN, VOCAB = 28, 1024, 16, 8, 128, 3072, 151936


def tensor_shapes():
    """(name, [rows, cols]) in numpy order: rows = output features."""
    yield "token_embd.weight", [VOCAB, HIDDEN]
    for i in range(LAYERS):
        p = f"blk.{i}."
        yield p + "attn_norm.weight", [HIDDEN]
        yield p + "attn_q.weight", [HEADS * HEAD_DIM, HIDDEN]
        yield p + "attn_k.weight", [KV_HEADS * HEAD_DIM, HIDDEN]
        yield p + "attn_v.weight", [KV_HEADS * HEAD_DIM, HIDDEN]
        yield p + "attn_q_norm.weight", [HEAD_DIM]
        yield p + "attn_k_norm.weight", [HEAD_DIM]
        yield p + "attn_output.weight", [HIDDEN, HEADS * HEAD_DIM]
        yield p + "ffn_norm.weight", [HIDDEN]
        yield p + "ffn_gate.weight", [FFN, HIDDEN]
        yield p + "ffn_up.weight", [FFN, HIDDEN]
        yield p + "ffn_down.weight", [HIDDEN, FFN]
    yield "output_norm.weight", [HIDDEN]


def add_vocab(w, tok_dir, vocab=VOCAB, pre="qwen2"):
    """A byte-level BPE vocabulary from tok_dir's tokenizer.json, padded with UNUSED "[PADi]" tokens
    to `vocab` entries as convert_hf_to_gguf.py does; BOS is the config's bos_token, else EOS."""
    tj = json.load(open(os.path.join(tok_dir, "tokenizer.json"), encoding="utf-8"))
    cfg = json.load(open(os.path.join(tok_dir, "tokenizer_config.json"), encoding="utf-8"))
    rev = {i: t for t, i in tj["model"]["vocab"].items()}
    added = {a["id"]: a for a in tj["added_tokens"]}
    for i, a in added.items():
        rev[i] = a["content"]
    tokens, types = [], []
    for i in range(vocab):
        if i not in rev:
            tokens.append(f"[PAD{i}]")
            types.append(gguf.TokenType.UNUSED)
        elif i in added and (added[i]["special"] or looks_special(rev[i])):
            tokens.append(rev[i])
            types.append(gguf.TokenType.CONTROL)
        else:
            tokens.append(rev[i])
            types.append(gguf.TokenType.USER_DEFINED if i in added else gguf.TokenType.NORMAL)
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre(pre)
    w.add_token_list(tokens)
    w.add_token_types(types)
    w.add_token_merges([m if isinstance(m, str) else " ".join(m) for m in tj["model"]["merges"]])
    ids = {t: i for i, t in rev.items()}
    eos = config_token(cfg, "eos_token")
    pad = config_token(cfg, "pad_token")
    w.add_eos_token_id(ids[eos])
    w.add_bos_token_id(ids[config_token(cfg, "bos_token") or eos])  # Qwen3 has none: the converter stores EOS
    if pad in ids:
        w.add_pad_token_id(ids[pad])
    w.add_add_bos_token(False)
    if isinstance(cfg.get("chat_template"), str):
        w.add_chat_template(cfg["chat_template"])


def write_file(path, qtype_name, tok_dir, seed):
    qtype = gguf.GGMLQuantizationType[qtype_name]
    w = gguf.GGUFWriter(path, arch="qwen3")
    w.add_name(f"Qwen3-0.6B-shaped random {qtype_name}")
    w.add_block_count(LAYERS)
    w.add_context_length(40960)
    w.add_embedding_length(HIDDEN)
    w.add_feed_forward_length(FFN)
    w.add_head_count(HEADS)
    w.add_head_count_kv(KV_HEADS)
    w.add_key_length(HEAD_DIM)
    w.add_value_length(HEAD_DIM)
    w.add_rope_freq_base(1e6)
    w.add_layer_norm_rms_eps(1e-6)
    w.add_file_type({"Q4_0": gguf.LlamaFileType.MOSTLY_Q4_0, "Q8_0": gguf.LlamaFileType.MOSTLY_Q8_0,
                     "F16": gguf.LlamaFileType.MOSTLY_F16}[qtype_name])
    w.add_quantization_version(gguf.GGML_QUANT_VERSION)
    add_vocab(w, tok_dir)
    for name, shape in tensor_shapes():
        rng = np.random.default_rng([seed, zlib.crc32(name.encode())])
        if len(shape) == 1:
            w.add_tensor(name, np.ones(shape, dtype=np.float32))
            continue
        data = (rng.standard_normal(shape, dtype=np.float32) * np.float32(0.02))
        q = data.astype(np.float16) if qtype_name == "F16" else gguf.quants.quantize(data, qtype)
        w.add_tensor(name, q, raw_shape=q.shape, raw_dtype=qtype)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(root, "build", "models"))
    ap.add_argument("--types", nargs="+", default=["Q4_0", "Q8_0"], choices=["Q4_0", "Q8_0", "F16"] + list(LLAMA_MIXES))
    ap.add_argument("--tokenizer", default=os.path.join(root, "tests", "data", "tokenizers", "qwen3"))
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    def path_of(t):
        return os.path.join(args.out, f"qwen3-0.6b-shaped-{t}.gguf")
    # The llama.cpp mixes are made from the F16 file: write it first when one is asked for.
    todo = (["F16"] if any(t in LLAMA_MIXES for t in args.types) else []) + args.types
    for t in dict.fromkeys(todo):
        path = path_of(t)
        if os.path.exists(path):
            print(path, "exists")
            continue
        if t in LLAMA_MIXES:
            llama_quantize(path_of("F16"), path + ".tmp", t)
        else:
            write_file(path + ".tmp", t, args.tokenizer, args.seed)
        os.replace(path + ".tmp", path)
        print(path, os.path.getsize(path))


# llama.cpp file types (llama.h's llama_ftype) of the mixes made with its quantizer.
LLAMA_MIXES = {"Q2_K": 10, "Q3_K_M": 12, "Q4_K_M": 15}


def llama_quantize(src, dst, mix):
    import ctypes
    import llama_cpp
    params = llama_cpp.llama_model_quantize_default_params()
    params.ftype = LLAMA_MIXES[mix]
    params.nthread = os.cpu_count() or 1
    rc = llama_cpp.llama_model_quantize(src.encode(), dst.encode(), ctypes.byref(params))
    if rc != 0:
        raise SystemExit(f"llama_model_quantize {src} -> {mix} failed ({rc})")


if __name__ == "__main__":
    main()
