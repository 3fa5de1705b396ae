#!/usr/bin/env python3
"""A PLaMo-2-style vocabulary (tokenizer.ggml.model "plamo2") and llama.cpp's own tokenization of
the corpus with it. No PLaMo 2 tokenizer.jsonl is available from a package registry, so the
vocabulary is made here in its shape: <|plamo:unk|> <|plamo:bos|> <|plamo:eos|> <|plamo:pad|>
<|plamo:op|> (CONTROL, ids 0-4), the 256 byte tokens <0x00>..<0xFF> (BYTE), then the pieces of a
SentencePiece Unigram (identity normalization, no dummy prefix, 3,000 pieces, trained on the "t"
texts of tests/data/tokenizer/corpus.jsonl) with U+2581 written as a space, scored by their
log-probabilities (NORMAL). Written as llama.cpp's converter writes PLaMo vocabularies
(conversion/base.py _set_vocab_plamo: tokens, scores, types, bos 1, eos 2, pad 3, unk 0, eot 4,
add_space_prefix false) to tests/data/tokenizer/gguf/plamo2.gguf.
Per text (llama-cpp-python, vocab_only):
  p = llama_tokenize(add_special=False, parse_special=False)
  f = llama_tokenize(add_special=True,  parse_special=True)   stored where != p
  d = llama_detokenize(p, remove_special=False, unparse_special=False) stored where != the text
Output: tests/data/tokenizer/plamo2_llamacpp.json

Command (repository root; needs sentencepiece, gguf, llama-cpp-python):
  python tools/gen_plamo2_tokenizer_goldens.py
"""
import ctypes
import json
import os
import tempfile

import gguf
import llama_cpp
import numpy as np
import sentencepiece as spm

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CONTROL = ["<|plamo:unk|>", "<|plamo:bos|>", "<|plamo:eos|>", "<|plamo:pad|>", "<|plamo:op|>"]


def read_texts():
    out = []
    with open(os.path.join(ROOT, "tests/data/tokenizer/corpus.jsonl")) as f:
        for line in f:
            j = json.loads(line)
            if "t" in j:
                out.append(j["t"])
    return out


def vocabulary(texts):
    with tempfile.TemporaryDirectory() as tmp:
        prefix = os.path.join(tmp, "p")
        spm.SentencePieceTrainer.train(
            sentence_iterator=iter(texts), model_prefix=prefix, vocab_size=3000, model_type="unigram",
            normalization_rule_name="identity", add_dummy_prefix=False, remove_extra_whitespaces=False,
            character_coverage=0.98, unk_id=0, bos_id=-1, eos_id=-1, pad_id=-1, num_threads=1,
            shuffle_input_sentence=False, minloglevel=2)
        sp = spm.SentencePieceProcessor(model_file=prefix + ".model")
    tokens, scores, types = list(CONTROL), [0.0] * len(CONTROL), [int(gguf.TokenType.CONTROL)] * len(CONTROL)
    for b in range(256):
        tokens.append("<0x%02X>" % b)
        scores.append(0.0)
        types.append(int(gguf.TokenType.BYTE))
    seen = set(tokens)
    for i in range(sp.vocab_size()):
        if sp.IsUnknown(i) or sp.IsControl(i):
            continue
        piece = sp.IdToPiece(i).replace("\u2581", " ")
        if piece in seen:
            continue
        seen.add(piece)
        tokens.append(piece)
        scores.append(sp.GetScore(i))
        types.append(int(gguf.TokenType.NORMAL))
    return tokens, scores, types


def write_gguf(out, tokens, scores, types):
    w = gguf.GGUFWriter(out, arch="plamo2")
    w.add_tokenizer_model("plamo2")
    w.add_tokenizer_pre("default")
    w.add_token_list([t.encode("utf-8") for t in tokens])
    w.add_token_scores(scores)
    w.add_token_types(types)
    w.add_bos_token_id(1)
    w.add_eos_token_id(2)
    w.add_pad_token_id(3)
    w.add_unk_token_id(0)
    w.add_eot_token_id(4)
    w.add_add_space_prefix(False)
    w.add_tensor("dummy", np.zeros((1,), dtype=np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def llama_tokenize(vocab, text, add_special, parse_special):
    data = text.encode("utf-8")
    buf = (llama_cpp.llama_token * (len(data) * 4 + 16))()
    n = llama_cpp.llama_tokenize(vocab, data, len(data), buf, len(buf), add_special, parse_special)
    assert n >= 0, n
    return list(buf[:n])


def llama_detokenize(vocab, ids):
    arr = (llama_cpp.llama_token * max(len(ids), 1))(*ids)
    buf = ctypes.create_string_buffer(len(ids) * 64 + 16)
    n = llama_cpp.llama_detokenize(vocab, arr, len(ids), buf, len(buf), False, False)
    assert n >= 0, n
    return buf.raw[:n].decode("utf-8", errors="replace")


def main():
    texts = read_texts()
    out_gguf = os.path.join(ROOT, "tests/data/tokenizer/gguf/plamo2.gguf")
    write_gguf(out_gguf, *vocabulary(texts))
    llama_cpp.llama_backend_init()
    params = llama_cpp.llama_model_default_params()
    params.vocab_only = True
    model = llama_cpp.llama_model_load_from_file(out_gguf.encode(), params)
    assert model, "llama.cpp refused " + out_gguf
    vocab = llama_cpp.llama_model_get_vocab(model)
    g = {"llama_cpp_python": llama_cpp.__version__, "num_texts": len(texts), "p": [], "f": {}, "d": {}}
    for i, t in enumerate(texts):
        p = llama_tokenize(vocab, t, False, False)
        g["p"].append(p)
        f = llama_tokenize(vocab, t, True, True)
        if f != p:
            g["f"][str(i)] = f
        d = llama_detokenize(vocab, p)
        if d != t:
            g["d"][str(i)] = d
    llama_cpp.llama_model_free(model)
    with open(os.path.join(ROOT, "tests/data/tokenizer/plamo2_llamacpp.json"), "w") as f:
        json.dump(g, f, separators=(",", ":"))
        f.write("\n")
    print("texts", len(texts), "f differs", len(g["f"]), "detok differs", len(g["d"]))


if __name__ == "__main__":
    main()
