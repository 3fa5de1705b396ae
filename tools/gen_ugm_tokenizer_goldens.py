#!/usr/bin/env python3
"""A SentencePiece Unigram vocabulary with a precompiled normalization charsmap (tokenizer.ggml.model
"t5", llama.cpp's UGM tokenizer) and llama.cpp's own tokenization of the corpus with it.

1. sentencepiece trains a Unigram model (3,000 pieces, normalization rule nmt_nfkc, which embeds
   the precompiled charsmap; add_dummy_prefix and remove_extra_whitespaces on, as T5's) on the
   "t" texts of tests/data/tokenizer/corpus.jsonl.
2. It is written as tests/data/tokenizer/gguf/ugm.gguf the way llama.cpp's converter writes a T5
   vocabulary (conversion/t5.py: tokens, scores, types, add_space_prefix, remove_extra_whitespaces,
   precompiled_charsmap, pad 0 / eos 1 / unk 2).
3. llama-cpp-python (vocab_only) tokenizes every corpus text:
     p = llama_tokenize(add_special=False, parse_special=False)   user text
     f = llama_tokenize(add_special=True,  parse_special=True)    engine-rendered text
   and sentencepiece itself encodes it (sp), stored where it differs from p.
   Texts that are not valid UTF-8 after a JSON round trip cannot occur (the corpus is JSON).
Output: tests/data/tokenizer/ugm_llamacpp.json {"llama_cpp_python", "sentencepiece", "num_texts",
  "p": [[ids]], "f": {index: ids where f != p + [eos]}, "sp": {index: ids where != p}}

Command (repository root; needs sentencepiece, gguf, llama-cpp-python):
  python tools/gen_ugm_tokenizer_goldens.py
"""
import ctypes
import json
import os
import tempfile

import gguf
import llama_cpp
import numpy as np
import sentencepiece as spm
from sentencepiece import sentencepiece_model_pb2 as pb

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def read_texts():
    out = []
    with open(os.path.join(ROOT, "tests/data/tokenizer/corpus.jsonl")) as f:
        for line in f:
            j = json.loads(line)
            if "t" in j:
                out.append(j["t"])
    return out


def train(texts, prefix):
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(texts), model_prefix=prefix, vocab_size=3000, model_type="unigram",
        normalization_rule_name="nmt_nfkc", character_coverage=0.98, pad_id=0, eos_id=1, unk_id=2, bos_id=-1,
        num_threads=1, seed_sentencepiece_size=100000, shuffle_input_sentence=False, minloglevel=2)
    return prefix + ".model"


def write_gguf(model_path, out):
    mp = pb.ModelProto()
    mp.ParseFromString(open(model_path, "rb").read())
    sp = spm.SentencePieceProcessor(model_file=model_path)
    tokens, scores, types = [], [], []
    for i in range(sp.vocab_size()):
        tokens.append(sp.IdToPiece(i).encode("utf-8"))
        scores.append(sp.GetScore(i))
        t = gguf.TokenType.NORMAL
        if sp.IsUnknown(i): t = gguf.TokenType.UNKNOWN
        elif sp.IsControl(i): t = gguf.TokenType.CONTROL
        elif sp.IsUnused(i): t = gguf.TokenType.UNUSED
        elif sp.IsByte(i): t = gguf.TokenType.BYTE
        types.append(int(t))
    w = gguf.GGUFWriter(out, arch="t5")
    w.add_tokenizer_model("t5")
    w.add_tokenizer_pre("default")
    w.add_token_list(tokens)
    w.add_token_scores(scores)
    w.add_token_types(types)
    w.add_add_space_prefix(mp.normalizer_spec.add_dummy_prefix)
    w.add_remove_extra_whitespaces(mp.normalizer_spec.remove_extra_whitespaces)
    w.add_precompiled_charsmap(mp.normalizer_spec.precompiled_charsmap)
    w.add_pad_token_id(0)
    w.add_eos_token_id(1)
    w.add_unk_token_id(2)
    w.add_add_bos_token(False)
    w.add_add_eos_token(True)
    w.add_tensor("dummy", np.zeros((1,), dtype=np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return sp


def llama_tokenize(vocab, text, add_special, parse_special):
    data = text.encode("utf-8")
    buf = (llama_cpp.llama_token * (len(data) * 2 + 16))()
    n = llama_cpp.llama_tokenize(vocab, data, len(data), buf, len(buf), add_special, parse_special)
    assert n >= 0, n
    return list(buf[:n])


def main():
    texts = read_texts()
    out_gguf = os.path.join(ROOT, "tests/data/tokenizer/gguf/ugm.gguf")
    with tempfile.TemporaryDirectory() as tmp:
        sp = write_gguf(train(texts, os.path.join(tmp, "ugm")), out_gguf)
    llama_cpp.llama_backend_init()
    params = llama_cpp.llama_model_default_params()
    params.vocab_only = True
    model = llama_cpp.llama_model_load_from_file(out_gguf.encode(), params)
    assert model, "llama.cpp refused " + out_gguf
    vocab = llama_cpp.llama_model_get_vocab(model)
    g = {"llama_cpp_python": llama_cpp.__version__, "sentencepiece": spm.__version__, "num_texts": len(texts),
         "p": [], "f": {}, "sp": {}}
    for i, t in enumerate(texts):
        p = llama_tokenize(vocab, t, False, False)
        f = llama_tokenize(vocab, t, True, True)
        g["p"].append(p)
        if f != p + [1]:
            g["f"][str(i)] = f
        s = sp.encode(t)
        if s != p:
            g["sp"][str(i)] = s
    llama_cpp.llama_model_free(model)
    with open(os.path.join(ROOT, "tests/data/tokenizer/ugm_llamacpp.json"), "w") as f:
        json.dump(g, f, separators=(",", ":"))
        f.write("\n")
    print("texts", len(texts), "f differs", len(g["f"]), "sentencepiece differs", len(g["sp"]))


if __name__ == "__main__":
    main()
