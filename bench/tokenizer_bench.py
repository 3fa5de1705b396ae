#!/usr/bin/env python3
"""Runs build/bin/tokenizer_bench (oxydllm) and Hugging Face tokenizers on the same ~1 MB text,
single-threaded, best of 3, and prints tokens/s of both and the ratio (ours / HF). Exact id
equality is what tests/tokenizer checks; here only the token counts are compared.

Command (from the repository root, after building the tokenizer_bench target):
  TOKENIZERS_PARALLELISM=false RAYON_NUM_THREADS=1 /work/venv/bin/python bench/tokenizer_bench.py \
      --bin build/bin/tokenizer_bench
"""
import argparse
import json
import os
import subprocess
import time

os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("RAYON_NUM_THREADS", "1")
from tokenizers import Tokenizer  # noqa: E402


def bench_text(root):
    parts = []
    with open(os.path.join(root, "tests/data/tokenizer/corpus.jsonl"), encoding="utf-8") as f:
        for line in f:
            j = json.loads(line)
            if "t" in j and len(j["t"].encode()) < 4096:
                parts.append(j["t"])
    out, n = [], 0
    while n < (1 << 20):
        for p in parts:
            s = p + "\n"
            out.append(s)
            n += len(s.encode())
    return "".join(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="build/bin/tokenizer_bench")
    ap.add_argument("--root", default=".")
    args = ap.parse_args()
    res = subprocess.run([args.bin, args.root], capture_output=True, text=True, check=True).stdout
    ours = {}
    for line in res.splitlines():
        if line.startswith("RESULT"):
            _, v, n, s = line.split()
            ours[v] = (int(n), float(s))
    text = bench_text(args.root)
    print(f"text: {len(text.encode())} bytes, single thread, best of 3")
    print(f"{'vocab':12} {'tokens':>9} {'oxyd Mtok/s':>12} {'HF Mtok/s':>10} {'ratio':>7} {'same count':>10}")
    for v, (n, s) in ours.items():
        d = os.path.join(args.root, "tests/data/tokenizer/minilm") if v == "minilm" else os.path.join(args.root, "tests/data/tokenizers", v)
        tok = Tokenizer.from_file(os.path.join(d, "tokenizer.json"))
        tok.no_truncation()
        tok.no_padding()
        tok.encode_special_tokens = True
        best = 1e9
        for _ in range(3):
            t0 = time.perf_counter()
            ids = tok.encode(text, add_special_tokens=False).ids
            best = min(best, time.perf_counter() - t0)
        print(f"{v:12} {n:9d} {n / s / 1e6:12.3f} {len(ids) / best / 1e6:10.3f} {best / s:7.2f} {str(len(ids) == n):>10}")


if __name__ == "__main__":
    main()
