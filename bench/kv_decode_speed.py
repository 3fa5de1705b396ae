#!/usr/bin/env python3
"""Decode tokens/s at a long context for each KV-cache format: ours (F16 / BF16 and the --kv-quant
modes) next to llama.cpp's f16 / q8_0 / q4_0 caches on the same GGUF, the same token ids and the
same thread count, interleaved in one run (issue 29).

Each cache is prefilled once with CTX tokens of real text (bench/kv_quant_quality.py's --text), then
every repetition times STEPS single-token decode steps at positions CTX..CTX+STEPS-1 on it, the
steps overwriting their own slots the next time (ours: build/bin/model_decode_bench `tail`, then
`retail`; llama.cpp: llama-cpp-python, flash attention, the steps' cells removed with
llama_memory_seq_rm before each repetition). Every repetition runs all the formats, in an order
rotated by one each time; the table gives the median tokens/s and its ratio to our F16 cache, and
the median CPU time per step (every thread of the engine's process: model_decode_bench's own
count, time.process_time() around llama.cpp's steps) with its ratio: on a loaded machine run with
--threads 1 and compare the CPU times, the wall-clock figures mean nothing there.
KV read per step: CTX × bytes/token (all layers, K+V). A bench, not a test; on a shared machine
read the medians with their spread (min–max, printed too).

    .venv/bin/python bench/kv_decode_speed.py --model /work/models/gemma-3-270m-q4_k_m.gguf \\
        --ctx 8000 --steps 32 --reps 3 --threads 2
"""
import argparse
import ctypes
import functools
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
import kv_quant_quality as quality  # noqa: E402  (tokens(), head_dim())

LLAMA_TYPES = {"f16": 1, "q8_0": 8, "q4_0": 2}
LLAMA_BYTES = {"f16": 2.0, "q8_0": 34 / 32, "q4_0": 18 / 32}  # bytes per element, block scales included


class Ours:
    def __init__(self, binary, model, kv, ctx, threads):
        self.p = subprocess.Popen([binary, model, "--threads", str(threads), "--ctx", str(ctx), "--kv", kv],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        line = self.p.stdout.readline()
        if not line.startswith("ready"):
            raise RuntimeError(f"model_decode_bench --kv {kv}: {line}")
        self.started = False

    def decode(self, ids, c, m):
        cmd = "retail" if self.started else "tail"
        self.p.stdin.write(f"{cmd} {c} {m} " + " ".join(map(str, ids[:c + m])) + "\n")
        self.p.stdin.flush()
        out = self.p.stdout.readline().split()
        if out[0] != "tail":
            raise RuntimeError(" ".join(out))
        self.started = True
        return m / float(out[4]), float(out[5]) / m

    def close(self):
        self.p.stdin.close()
        self.p.wait()


class Llama:
    def __init__(self, model, kind, ctx, threads):
        import llama_cpp
        self.lc = llama_cpp
        t = LLAMA_TYPES[kind]
        self.llm = llama_cpp.Llama(model_path=model, n_ctx=ctx + 16, n_batch=512, n_ubatch=512, type_k=t, type_v=t,
                                   flash_attn=True, n_threads=threads, n_threads_batch=threads, verbose=False,
                                   swa_full=True)
        self.started = False

    def _decode(self, toks, start, logits_last=True):
        b = self.lc._internals.LlamaBatch(n_tokens=len(toks), embd=0, n_seq_max=1)
        b.set_batch(toks, n_past=start, logits_all=False)
        self.llm._ctx.decode(b)

    def decode(self, ids, c, m):
        if not self.started:
            self.llm.reset()
            for s in range(0, c, 512):
                self._decode(ids[s:min(c, s + 512)], s)
            self.started = True
        mem = self.lc.llama_get_memory(self.llm._ctx.ctx)
        self.lc.llama_memory_seq_rm(mem, 0, c, -1)
        t, cpu = time.perf_counter(), time.process_time()
        for i in range(m):
            self._decode([ids[c + i]], c + i)
        return m / (time.perf_counter() - t), (time.process_time() - cpu) / m

    def close(self):
        self.llm.close()


@functools.lru_cache(maxsize=None)
def kv_heads_and_dim(model):
    """(KV heads summed over layers, head_dim): reading the GGUF's metadata takes a while, once."""
    import gguf
    rd = gguf.GGUFReader(model)
    arch = bytes(rd.fields["general.architecture"].parts[-1]).decode()
    val = lambda k: rd.fields[f"{arch}.{k}"].parts[-1]
    layers = int(val("block_count")[0])
    kvh = val("attention.head_count_kv")
    return (int(sum(int(x) for x in kvh)) if len(kvh) > 1 else layers * int(kvh[0])), quality.head_dim(model)


def kv_bytes_per_token(model, fmt):
    """K+V bytes of one token over all layers for our format name or llama.cpp's type."""
    heads, hd = kv_heads_and_dim(model)
    per_head = {"f16": 2 * hd, "bf16": 2 * hd, "lossless": None, "balanced": None, "aggressive": None}.get(fmt)
    if fmt in LLAMA_BYTES and fmt != "f16":
        per_head = LLAMA_BYTES[fmt] * hd
    if per_head is None:
        bits = {"lossless": 8, "balanced": 6, "aggressive": 5}[fmt] if not fmt.startswith("q") else int(fmt[1:])
        per_head = 4 + (hd * bits + 7) // 8
    return int(2 * heads * per_head)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", required=True)
    ap.add_argument("--ctx", type=int, default=8000)
    ap.add_argument("--steps", type=int, default=32)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--text", default="vim-manual")
    ap.add_argument("--ours", default="f16,lossless,balanced,aggressive")
    ap.add_argument("--llama", default="f16,q8_0,q4_0")
    ap.add_argument("--binary", default=str(ROOT / "build" / "bin" / "model_decode_bench"))
    a = ap.parse_args()
    ids = quality.tokens(a.model, a.ctx + a.steps, a.text)
    engines = {}
    for k in filter(None, a.ours.split(",")):
        engines[("oxydllm", k)] = Ours(a.binary, a.model, k, a.ctx + a.steps, a.threads)
    for k in filter(None, a.llama.split(",")):
        engines[("llama.cpp", k)] = Llama(a.model, k, a.ctx + a.steps, a.threads)
    keys = list(engines)
    tps = {k: [] for k in keys}
    cpu = {k: [] for k in keys}  # CPU seconds per step
    print(f"{Path(a.model).name}: decode at context {a.ctx}, {a.steps} steps, {a.threads} threads, {a.reps} reps",
          flush=True)
    for rep in range(a.reps):
        order = keys[rep % len(keys):] + keys[:rep % len(keys)]
        for k in order:
            t, c = engines[k].decode(ids, a.ctx, a.steps)
            tps[k].append(t), cpu[k].append(c)
        print(f"rep {rep}: " + ", ".join(f"{k[0]} {k[1]} {tps[k][-1]:.1f} tok/s {1e3 * cpu[k][-1]:.2f} cpu-ms"
                                         for k in keys), flush=True)
    for e in engines.values():
        e.close()
    f16 = ("oxydllm", "f16")
    base = statistics.median(tps[f16]) if f16 in tps else float("nan")
    cbase = statistics.median(cpu[f16]) if f16 in cpu else float("nan")
    print(f"{'engine':9s} {'cache':10s} {'KV B/token':>10s} {'KV MiB read/step':>16s} {'tok/s med':>9s} "
          f"{'min-max':>13s} {'vs our f16':>10s} {'CPU ms/step':>11s} {'min-max':>13s} {'f16/this CPU':>12s}")
    for k in keys:
        b = kv_bytes_per_token(a.model, k[1])
        med, cmed = statistics.median(tps[k]), statistics.median(cpu[k])
        print(f"{k[0]:9s} {k[1]:10s} {b:10d} {b * a.ctx / 2**20:16.1f} {med:9.1f} "
              f"{min(tps[k]):6.1f}-{max(tps[k]):<6.1f} {med / base:10.2f} {1e3 * cmed:11.2f} "
              f"{1e3 * min(cpu[k]):6.2f}-{1e3 * max(cpu[k]):<6.2f} {cbase / cmed:12.2f}")


if __name__ == "__main__":
    main()
