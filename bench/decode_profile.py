#!/usr/bin/env python3
"""Where a decode step (and a prefill) of one model spends its CPU time, by op class, from perf samples.

build/bin/model_decode_bench loads the model (not sampled), then `perf record -p` samples it (cpu-clock,
self time per symbol, no call graphs) while it runs DECODE single-token steps after a one-token
prompt, REPS times (and, with --prefill N, N-token prefills in a second perf session). Each sampled
symbol goes to the first class whose pattern it matches:
  gdn recurrence  the Gated DeltaNet state update (backend/cpu/gated_delta_net*: gdn_head and its
                  recurrent / chunked forms with their helpers (read_block / update_block, the chunked
                  form's gemm tiles), gdn_gating)
  gdn conv        the causal short convolution (causal_conv1d)
  attention       paged attention, K/V cache writes, RoPE, softmax
  matmul          the matmul kernels, activation quantization, packed / row-dot kernels, decoders
  norms/elementwise  rms_norm, activations (silu · gate), add / scale, embedding rows
  other           everything else (thread pool, libc, the kernel)
Shares are of the samples, i.e. of the CPU time of all threads; with --threads 1 (the default) it
is one thread's time, which a busy machine slows evenly, so the shares stay meaningful there even
when wall-clock tok/s does not. Needs perf (kernel.perf_event_paranoid <= 2 for a child's samples).

Command (repository root; ~1 min for the Qwen3.5-0.8B-shaped Q4_K_M file of
tools/gen_qwen35_shaped_gguf.py):
  python3 bench/decode_profile.py build/models/qwen3.5-0.8b-shaped-Q4_K_M.gguf --decode 64 --prefill 512
"""
import argparse
import collections
import os
import re
import signal
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CLASSES = [
    ("gdn recurrence", r"gdn_head|recurrent_head|chunked_head|gated_delta_rule|gdn_gating|load_qk|read_block|"
                       r"update_block|gemm_tile|gemm_rows|::gemm\b|axpy"),
    ("gdn conv", r"causal_conv1d|conv_rows"),
    ("attention", r"attention|paged|reshape_and_cache|rope|softmax|kv_quant|attn_"),
    ("matmul", r"matmul|kernel|panel|rowdot|packed|quant32|prepare|tile|dec_|decode_|amx|vnni|q8k|act_quant"),
    ("norms/elementwise", r"rms_norm|layer_norm|glu|silu|activation|elementwise|add|scale|get_rows|embedding"),
]


def classify(sym):
    for name, pat in CLASSES:
        if re.search(pat, sym):
            return name
    return "other"


def sample(bench, lines, freq):
    """perf-record the running model_decode_bench while it answers `lines`; {symbol: samples}."""
    out = tempfile.NamedTemporaryFile(suffix=".perf", delete=False).name
    perf = subprocess.Popen(["perf", "record", "-F", str(freq), "-o", out, "-p", str(bench.pid)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    import time
    time.sleep(0.5)  # perf attached
    secs = 0.0
    for line in lines:
        bench.stdin.write(line + "\n")
        bench.stdin.flush()
        reply = bench.stdout.readline().split()
        if len(reply) != 3:
            raise RuntimeError(f"model_decode_bench: {reply}")
        secs += float(reply[2])
    perf.send_signal(signal.SIGINT)
    perf.wait(timeout=60)
    rep = subprocess.run(["perf", "report", "-i", out, "--stdio", "--no-children", "--sort", "symbol",
                          "-g", "none", "--percent-limit", "0"], capture_output=True, text=True, check=True).stdout
    os.unlink(out)
    syms = {}
    for ln in rep.splitlines():
        m = re.match(r"\s*([\d.]+)%\s+\[[.k]\]\s+(.*)$", ln)
        if m:
            syms[m.group(2).strip()] = syms.get(m.group(2).strip(), 0.0) + float(m.group(1))
    return syms, secs


def report(title, syms, secs, top):
    total = sum(syms.values()) or 1.0
    by = collections.defaultdict(float)
    for s, p in syms.items():
        by[classify(s)] += p
    print(f"\n{title} (timed {secs:.2f} s wall)")
    print("| class | share of CPU samples |")
    print("|---|---:|")
    for name in [c for c, _ in CLASSES] + ["other"]:
        print(f"| {name} | {100 * by[name] / total:.1f}% |")
    print(f"\ntop {top} symbols:")
    for s, p in sorted(syms.items(), key=lambda kv: -kv[1])[:top]:
        print(f"  {p:6.2f}%  [{classify(s)}]  {s[:140]}")
    return {k: by[k] / total for k in by}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("model")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--decode", type=int, default=64, help="single-token steps per repetition")
    ap.add_argument("--prefill", type=int, default=0, help="also profile prefills of this many tokens")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--freq", type=int, default=2000)
    ap.add_argument("--top", type=int, default=15)
    ap.add_argument("--bin", default=os.path.join(ROOT, "build", "bin"))
    args = ap.parse_args()
    ctx = max(args.decode + 1, args.prefill) + 16
    bench = subprocess.Popen([os.path.join(args.bin, "model_decode_bench"), args.model, "--threads", str(args.threads),
                              "--ctx", str(ctx)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
    ready = bench.stdout.readline().split()
    if not ready or ready[0] != "ready":
        raise SystemExit(f"model_decode_bench failed: {ready}")
    vocab = int(ready[-1])
    ids = [(1000 + 7919 * i) % min(vocab, 150000) for i in range(max(args.decode + 1, args.prefill))]
    warm = f"decode 4 {' '.join(map(str, ids[:5]))}"
    bench.stdin.write(warm + "\n")
    bench.stdin.flush()
    bench.stdout.readline()
    res = {}
    syms, secs = sample(bench, [f"decode {args.decode} {' '.join(map(str, ids[:args.decode + 1]))}"] * args.reps,
                        args.freq)
    print(f"{os.path.basename(args.model)}, threads {args.threads}: {args.reps} x {args.decode} decode steps, "
          f"{args.reps * args.decode / secs:.2f} tok/s wall")
    res["decode"] = report("decode", syms, secs, args.top)
    if args.prefill:
        syms, secs = sample(bench, [f"prefill {args.prefill} {' '.join(map(str, ids[:args.prefill]))}"] * args.reps,
                            args.freq)
        print(f"\n{args.reps} x {args.prefill}-token prefill: {args.reps * args.prefill / secs:.1f} tok/s wall")
        res["prefill"] = report("prefill", syms, secs, args.top)
    bench.stdin.close()
    bench.wait(timeout=60)
    return res


if __name__ == "__main__":
    sys.exit(0 if main() is not None else 1)
