#!/usr/bin/env python3
"""The RWKV "world" vocabulary as a GGUF (tokenizer.ggml.model "rwkv") and llama.cpp's own
tokenization of the corpus with it, plus the RWKV project's reference tokenizer.

Vocabulary: rwkv_vocab_v20230424.txt from the PyPI package `rwkv` (0.8.32, Apache-2.0; the file of
BlinkDL/RWKV-LM), written the way llama.cpp's converter writes it (conversion/base.py
_set_vocab_rwkv_world: token 0 "<s>" CONTROL, token i = line i as Python's bytes repr without
b'', NORMAL; bos = eos = 0, eot = 261) to tests/data/tokenizer/gguf/rwkv.gguf.
Per "t" text of tests/data/tokenizer/corpus.jsonl (llama-cpp-python, vocab_only):
  p = llama_tokenize(add_special=False, parse_special=False)
  f = llama_tokenize(add_special=True,  parse_special=True)    stored where != p
  ref = rwkv.rwkv_tokenizer.TRIE_TOKENIZER.encode (the reference), stored where != p
  d = llama_detokenize(p) stored where != the text
Output: tests/data/tokenizer/rwkv_llamacpp.json

Command (repository root; needs rwkv, gguf, llama-cpp-python):
  python tools/gen_rwkv_tokenizer_goldens.py
"""
import ast
import json
import os

import gguf
import llama_cpp
import numpy as np
import rwkv
from rwkv.rwkv_tokenizer import TRIE_TOKENIZER

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VOCAB = os.path.join(os.path.dirname(rwkv.__file__), "rwkv_vocab_v20230424.txt")


def read_texts():
    out = []
    with open(os.path.join(ROOT, "tests/data/tokenizer/corpus.jsonl")) as f:
        for line in f:
            j = json.loads(line)
            if "t" in j:
                out.append(j["t"])
    return out


def write_gguf(out):
    tokens, types = [b"<s>"], [int(gguf.TokenType.CONTROL)]
    with open(VOCAB, "r", encoding="utf-8") as f:
        for line in f:
            parts = line.split(" ")
            idx, tok, n = int(parts[0]), ast.literal_eval(" ".join(parts[1:-1])), int(parts[-1])
            tok = tok.encode("utf-8") if isinstance(tok, str) else tok
            assert len(tok) == n and idx == len(tokens)
            tokens.append(repr(tok)[2:-1].encode("utf-8"))
            types.append(int(gguf.TokenType.NORMAL))
    w = gguf.GGUFWriter(out, arch="rwkv6")
    w.add_tokenizer_model("rwkv")
    w.add_token_list(tokens)
    w.add_token_types(types)
    w.add_bos_token_id(0)
    w.add_eos_token_id(0)
    w.add_eot_token_id(261)
    w.add_tensor("dummy", np.zeros((1,), dtype=np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def llama_tokenize(vocab, text, add_special, parse_special):
    data = text.encode("utf-8")
    buf = (llama_cpp.llama_token * (len(data) * 2 + 16))()
    n = llama_cpp.llama_tokenize(vocab, data, len(data), buf, len(buf), add_special, parse_special)
    assert n >= 0, n
    return list(buf[:n])


def llama_detokenize(vocab, ids):
    arr = (llama_cpp.llama_token * max(len(ids), 1))(*ids)
    buf = ctypes.create_string_buffer(len(ids) * 256 + 16)
    n = llama_cpp.llama_detokenize(vocab, arr, len(ids), buf, len(buf), False, False)
    assert n >= 0, n
    return buf.raw[:n].decode("utf-8", errors="replace")


def main():
    texts = read_texts()
    out_gguf = os.path.join(ROOT, "tests/data/tokenizer/gguf/rwkv.gguf")
    write_gguf(out_gguf)
    ref = TRIE_TOKENIZER(VOCAB)
    llama_cpp.llama_backend_init()
    params = llama_cpp.llama_model_default_params()
    params.vocab_only = True
    model = llama_cpp.llama_model_load_from_file(out_gguf.encode(), params)
    assert model, "llama.cpp refused " + out_gguf
    vocab = llama_cpp.llama_model_get_vocab(model)
    g = {"llama_cpp_python": llama_cpp.__version__, "rwkv": "0.8.32", "num_texts": len(texts),
         "p": [], "f": {}, "ref": {}, "d": {}}
    for i, t in enumerate(texts):
        p = llama_tokenize(vocab, t, False, False)
        g["p"].append(p)
        f = llama_tokenize(vocab, t, True, True)
        if f != p:
            g["f"][str(i)] = f
        r = ref.encode(t)
        if r != p:
            g["ref"][str(i)] = r
        d = llama_detokenize(vocab, p)
        if d != t:
            g["d"][str(i)] = d
    llama_cpp.llama_model_free(model)
    with open(os.path.join(ROOT, "tests/data/tokenizer/rwkv_llamacpp.json"), "w") as f:
        json.dump(g, f, separators=(",", ":"))
        f.write("\n")
    print("texts", len(texts), "f differs", len(g["f"]), "reference differs", len(g["ref"]), "detok differs", len(g["d"]))


if __name__ == "__main__":
    import ctypes
    main()
