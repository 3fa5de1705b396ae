#!/usr/bin/env python3
"""`oxydllm estimate` against the memory the engine really holds, on a real model (issue 7).

    python3 tools/check_estimate_real.py [--model /work/models/gemma-3-270m-q4_k_m.gguf] \
        [--build build] [--cases 4096x1,2048x2]

Needs build/bin/oxydllm and build/tests/test_estimate. For each CTXxSEQS case it runs
`oxydllm estimate MODEL --context-len CTX --num-sequences SEQS` (parsing its Weights / KV cache /
Runtime / Total lines), then the probe RealModelProbe.MemoryInUseAfterFullContext
(tests/estimate/real_model_probe_test.cc), which loads the model, allocates KV for CTX × SEQS in
16-token blocks of the default KV dtype and the 1024-token step workspace, prefills every sequence to the full context
and prints the model's own accounting and the process's RSS growth. Fails (exit 1) when the
estimate is more than 5% from the accounted bytes (weights mapped + copies + workspace + KV) or
from the RSS growth (anonymous + file-backed) over load and prefill.
"""
import argparse
import json
import os
import re
import subprocess
import sys

UNITS = {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40}


def parse_bytes(text):
    m = re.match(r"\s*([0-9.]+)\s*(B|KiB|MiB|GiB|TiB)\b", text)
    if not m:
        raise ValueError(f"not a byte figure: {text!r}")
    return float(m.group(1)) * UNITS[m.group(2)]


def run_estimate(build, model, ctx, seqs):
    out = subprocess.run([os.path.join(build, "bin/oxydllm"), "estimate", model, "--context-len", str(ctx),
                          "--num-sequences", str(seqs)], check=True, capture_output=True, text=True).stdout
    fig = {}
    for line in out.splitlines():
        m = re.match(r"\s+(Weights|KV cache|State|Runtime|Total)\s+(.*)$", line)
        if m:
            fig[m.group(1)] = parse_bytes(m.group(2))
    return fig, out


def run_probe(build, model, ctx, seqs):
    env = dict(os.environ, OXYD_ESTIMATE_MODEL=model, OXYD_ESTIMATE_CTX=str(ctx), OXYD_ESTIMATE_SEQS=str(seqs))
    p = subprocess.run([os.path.join(build, "tests/test_estimate"), "--gtest_filter=RealModelProbe.*"],
                       env=env, capture_output=True, text=True)
    for line in p.stdout.splitlines():
        if line.startswith("PROBE "):
            if p.returncode != 0:
                raise RuntimeError(p.stdout[-2000:])
            return json.loads(line[len("PROBE "):])
    raise RuntimeError("probe printed no PROBE line:\n" + p.stdout[-2000:] + p.stderr[-2000:])


def mib(x):
    return f"{x / (1 << 20):8.1f}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="/work/models/gemma-3-270m-q4_k_m.gguf")
    ap.add_argument("--build", default="build")
    ap.add_argument("--cases", default="4096x1,2048x2")
    a = ap.parse_args()
    ok = True
    print(f"model {a.model}; MiB; estimate's figures are rounded to 3 significant digits")
    print(f"{'ctx':>6} {'seqs':>4} | {'est.wts':>8} {'est.kv':>8} {'est.rt':>8} {'est.tot':>8} | "
          f"{'mapped':>8} {'owned':>8} {'wkspace':>8} {'kv':>8} {'actual':>8} {'diff':>7} | "
          f"{'rss':>8} {'diff':>7}")
    for case in a.cases.split(","):
        ctx, seqs = (int(x) for x in case.split("x"))
        est, text = run_estimate(a.build, a.model, ctx, seqs)
        pr = run_probe(a.build, a.model, ctx, seqs)
        actual = pr["weights_mapped"] + pr["weights_owned"] + pr["workspace"] + pr["kv"]
        rss = pr["rss_anon_total"] + pr["rss_file_total"]
        d_actual = (est["Total"] - actual) / actual
        d_rss = (est["Total"] - rss) / rss
        print(f"{ctx:>6} {seqs:>4} | {mib(est['Weights'])} {mib(est['KV cache'])} {mib(est['Runtime'])} "
              f"{mib(est['Total'])} | {mib(pr['weights_mapped'])} {mib(pr['weights_owned'])} "
              f"{mib(pr['workspace'])} {mib(pr['kv'])} {mib(actual)} {100 * d_actual:+6.2f}% | "
              f"{mib(rss)} {100 * d_rss:+6.2f}%")
        print(f"{'':>12}  RSS growth: anon {mib(pr['rss_anon_total'])} (at load {mib(pr['rss_anon_load'])}), "
              f"file {mib(pr['rss_file_total'])} (at load {mib(pr['rss_file_load'])})")
        if abs(d_actual) > 0.05 or abs(d_rss) > 0.05:
            ok = False
            print(text)
    print("PASS" if ok else "FAIL: estimate more than 5% off")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
