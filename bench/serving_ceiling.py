#!/usr/bin/env python3
"""The ceiling of bench/serving_bench.py's "C=16 ÷ C=1" ratio on this machine, from the model file
and measured kernel speeds, for dense GGUF models.

C=16 ceiling: tokens/s if every output token cost only its matmuls at the packed kernels' best speed
(bin/matmul_bench --pack --cpu-time on one core, on the model's own weight shapes, best of the reps,
times the thread count) and nothing else took time (no attention, norms, sampling, synchronization,
HTTP):
  decode per output token  = Σ over weights of 2·elements / speed16(format)    (head included)
  prefill per output token = (PROMPT · non-head part + one head row) / OUT
                             at speedP(format), the faster of 16 rows and 16·PROMPT rows (the
                             server prefills a wave's prompts in one step)
C=1: the engine's own single stream, PROMPT-token prefill + (OUT − 1) one-row decode steps
(bin/model_decode_bench, as bench/serving_bound.sh). Their quotient bounds what any scheduling can
reach; serving_bound.sh gives the bound of the engine as it is.
Usage (repository root, Release build): bench/serving_ceiling.py MODEL.gguf... [--threads N]
"""
import argparse
import collections
import os
import re
import subprocess
import sys

import gguf

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(ROOT, "build", "bin")
MATMUL = re.compile(r"\.(attn_(q|k|v|qkv|output)|ffn_(gate|up|down|gate_up))\.weight$")


def weights(path):
    """{format: [(elements, n, k, is_head)]} of the matmul weights a token passes through."""
    r = gguf.GGUFReader(path)
    out = collections.defaultdict(list)
    names = {t.name for t in r.tensors}
    head = "output.weight" if "output.weight" in names else "token_embd.weight"  # tied when absent
    for t in r.tensors:
        if t.name == head or MATMUL.search(t.name):
            k, n = int(t.shape[0]), int(t.shape[1])
            out[t.tensor_type.name].append((k * n, n, k, t.name == head))
    return out


def kernel_gops(fmt, n, k, prefill_rows):
    """(16-row, prefill_rows-row) GOP/s of one core on an n x k weight of this format (best of the reps)."""
    cmd = [os.path.join(BIN, "matmul_bench"), f"--formats={fmt}", f"--shapes={n}x{k}",
           f"--batches=16,{prefill_rows}", "--pack", "--cpu-time", "--reps=10"]
    text = subprocess.run(cmd, env={**os.environ, "OXYD_NUM_THREADS": "1"}, capture_output=True, text=True,
                          check=True).stdout
    for line in text.splitlines():
        if line.startswith(fmt + " "):
            b16, bp = (float(x) for x in line.split()[-2:])
            return b16, max(b16, bp)
    raise RuntimeError(f"no {fmt} row in matmul_bench output:\n{text}")


def single_stream(path, threads, prompt, out):
    """(prefill seconds, one decode step seconds) of model_decode_bench."""
    ids = " ".join(str(i) for i in range(100, 100 + prompt))
    feed = f"prefill {prompt} {ids}\nprefill {prompt} {ids}\ndecode {out - 1} {ids}\n"
    text = subprocess.run([os.path.join(BIN, "model_decode_bench"), path, "--threads", str(threads)], input=feed,
                          capture_output=True, text=True, check=True).stdout
    p = d = None
    for line in text.splitlines():
        f = line.split()
        if f and f[0] == "prefill":
            p = float(f[2])
        elif f and f[0] == "decode":
            d = float(f[2]) / float(f[1])
    return p, d


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("models", nargs="+")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--prompt", type=int, default=52, help="prompt tokens of a request (serving_bench's ~52)")
    ap.add_argument("--out", type=int, default=32, help="output tokens of a request")
    args = ap.parse_args()
    speed = {}
    for path in args.models:
        ws = weights(path)
        head_s = rest_s = rest_p = 0.0
        lines = []
        for fmt, items in sorted(ws.items()):
            _, n, k, _ = max(items)  # the format's largest weight stands for all of it
            if (fmt, n, k) not in speed:
                speed[(fmt, n, k)] = kernel_gops(fmt, n, k, 16 * args.prompt)
            g16, gp = (g * args.threads * 1e9 for g in speed[(fmt, n, k)])
            head = sum(e for e, *_, h in items if h)
            rest = sum(e for e, *_, h in items if not h)
            head_s += 2 * head / g16
            rest_s += 2 * rest / g16
            rest_p += 2 * rest / gp
            lines.append(f"  {fmt}: {rest / 1e6:.1f} M weights + {head / 1e6:.1f} M head, per core on {n}x{k} "
                         f"{speed[(fmt, n, k)][0]:.0f} GOP/s at 16 rows, {speed[(fmt, n, k)][1]:.0f} at "
                         f"{16 * args.prompt} (or 16)")
        decode = head_s + rest_s
        prefill = (args.prompt * rest_p + head_s) / args.out
        ceiling = 1.0 / (decode + prefill)
        p, d = single_stream(path, args.threads, args.prompt, args.out)
        c1 = args.out / (p + (args.out - 1) * d)
        print(f"{os.path.basename(path)} ({args.threads} threads):")
        print("\n".join(lines))
        print(f"  matmuls per output token at C=16: decode {decode * 1e3:.2f} ms + prefill {prefill * 1e3:.2f} ms"
              f" -> ceiling {ceiling:.0f} tok/s")
        print(f"  C=1: P{args.prompt} {p * 1e3:.1f} ms, D1 {d * 1e3:.1f} ms -> {c1:.1f} tok/s")
        print(f"  C=16 / C=1 ceiling: {ceiling / c1:.2f}")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
