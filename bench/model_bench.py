#!/usr/bin/env python3
"""Single-request prompt (prefill) and decode tokens/s of oxydllm vs llama.cpp on the same GGUF,
same token ids, same thread count, in the same run; plus decode as a fraction of the memory
bandwidth limit (weight bytes per token / read bandwidth measured in the same run).

Ours: build/bin/model_decode_bench (bench/model_decode_bench.cc), one long-lived process per model.
Peer: llama-cpp-python's Llama (n_threads = n_threads_batch = THREADS, n_batch = n_ubatch = 512,
llama.cpp's other defaults), in this process. The prompt ids are a fixed English text tokenized by
llama.cpp, repeated to PROMPT tokens; both engines get exactly these ids.
  prefill: fresh cache, the PROMPT ids in one call (llama.cpp: one llama_decode of 512, logits of the
           last token only); tokens/s = PROMPT / time.
  decode:  fresh cache, one token, then DECODE single-token steps (llama-bench's "tg": from an
           almost empty context, so KV reads are negligible next to weights); tokens/s = DECODE / time.
Each repetition runs ours and llama.cpp back to back, alternating who goes first; medians reported.
--baseline BIN_DIR adds "before": the model_decode_bench of an earlier build (its bin/), run in the same
rotation, so a change is measured against its parent in the same minutes.
Weight bytes per decode token: every tensor's bytes, token_embd counted in full when it doubles as the
LM head (tied), otherwise left out (one row is read); of a MoE model's stacked expert tensors (*_exps)
only the share of the experts a token uses (expert_used_count / expert_count). Bandwidth:
build/bin/bandwidth_bench (same threads; best of five 1 GiB read passes), run before each model and at the end; the highest is used.

llama-cpp-python must be importable without its AMX path (ggml's AMX matmul segfaults on this
machine): PYTHONPATH=build/pylib, see docs/performance.md "Method".
Command (repository root; hold the build lock so nobody compiles meanwhile):
  PYTHONPATH=build/pylib flock /work/wt/build.lock /work/venv/bin/python bench/model_bench.py \
      /work/models/gemma-3-270m-q4_k_m.gguf build/models/qwen3-0.6b-shaped-Q4_0.gguf \
      build/models/qwen3-0.6b-shaped-Q8_0.gguf --threads 2 --reps 5 --json build/model_bench.json
Hybrid Gated DeltaNet (qwen35): build/models/qwen3.5-0.8b-shaped-Q4_K_M.gguf of
tools/gen_qwen35_shaped_gguf.py the same way; bench/decode_profile.py splits its step by op class.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import gguf

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TEXT = ("The history of computing is a story of abstractions built on top of one another. Early machines "
        "were programmed by rewiring panels; later, stored programs let the same hardware run many tasks. "
        "Compilers translated human-readable code into machine instructions, operating systems shared the "
        "processor among many users, and networks connected machines across rooms, cities and continents. ")


def model_facts(path):
    """Weight bytes read per decode token, matmul parameter count (per token), shapes for FLOPs."""
    r = gguf.GGUFReader(path)
    arch = r.fields["general.architecture"].contents()
    get = lambda k: r.fields[f"{arch}.{k}"].contents()  # noqa: E731
    tensors = {t.name: t for t in r.tensors}
    tied = "output.weight" not in tensors
    # MoE: a token reads expert_used_count of the expert_count slices of each stacked *_exps tensor.
    active = int(get("expert_used_count")) / int(get("expert_count")) if f"{arch}.expert_count" in r.fields else 1.0
    share = lambda n: active if "_exps" in n else 1.0  # noqa: E731
    total = sum(int(t.n_bytes) * share(t.name) for t in r.tensors)
    emb = tensors["token_embd.weight"]
    per_token = int(total if tied else total - int(emb.n_bytes))
    matmul_params = int(sum(int(t.n_elements) * share(n) for n, t in tensors.items()
                            if n.startswith("blk.") and len(t.shape) >= 2))
    head_params = int(emb.n_elements if tied else tensors["output.weight"].n_elements)
    heads = int(get("attention.head_count"))
    key_len = int(get("attention.key_length")) if f"{arch}.attention.key_length" in r.fields \
        else int(get("embedding_length")) // heads
    types = sorted({t.tensor_type.name for t in r.tensors if len(t.shape) == 2})
    layers = int(get("block_count"))
    # Hybrid models (qwen35*): only every full_attention_interval-th layer attends over the context.
    attn_layers = layers // int(get("full_attention_interval")) if f"{arch}.full_attention_interval" in r.fields \
        else layers
    return {"arch": arch, "file_bytes": os.path.getsize(path), "weight_bytes_per_token": per_token,
            "tied_head": tied, "matmul_params": matmul_params, "head_params": head_params,
            "layers": layers, "attn_layers": attn_layers, "heads": heads, "head_dim": key_len, "types": types}


def prefill_flops(f, n):
    """2·params per token for every layer matmul, the LM head once (last token), causal attention."""
    attn = 4 * f["attn_layers"] * f["heads"] * f["head_dim"] * n * (n + 1) // 2
    return 2 * f["matmul_params"] * n + 2 * f["head_params"] + attn


def bandwidth(threads):
    exe = os.path.join(ROOT, "build", "bin", "bandwidth_bench")
    out = subprocess.run([exe, "1", "5"], env={**os.environ, "OXYD_NUM_THREADS": str(threads)},
                         capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        if line.startswith("read "):
            return float(line.split()[1])  # best of the passes, GB/s
    raise RuntimeError("bandwidth_bench: no read line in\n" + out)


class Ours:
    def __init__(self, path, threads, ctx, kv, bin_dir=None):
        exe = os.path.join(bin_dir or os.path.join(ROOT, "build", "bin"), "model_decode_bench")
        self.p = subprocess.Popen([exe, path, "--threads", str(threads), "--ctx", str(ctx), "--kv", kv],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
        ready = self.p.stdout.readline().split()
        if not ready or ready[0] != "ready":
            raise RuntimeError(f"model_decode_bench failed to load {path}: {ready}")
        self.load_s = float(ready[2])

    def _cmd(self, kind, n, ids):
        self.p.stdin.write(f"{kind} {n} {' '.join(map(str, ids))}\n")
        self.p.stdin.flush()
        out = self.p.stdout.readline().split()
        if len(out) != 3 or out[0] != kind:
            raise RuntimeError(f"model_decode_bench: {out}")
        return float(out[2])

    def prefill(self, ids):
        return self._cmd("prefill", len(ids), ids)

    def decode(self, ids):
        return self._cmd("decode", len(ids) - 1, ids)

    def close(self):
        self.p.stdin.close()
        self.p.wait(timeout=30)


class Peer:
    def __init__(self, path, threads, ctx):
        from llama_cpp import Llama
        t = time.perf_counter()
        self.llm = Llama(model_path=path, n_threads=threads, n_threads_batch=threads, n_ctx=ctx, n_batch=512,
                         n_ubatch=512, verbose=False)
        self.load_s = time.perf_counter() - t

    def prefill(self, ids):
        self.llm.reset()
        t = time.perf_counter()
        self.llm.eval(ids)
        return time.perf_counter() - t

    def decode(self, ids):
        self.llm.reset()
        self.llm.eval(ids[:1])
        t = time.perf_counter()
        for tok in ids[1:]:
            self.llm.eval([tok])
        return time.perf_counter() - t

    def prompt_ids(self, n):
        ids = self.llm.tokenize(TEXT.encode(), add_bos=False, special=False)
        return (ids * (n // len(ids) + 1))[:n]


def bench_model(path, args):
    f = model_facts(path)
    peer = Peer(path, args.threads, args.ctx)
    engines = {"ours": Ours(path, args.threads, args.ctx, args.kv), "llama.cpp": peer}
    if args.baseline:
        engines["before"] = Ours(path, args.threads, args.ctx, args.kv, args.baseline)
    ids = peer.prompt_ids(args.prompt)
    dec_ids = ids[:args.decode + 1]
    for e in engines.values():  # warm-up
        e.prefill(ids), e.decode(dec_ids)
    t = {n: {"prefill": [], "decode": []} for n in engines}
    for rep in range(args.reps):
        order = list(engines.items())
        order = order[rep % len(order):] + order[:rep % len(order)]  # each engine first in turn
        for name, e in order:
            t[name]["prefill"].append(args.prompt / e.prefill(ids))
        for name, e in order:
            t[name]["decode"].append(args.decode / e.decode(dec_ids))
        print(f"  rep {rep}: " + ", ".join(f"{n} pp {t[n]['prefill'][-1]:.1f} tg {t[n]['decode'][-1]:.2f}"
                                         for n in t), file=sys.stderr, flush=True)
    for name, e in engines.items():
        if name != "llama.cpp":
            e.close()
    res = {"model": os.path.basename(path), "facts": f, "load_s": {n: e.load_s for n, e in engines.items()},
           "runs_tok_s": t}
    for n in t:
        for k in ("prefill", "decode"):
            res[f"{n}_{k}"] = statistics.median(t[n][k])
    del peer
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("models", nargs="+")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--prompt", type=int, default=512)
    ap.add_argument("--decode", type=int, default=32)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--ctx", type=int, default=1024)
    ap.add_argument("--kv", default="f32", choices=["f32", "f16", "bf16"], help="our KV cache dtype")
    ap.add_argument("--baseline", metavar="BIN_DIR", help="an earlier build's bin/: its model_decode_bench runs as 'before'")
    ap.add_argument("--json", help="write all raw numbers here")
    args = ap.parse_args()

    bws, results = [], []
    for m in args.models:
        bws.append(bandwidth(args.threads))
        print(f"{m}: (read bandwidth {bws[-1]:.1f} GB/s)", file=sys.stderr, flush=True)
        results.append(bench_model(m, args))
    bws.append(bandwidth(args.threads))
    bw = max(bws)  # the best read seen in this run: the most conservative limit

    print(f"\nthreads {args.threads}, prompt {args.prompt} tokens, decode {args.decode} tokens, {args.reps} reps "
          f"(medians); read bandwidth (best of 5 1-GiB passes, before each model and at the end) "
          f"{' / '.join(f'{b:.1f}' for b in bws)} GB/s; limit uses the highest, {bw:.1f}\n")
    print("| model | weight MB/token | prefill tok/s ours | llama.cpp | ratio | ours GFLOP/s "
          "| decode tok/s ours | llama.cpp | ratio | ours % of bw limit | llama.cpp % |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in results:
        f = r["facts"]
        wb = f["weight_bytes_per_token"]
        limit = bw * 1e9 / wb  # tokens/s if every weight byte is read once at the measured bandwidth
        gflops = prefill_flops(f, args.prompt) * r["ours_prefill"] / args.prompt / 1e9
        r.update(bandwidth_gbs=bw, decode_limit_tok_s=limit, ours_prefill_gflops=gflops)
        print(f"| {r['model']} ({'/'.join(f['types'])}) | {wb / 1e6:.1f} | {r['ours_prefill']:.1f} | "
              f"{r['llama.cpp_prefill']:.1f} | {r['ours_prefill'] / r['llama.cpp_prefill']:.2f} | {gflops:.0f} | "
              f"{r['ours_decode']:.2f} | {r['llama.cpp_decode']:.2f} | "
              f"{r['ours_decode'] / r['llama.cpp_decode']:.2f} | {100 * r['ours_decode'] / limit:.0f}% | "
              f"{100 * r['llama.cpp_decode'] / limit:.0f}% |")
    if args.baseline:
        print("\n| model | prefill tok/s ours | before | ours ÷ before | decode tok/s ours | before | ours ÷ before |")
        print("|---|---:|---:|---:|---:|---:|---:|")
        for r in results:
            print(f"| {r['model']} | {r['ours_prefill']:.1f} | {r['before_prefill']:.1f} | "
                  f"{r['ours_prefill'] / r['before_prefill']:.3f} | {r['ours_decode']:.2f} | {r['before_decode']:.2f} | "
                  f"{r['ours_decode'] / r['before_decode']:.3f} |")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"args": vars(args), "bandwidth_gbs": bws, "results": results}, fh, indent=1)


if __name__ == "__main__":
    main()
