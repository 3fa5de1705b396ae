#!/usr/bin/env python3
"""Golden token ids and detokenized text from llama.cpp's own tokenizer (llama-cpp-python,
vocab_only) for every GGUF under tests/data/archs, the Llama 2 vocabulary fixture
tests/data/tokenizer/gguf/llama2.gguf, and the real Gemma 3 270M GGUF, and from Hugging
Face `tokenizers` for each file's safetensors twin (tokenizer.json beside it, or tests/data/tokenizers for
llama_tok and Gemma 3). Read by tests/tokenizer/gguf_llamacpp_test.cc.

Text set: a hand-written list (English, code, whitespace runs, digits, emoji, CJK, characters with
no piece of their own (byte fallback), leading spaces, special-token text) plus every 8th valid UTF-8
string under 600 bytes of tests/data/tokenizer/corpus.jsonl. Invalid UTF-8 is left out: llama.cpp
SPM passes the raw bytes to byte fallback while we replace them with U+FFFD first (documented in
tokenizer.h), so there is no shared answer to compare.

Per text and file (llama.cpp API names):
  p  = llama_tokenize(add_special=False, parse_special=False)      user text
  f  = llama_tokenize(add_special=True,  parse_special=True)       engine-rendered text
  pt = llama_detokenize(p, remove_special=False, unparse_special=True)
  ft = llama_detokenize(f, remove_special=True,  unparse_special=False)
  "pt" is left out where it equals the text, "ft" where it equals pt.
  hp / hf = HF encode(add_special_tokens=False, encode_special_tokens=True) / encode(True), stored
  only where they differ from p / f.
Files whose llama.cpp output is identical on every text share one group (all the tiny byte-level
archs do: the same tokenizer.json converted the same way).

Output: tests/data/tokenizer/gguf_llamacpp.json (with --add FOLDER ...: only those archs folders' GGUFs,
merged into the existing file)
With --vocab-ggufs, also the full HF vocabularies converted to GGUF by tools/gen_tokenizer_gguf.py
(files named $OXYD_TOKENIZER_GGUF_DIR/<name>.gguf in the goldens; the test runs them when that is set).
Command (repository root; needs llama-cpp-python and tokenizers in /work/venv):
  /work/venv/bin/python tools/gen_tokenizer_gguf.py --tests tests --out /tmp/tok_ggufs --all
  /work/venv/bin/python tools/gen_gguf_llamacpp_tokenizer_goldens.py --tests tests \
      --gemma /work/models/gemma-3-270m-q4_k_m.gguf --vocab-ggufs /tmp/tok_ggufs
"""
import argparse
import ctypes
import glob
import json
import os

import llama_cpp
from tokenizers import Tokenizer

HAND = [
    "",
    " ",
    "Hello world",
    " Hello world",
    "   three leading spaces",
    "trailing spaces   ",
    "The capital of France is Paris, and the capital of Italy is Rome. Both cities are old.",
    "def add(a, b):\n    return a + b\n\nprint(add(2, 3))  # prints five, of course",
    "Once upon a time, in a small village by the sea, there lived an old fisherman who told stories.",
    "for (int i = 0; i < n; ++i) {\n\tsum += a[i] * b[i];\n}\n",
    "a  b   c    d     e      f       g        h",
    "\n\n\n\nfour newlines first",
    "tabs\tand\t\ttabs\t\t\tand\r\nCRLF",
    "          ten spaces then text",
    "1234567890 3.14159 -42 1e-9 0x1F 1,000,000",
    "2024-01-31T12:34:56Z and 12:00pm",
    "I'm can't won't they'll we've she'd",
    "Emoji: 😀 👍🏽 👨‍👩‍👧‍👦 🇫🇷 ❤️",
    "中文测试：你好，世界！这是一个句子。",
    "日本語のテキストとカタカナ、ひらがな。",
    "한국어 문장입니다.",
    "Ελληνικά και русский текст, עברית, العربية",
    "Rare chars: 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 ᚠᛇᚻ ꙮ 𓀀 ⸻",
    "Mixed 𝟙𝟚𝟛 ﬁ ligature Å vs Å (NFC vs NFD)",
    "<s>",
    "</s>",
    "<unk>",
    "<s> Hello</s>",
    "text<s>more text</s>end",
    "<|endoftext|>",
    "before <|endoftext|> after",
    "<bos><start_of_turn>user\nHi there<end_of_turn>\n<start_of_turn>model\n",
    "<pad><mask><eos>",
    "<0x41> is not a byte token in text",
    "▁ already has the meta-space",
    "URL: https://example.com/a/b?c=d&e=f#g",
    "snake_case_name camelCaseName PascalCaseName SCREAMING_CASE",
    "   \n  \n\t\n",
    "!!!???...,,,;;;:::",
    "x" * 100,
]


# Byte-level BPE families (the real Gemma 3 file covers SentencePiece). Left out: gptoss, where
# llama.cpp's own regex engine splits combining marks (Devanagari, Thai) differently from the
# gpt-4o pattern HF runs (ours follows HF: 11/311 strings differ), and minilm (llama.cpp's WordPiece
# on the converter's spelling differs from HF on every string).
VOCAB_GGUFS = ["qwen3", "llama3_1", "deepseek_v3"]


def read_corpus(path):
    out = []
    with open(path) as f:
        for line in f:
            j = json.loads(line)
            if "t" in j:
                out.append(j["t"])
    return out


def detok(llm, ids, remove_special, unparse_special):
    arr = (llama_cpp.llama_token * max(1, len(ids)))(*ids)
    size = 64 + 64 * len(ids)
    buf = ctypes.create_string_buffer(size)
    n = llama_cpp.llama_detokenize(llm._model.vocab, arr, len(ids), buf, size, remove_special, unparse_special)
    assert n >= 0, n
    return buf.raw[:n].decode("utf-8", "replace")


def run_llamacpp(path, texts):
    llm = llama_cpp.Llama(model_path=path, vocab_only=True, verbose=False)
    recs = []
    for t in texts:
        b = t.encode()
        p = llm.tokenize(b, add_bos=False, special=False)
        f = llm.tokenize(b, add_bos=True, special=True)
        r = {"p": p, "f": f}
        pt, ft = detok(llm, p, False, True), detok(llm, f, True, False)
        if pt != t:
            r["pt"] = pt
        if ft != pt:
            r["ft"] = ft
        recs.append(r)
    del llm
    return recs


def run_hf(tok_json, texts):
    tok = Tokenizer.from_file(tok_json)
    plain = []
    for t in texts:
        tok.encode_special_tokens = True
        p = tok.encode(t, add_special_tokens=False).ids
        tok.encode_special_tokens = False
        f = tok.encode(t, add_special_tokens=True).ids
        plain.append((p, f))
    return plain


def add_hf_differences(recs, tj, texts):
    """HF tokenizers' ids beside llama.cpp's records, stored only where they differ (hp / hf)."""
    for r, (hp, hf_f) in zip(recs, run_hf(tj, texts)):
        if hp != r["p"]:
            r["hp"] = hp
        if hf_f != r["f"]:
            r["hf"] = hf_f


def add_files(files, texts, dst):
    """--add: each file joins the existing group whose llama.cpp output it reproduces exactly, or
    starts a new one; nothing else in the golden changes."""
    out = json.load(open(dst))
    assert out["texts"] == texts, "the text set changed: regenerate everything"
    plain = lambda recs: json.dumps([{k: v for k, v in r.items() if k not in ("hp", "hf")} for r in recs])
    for name, path, tj in files:
        recs = run_llamacpp(path, texts)
        for g in out["groups"]:
            if name in g["files"]:
                g["files"].remove(name)
        match = next((g for g in out["groups"] if plain(g["records"]) == json.dumps(recs)), None)
        if match is not None:
            match["files"].append(name)
        else:
            add_hf_differences(recs, tj, texts)
            root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
            out["groups"].append({"files": [name], "hf_tokenizer": os.path.relpath(tj, root), "records": recs})
        print(name, "-> group", next(i for i, g in enumerate(out["groups"]) if name in g["files"]))
    with open(dst, "w") as f:
        json.dump(out, f, ensure_ascii=False, separators=(",", ":"))
        f.write("\n")
    print("wrote", dst, os.path.getsize(dst), "bytes")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tests", default="tests", help="the folder holding data/tokenizers (default: tests)")
    ap.add_argument("--gemma", default="")
    ap.add_argument("--vocab-ggufs", default="", help="folder of tools/gen_tokenizer_gguf.py --all output")
    ap.add_argument("--add", nargs="*", default=None, metavar="ARCH_FOLDER",
                    help="only these tests/data/archs folders' GGUFs, merged into the existing golden file "
                         "(its other groups and files are kept as they are)")
    args = ap.parse_args()
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    corpus = read_corpus(os.path.join(root, "tests/data/tokenizer/corpus.jsonl"))
    texts = list(HAND) + [t for t in corpus[::8] if len(t.encode()) < 600 and t not in HAND]

    files = []  # (name in golden, path, tokenizer.json of the twin)
    folders = args.add if args.add is not None else ["*"]
    for path in sorted(p for fo in folders for p in glob.glob(os.path.join(root, f"tests/data/archs/{fo}/*.gguf"))):
        rel = os.path.relpath(path, os.path.join(root, "tests/data"))
        d = os.path.dirname(path)
        tj = os.path.join(d, "tokenizer.json")
        if not os.path.exists(tj):
            cfg = json.load(open(os.path.join(d, "goldens.json")))
            tj = os.path.join(args.tests, cfg["tokenizer"], "tokenizer.json")
        files.append((rel, path, tj))
    dst = os.path.join(root, "tests/data/tokenizer/gguf_llamacpp.json")
    if args.add is not None:
        return add_files(files, texts, dst)
    # The gguf-py-written Llama 2 vocabulary fixture (SentencePiece, scores -id, merges llama.cpp ignores).
    files.append(("tokenizer/gguf/llama2.gguf", os.path.join(root, "tests/data/tokenizer/gguf/llama2.gguf"),
                  os.path.join(args.tests, "data/tokenizers/llama2/tokenizer.json")))
    # Optional: the full vocabularies written by tools/gen_tokenizer_gguf.py --all (not committed).
    if args.vocab_ggufs:
        for n in VOCAB_GGUFS:
            files.append((f"$OXYD_TOKENIZER_GGUF_DIR/{n}.gguf", os.path.join(args.vocab_ggufs, f"{n}.gguf"),
                          os.path.join(args.tests, "data/tokenizers", n, "tokenizer.json") if n != "minilm"
                          else os.path.join(root, "tests/data/tokenizer/minilm/tokenizer.json")))
    if args.gemma:
        files.append(("$OXYD_GEMMA_GGUF", args.gemma, os.path.join(args.tests, "data/tokenizers/gemma3/tokenizer.json")))

    groups = []
    for name, path, tj in files:
        recs = run_llamacpp(path, texts)
        key = json.dumps(recs)
        for g in groups:
            if g["key"] == key:
                g["files"].append(name)
                break
        else:
            add_hf_differences(recs, tj, texts)
            groups.append({"key": key, "files": [name], "hf_tokenizer": os.path.relpath(tj, root), "records": recs})
        print(name, "-> group", next(i for i, g in enumerate(groups) if name in g["files"]))
    for g in groups:
        del g["key"]
    out = {"llama_cpp_python": llama_cpp.__version__, "texts": texts, "groups": groups}
    with open(dst, "w") as f:
        json.dump(out, f, ensure_ascii=False, separators=(",", ":"))
        f.write("\n")
    for g in groups:
        n = len(g["records"])
        hp = sum("hp" in r for r in g["records"])
        hf = sum("hf" in r for r in g["records"])
        print(f"{g['files'][0]} (+{len(g['files']) - 1}): HF differs from llama.cpp on {hp}/{n} plain, {hf}/{n} full")
    print("wrote", dst, os.path.getsize(dst), "bytes")


if __name__ == "__main__":
    main()
