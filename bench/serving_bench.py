#!/usr/bin/env python3
"""Serving benchmark: aggregate output tokens/s and time to first token (TTFT) at several
concurrencies, oxydllm's server vs llama.cpp's OpenAI-compatible server (llama-cpp-python's
llama_cpp.server) on the same GGUF and thread count, both up in the same run.

Load generator (this file, asyncio + httpx): at concurrency C, C clients each send
max(REQS_PER_CLIENT, ceil(MIN_REQUESTS / C)) streamed POST /v1/completions one after another
(temperature 0, max_tokens MAX_TOKENS, ignore_eos where the server honours it); MIN_REQUESTS (8)
makes a low level run long enough to measure: two requests at C=1 took ~1 s and swung by 30%.
Every request of a run has its own prompt (a request number unique across the warm-up and all levels
first, then a fixed English text), so no server can answer one request from another's prefix cache.
  TTFT: request sent -> first SSE chunk carrying a choice.
  output tokens: usage.completion_tokens when the server streams it; else MAX_TOKENS when
    finish_reason is "length", else the number of chunks with text (one per token in both servers).
  aggregate tokens/s: all output tokens of the level / wall time from the first request sent to the
    last stream closed.
Levels run in both servers back to back, alternating who goes first; one warm-up request each first.
llama_cpp.server serves one request at a time (a global lock), so its concurrency only queues.
--baseline BIN_DIR adds a third server, "before": the oxydllm of an earlier build (its bin/), run
interleaved with the two others, so a change is measured against its parent in the same minutes.

llama-cpp-python must be importable without its AMX path (ggml's AMX matmul segfaults on this
machine): PYTHONPATH=build/pylib, see docs/performance.md "Method".
Command (repository root; hold the build lock so nobody compiles meanwhile):
  PYTHONPATH=build/pylib flock /work/wt/build.lock /work/venv/bin/python bench/serving_bench.py \
      /work/models/gemma-3-270m-q4_k_m.gguf build/models/qwen3-0.6b-shaped-Q4_0.gguf \
      --threads 2 --concurrency 1 4 16 64 --max-tokens 32 --json build/serving_bench.json
"""
import argparse
import asyncio
import json
import os
import re
import socket
import statistics
import subprocess
import sys
import threading
import time

import httpx

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TEXT = ("wrote about the history of computing. Early machines were programmed by rewiring panels; later, "
        "stored programs let the same hardware run many tasks, and compilers translated readable code into "
        "machine instructions. The next chapter explains")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_http(url, proc, timeout=300):
    t = time.time()
    while time.time() - t < timeout:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode} before answering {url}")
        try:
            if httpx.get(url, timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    raise RuntimeError(f"{url} not up after {timeout}s")


def start_ours(model, threads, log, bin_dir=None):
    exe = os.path.join(bin_dir or os.path.join(ROOT, "build", "bin"), "oxydllm")
    p = subprocess.Popen([exe, "start", "--host", "127.0.0.1", "--port", "0", "--model", model,
                          "--threads", str(threads)], stdout=log, stderr=subprocess.PIPE, text=True)
    t = time.time()
    for line in p.stderr:  # the ready line; the rest of stderr goes to the log in a thread
        log.write(line)
        m = re.search(r"listening on (http://\S+)", line)
        if m:
            base = m.group(1).rstrip("/")
            break
    else:
        raise RuntimeError(f"oxydllm start exited ({p.wait()}) without a ready line")
    threading.Thread(target=lambda: [log.write(x) for x in p.stderr], daemon=True).start()
    return p, base, time.time() - t


def start_peer(model, threads, log, n_ctx):
    port = free_port()
    p = subprocess.Popen([sys.executable, "-m", "llama_cpp.server", "--model", model, "--host", "127.0.0.1",
                          "--port", str(port), "--n_threads", str(threads), "--n_threads_batch", str(threads),
                          "--n_ctx", str(n_ctx), "--n_batch", "512", "--verbose", "False",
                          "--interrupt_requests", "False"],
                         stdout=log, stderr=log)
    t = time.time()
    base = f"http://127.0.0.1:{port}"
    wait_http(base + "/v1/models", p)
    return p, base, time.time() - t


async def one_request(client, base, model_name, idx, max_tokens):
    body = {"model": model_name, "prompt": f"Request {idx}: the author {TEXT}", "max_tokens": max_tokens,
            "temperature": 0, "stream": True, "ignore_eos": True, "stream_options": {"include_usage": True}}
    t0 = time.perf_counter()
    ttft, chunks, usage, finish = None, 0, None, None
    async with client.stream("POST", base + "/v1/completions", json=body) as r:
        if r.status_code != 200:
            raise RuntimeError(f"{base}: HTTP {r.status_code}: {(await r.aread())[:300]!r}")
        async for line in r.aiter_lines():
            if not line.startswith("data:"):
                continue
            data = line[5:].strip()
            if data == "[DONE]":
                break
            ev = json.loads(data)
            if ev.get("usage"):
                usage = ev["usage"].get("completion_tokens")
            for c in ev.get("choices") or []:
                if ttft is None:
                    ttft = time.perf_counter() - t0
                chunks += 1 if c.get("text") else 0
                finish = c.get("finish_reason") or finish
    if usage is not None:
        tokens = usage
    elif finish == "length":
        tokens = max_tokens
    else:
        tokens = chunks
    return ttft, tokens, time.perf_counter() - t0


async def run_level(base, model_name, conc, reqs_per_client, max_tokens, first_number=None):
    limits = httpx.Limits(max_connections=conc + 4, max_keepalive_connections=conc + 4)
    async with httpx.AsyncClient(timeout=httpx.Timeout(1800.0), limits=limits) as client:
        async def one(idx):
            try:
                return await one_request(client, base, model_name, idx, max_tokens)
            except Exception as e:  # counted per level, so one refused request does not end the run
                return f"{type(e).__name__}: {e}"

        async def client_loop(c):
            # Numbers unique across levels and the warm-up too (conc * 10**6 by default): a level must
            # not reuse a prompt an earlier request left in a server's prefix cache.
            first = conc * 10**6 if first_number is None else first_number
            return [await one(first + c * 1000 + i) for i in range(reqs_per_client)]
        t0 = time.perf_counter()
        per_client = await asyncio.gather(*(client_loop(c) for c in range(conc)))
        wall = time.perf_counter() - t0
    res = [r for rs in per_client for r in rs if not isinstance(r, str)]
    errors = [r for rs in per_client for r in rs if isinstance(r, str)]
    tokens = sum(r[1] for r in res)
    ttfts = sorted(r[0] for r in res if r[0] is not None) or [float("nan")]
    return {"concurrency": conc, "requests": len(res), "errors": len(errors), "first_error": errors[:1],
            "tokens": tokens, "wall_s": wall,
            "agg_tok_s": tokens / wall, "ttft_median_s": statistics.median(ttfts),
            "ttft_p90_s": ttfts[min(len(ttfts) - 1, int(0.9 * len(ttfts)))]}


def idle_cpu_s(pid, secs=1.0):
    """CPU seconds a process burns in `secs` of idleness (a spinning server would skew the other)."""
    def cpu():
        f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
        return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")
    a = cpu()
    time.sleep(secs)
    return cpu() - a


async def bench_model(model, args, log):
    ours, ours_base, ours_load = start_ours(model, args.threads, log)
    peer, peer_base, peer_load = start_peer(model, args.threads, log, args.n_ctx)
    procs = {"ours": ours, "llama.cpp": peer}
    servers = {"ours": (ours_base, os.path.basename(model)), "llama.cpp": (peer_base, model)}
    load = {"ours": ours_load, "llama.cpp": peer_load}
    if args.baseline:
        procs["before"], before_base, load["before"] = start_ours(model, args.threads, log, args.baseline)
        servers["before"] = (before_base, os.path.basename(model))
    try:
        for name in ("ours", "before"):
            if name in servers:
                base = servers[name][0]
                mid = (await asyncio.to_thread(httpx.get, base + "/v1/models")).json()["data"][0]["id"]
                servers[name] = (base, mid)
        for w, (name, (base, mname)) in enumerate(servers.items()):  # warm-up
            await run_level(base, mname, 1, 1, args.max_tokens, first_number=(999 - w) * 10**6)
        idle = {name: idle_cpu_s(p.pid) for name, p in procs.items()}
        print(f"  idle CPU s/s: {idle}", file=sys.stderr, flush=True)
        out = {"model": os.path.basename(model), "load_s": load, "idle_cpu": idle, "levels": []}
        for i, c in enumerate(args.concurrency):
            order = list(servers) if i % 2 == 0 else list(reversed(servers))
            row = {"concurrency": c}
            for name in order:
                base, mname = servers[name]
                reqs = max(args.reqs_per_client, -(-args.min_requests // c))
                row[name] = await run_level(base, mname, c, reqs, args.max_tokens)
                print(f"  c={c} {name}: {row[name]['agg_tok_s']:.1f} tok/s, TTFT median "
                      f"{row[name]['ttft_median_s']:.3f} s ({row[name]['tokens']} tokens, "
                      f"{row[name]['wall_s']:.1f} s, {row[name]['errors']} errors {row[name]['first_error']})",
                      file=sys.stderr, flush=True)
            out["levels"].append(row)
        return out
    finally:
        for p in procs.values():
            p.terminate()
        for p in procs.values():
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


def print_table(results, args):
    print(f"\nthreads {args.threads}, max_tokens {args.max_tokens}, {args.reqs_per_client} request(s) per client "
          f"and at least {args.min_requests} per level, temperature 0\n")
    before = bool(args.baseline)
    print("| model | concurrency | ours tok/s | llama.cpp tok/s | ratio | ours ×single | ours TTFT med (s) "
          "| llama.cpp TTFT med (s) |" + (" before tok/s | ours ÷ before |" if before else ""))
    print("|---|---:|---:|---:|---:|---:|---:|---:|" + ("---:|---:|" if before else ""))
    for r in results:
        single = r["levels"][0]["ours"]["agg_tok_s"]
        for row in r["levels"]:
            o, p = row["ours"], row["llama.cpp"]
            extra = f" {row['before']['agg_tok_s']:.1f} | {o['agg_tok_s'] / row['before']['agg_tok_s']:.2f} |" \
                if before else ""
            print(f"| {r['model']} | {row['concurrency']} | {o['agg_tok_s']:.1f} | {p['agg_tok_s']:.1f} | "
                  f"{o['agg_tok_s'] / p['agg_tok_s']:.2f} | {o['agg_tok_s'] / single:.2f} | "
                  f"{o['ttft_median_s']:.3f} | {p['ttft_median_s']:.3f} |" + extra)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("models", nargs="+")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--concurrency", type=int, nargs="+", default=[1, 4, 16, 64])
    ap.add_argument("--reqs-per-client", type=int, default=1)
    ap.add_argument("--min-requests", type=int, default=8, help="requests per level at least (more per client)")
    ap.add_argument("--max-tokens", type=int, default=32)
    ap.add_argument("--n-ctx", type=int, default=2048, help="llama.cpp server context")
    ap.add_argument("--log", default=os.path.join(ROOT, "build", "serving_bench.log"))
    ap.add_argument("--baseline", metavar="BIN_DIR", help="an earlier build's bin/: its oxydllm runs as 'before'")
    ap.add_argument("--json")
    args = ap.parse_args()
    results = []
    with open(args.log, "w", buffering=1) as log:
        for m in args.models:
            print(f"{m}:", file=sys.stderr, flush=True)
            results.append(asyncio.run(bench_model(m, args, log)))
    print_table(results, args)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"args": vars(args), "results": results}, fh, indent=1)


if __name__ == "__main__":
    main()
