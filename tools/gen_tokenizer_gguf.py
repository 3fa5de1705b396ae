#!/usr/bin/env python3
"""GGUF vocabulary files (metadata only, one tiny dummy tensor) written with gguf-py from a
tokenizer.json + tokenizer_config.json, the way llama.cpp's convert_hf_to_gguf.py writes the
tokenizer.ggml.* keys for that family:
  * byte-level BPE -> model "gpt2": tokens, token_type (NORMAL, CONTROL for special or
    special-looking added tokens, USER_DEFINED for the other added tokens with U+2581 turned into
    spaces), merges "a b", tokenizer.ggml.pre = the name the converter's hash table gives the family.
  * SentencePiece BPE with byte fallback -> model "llama": tokens, scores (-1000 for added tokens,
    0 for bytes, -id otherwise), token_type (BYTE, UNKNOWN, CONTROL, USER_DEFINED as above),
    add_space_prefix, and the merges (the converter writes none when it has tokenizer.model; we have
    only tokenizer.json, so the merge table travels in tokenizer.ggml.merges).
  * WordPiece -> model "bert": tokens spelled as BertModel.set_vocab does ("▁word" for a word
    start, "x" for "##x", "[X]" unchanged), cls/sep/mask ids, add_bos_token + add_sep_token.
  Special ids come from tokenizer_config.json; add_bos/add_eos from the post_processor template.

Command (from the repository root; writes the small committed fixtures):
  /work/venv/bin/python tools/gen_tokenizer_gguf.py --tests tests
"""
import argparse
import json
import os

import numpy as np
import gguf

PRE_NAMES = {"qwen3": "qwen2", "llama3": "llama-bpe", "llama3_1": "llama-bpe", "gptoss": "gpt-4o",
             "deepseek_v3": "deepseek-v3"}
COMMITTED = {"llama2": "data/tokenizers/llama2", "minilm": None}
SPACE = "\u2581"


def looks_special(tok):
    return (tok in ("<pad>", "<mask>", "<2mass>", "[@BOS@]") or (tok.startswith("<|") and tok.endswith("|>"))
            or (tok.startswith("<｜") and tok.endswith("｜>")) or (tok.startswith("<unused") and tok.endswith(">")))


def config_token(cfg, key):
    v = cfg.get(key)
    if isinstance(v, dict):
        v = v.get("content")
    return v if isinstance(v, str) else None


def template_flags(post):
    add_bos = add_eos = False
    procs = post.get("processors", []) if post and post.get("type") == "Sequence" else [post]
    for p in procs:
        if p and p.get("type") == "TemplateProcessing":
            seen = False
            for item in p["single"]:
                if "Sequence" in item:
                    seen = True
                elif seen:
                    add_eos = True
                else:
                    add_bos = True
        if p and p.get("type") in ("BertProcessing", "RobertaProcessing"):
            add_bos = add_eos = True
    return add_bos, add_eos


def write_vocab_gguf(name, tok_dir, out_path):
    tj = json.load(open(os.path.join(tok_dir, "tokenizer.json"), encoding="utf-8"))
    cfg = json.load(open(os.path.join(tok_dir, "tokenizer_config.json"), encoding="utf-8"))
    model = tj["model"]
    vocab = dict(model["vocab"])
    added = {a["id"]: a for a in tj["added_tokens"]}
    n = max(max(vocab.values()), max(added) if added else 0) + 1
    rev = {i: t for t, i in vocab.items()}
    for i, a in added.items():
        rev[i] = a["content"]
    kind = "bert" if model["type"] == "WordPiece" else ("llama" if model.get("byte_fallback") else "gpt2")
    tokens, types, scores = [], [], []
    for i in range(n):
        if i not in rev:
            tokens.append(f"[PAD{i}]"); types.append(gguf.TokenType.UNUSED); scores.append(-1000.0)
            continue
        t = rev[i]
        if i in added:
            if added[i]["special"] or looks_special(t):
                types.append(gguf.TokenType.UNKNOWN if kind == "llama" and t == model.get("unk_token") else gguf.TokenType.CONTROL)
            else:
                t = t.replace(SPACE, " ")
                types.append(gguf.TokenType.USER_DEFINED)
            scores.append(-1000.0)
        elif kind == "llama" and len(t) == 6 and t.startswith("<0x") and t.endswith(">"):
            types.append(gguf.TokenType.BYTE); scores.append(0.0)
        else:
            types.append(gguf.TokenType.NORMAL); scores.append(-float(i))
        tokens.append(t)
    if kind == "bert":
        def phantom(t):
            if t.startswith("[") and t.endswith("]"):
                return t
            return t[2:] if t.startswith("##") else SPACE + t
        tokens = [phantom(t) for t in tokens]

    w = gguf.GGUFWriter(out_path, arch="llama")
    w.add_tokenizer_model(kind)
    w.add_tokenizer_pre(PRE_NAMES.get(name, "default"))
    w.add_token_list(tokens)
    w.add_token_types(types)
    if kind == "llama":
        w.add_token_scores(scores)
        w.add_add_space_prefix(any(nz.get("type") == "Prepend" for nz in
                                   ([tj["normalizer"]] + tj["normalizer"].get("normalizers", []))))
    if kind != "bert":
        merges = [m if isinstance(m, str) else " ".join(m) for m in model["merges"]]
        w.add_token_merges(merges)
    ids = {t: i for i, t in rev.items()}
    for key, fn in (("bos_token", w.add_bos_token_id), ("eos_token", w.add_eos_token_id),
                    ("unk_token", w.add_unk_token_id), ("pad_token", w.add_pad_token_id),
                    ("cls_token", w.add_bos_token_id), ("sep_token", w.add_sep_token_id),
                    ("mask_token", w.add_mask_token_id)):
        tok = config_token(cfg, key)
        if tok is not None and tok in ids:
            fn(ids[tok])
    add_bos, add_eos = template_flags(tj.get("post_processor"))
    if kind == "bert":
        w.add_add_bos_token(add_bos)
        w.add_add_sep_token(add_eos)
        w.add_add_eos_token(False)
    else:
        w.add_add_bos_token(add_bos)
        w.add_add_eos_token(add_eos)
    if isinstance(cfg.get("chat_template"), str):
        w.add_chat_template(cfg["chat_template"])
    w.add_tensor("dummy", np.zeros((1,), dtype=np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tests", default="tests", help="the folder holding data/tokenizers (default: tests)")
    ap.add_argument("--out", default=os.path.join("tests", "data", "tokenizer", "gguf"))
    ap.add_argument("--all", action="store_true", help="also the large vocabularies (not committed)")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    names = dict(COMMITTED)
    if args.all:
        names.update({k: f"data/tokenizers/{k}" for k in ("qwen3", "llama3", "llama3_1", "gemma3", "gptoss", "deepseek_v3")})
    for name, rel in names.items():
        d = os.path.join(args.tests, rel) if rel else os.path.join("tests", "data", "tokenizer", "minilm")
        out = os.path.join(args.out, f"{name}.gguf")
        write_vocab_gguf(name, d, out)
        print(out, os.path.getsize(out))


if __name__ == "__main__":
    main()
