#!/usr/bin/env python3
"""Decode tokens/s with and without a JSON Schema (issue 25), one oxydllm server, same model, at
concurrency 1 and 16, the two modes interleaved (plain, schema, plain, schema, ...) so machine load
hits both alike. Each level: C clients each send REQS streamed POST /v1/completions (temperature 0,
max_tokens MAX_TOKENS, ignore_eos; with the schema also response_format json_schema). Aggregate
tokens/s = usage.completion_tokens summed / wall time of the level.
Two servers run side by side (same binary, same model), levels alternating between them:
"overlap" (OXYD_GRAMMAR_OVERLAP=1: the grammar masks of a step are computed on a worker during the
forward pass, engine_core.cc) and "inline" (OXYD_GRAMMAR_OVERLAP=0: each mask computed when its
request samples). Unset, the engine overlaps only where a core is free for the worker.
The mask's share of a decode step: with C requests decoding together, one step makes C tokens, so
step time = C / tokens_per_s and share = 1 - tok_s(schema) / tok_s(plain): everything the grammar
adds per step (bitmask fill, -inf over the row, matcher advance), measured end to end. The bitmask
fill alone per token is bench/grammar_mask_bench.cc.
Command (repository root):
  /work/main/.venv/bin/python bench/grammar_decode_bench.py /work/models/gemma-3-270m-q4_k_m.gguf \
      --threads 2 --rounds 2 --json build/grammar_decode_bench.json
"""
import argparse
import asyncio
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serving_bench import httpx, start_ours  # noqa: E402

MODELS = {}  # base URL -> served model id

# Nested, unbounded where a model keeps writing (an array of records): decoding goes on to max_tokens.
SCHEMA = {"type": "object", "properties": {"people": {"type": "array", "items": {
    "type": "object", "properties": {"name": {"type": "string"}, "age": {"type": "integer"},
                                     "tags": {"type": "array", "items": {"type": "string"}}},
    "required": ["name", "age", "tags"], "additionalProperties": False}}},
    "required": ["people"], "additionalProperties": False}
PROMPT = "A JSON list of people with their names, ages and tags:\n"


async def one(client, base, idx, max_tokens, schema):
    body = {"model": MODELS[base], "prompt": f"{idx}. {PROMPT}", "max_tokens": max_tokens, "temperature": 0, "stream": True,
            "ignore_eos": True, "stream_options": {"include_usage": True}}
    if schema:
        body["response_format"] = {"type": "json_schema", "json_schema": {"name": "people", "schema": SCHEMA}}
    tokens = 0
    async with client.stream("POST", base + "/v1/completions", json=body) as r:
        if r.status_code != 200:
            raise RuntimeError(f"HTTP {r.status_code}: {(await r.aread())[:300]!r}")
        async for line in r.aiter_lines():
            if line.startswith("data:") and line[5:].strip() != "[DONE]":
                ev = json.loads(line[5:])
                if ev.get("usage"):
                    tokens = ev["usage"]["completion_tokens"]
    return tokens


async def level(base, conc, reqs, max_tokens, schema, first):
    async with httpx.AsyncClient(timeout=httpx.Timeout(1800.0)) as client:
        async def loop(c):
            return [await one(client, base, first + c * 1000 + i, max_tokens, schema) for i in range(reqs)]
        t0 = asyncio.get_running_loop().time()
        toks = sum(sum(x) for x in await asyncio.gather(*(loop(c) for c in range(conc))))
        return toks, asyncio.get_running_loop().time() - t0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--reqs", type=int, default=2)
    ap.add_argument("--max-tokens", type=int, default=48)
    ap.add_argument("--concurrency", type=int, nargs="+", default=[1, 16])
    ap.add_argument("--json")
    a = ap.parse_args()
    log = open(os.devnull, "w")
    servers = {}
    for name, env in (("inline", "0"), ("overlap", "1")):
        os.environ["OXYD_GRAMMAR_OVERLAP"] = env
        proc, base, _ = start_ours(a.model, a.threads, log)
        MODELS[base] = httpx.get(base + "/v1/models").json()["data"][0]["id"]
        servers[name] = (proc, base)
    res = {}
    try:
        n = 1
        for _, base in servers.values():
            asyncio.run(level(base, 1, 1, 8, True, 0))  # warm-up, compiles the schema once
        for _ in range(a.rounds):
            for c in a.concurrency:
                for schema in (False, True):
                    for name, (_, base) in servers.items():
                        toks, wall = asyncio.run(level(base, c, a.reqs, a.max_tokens, schema, n * 10**6))
                        n += 1
                        r = res.setdefault(f"{name}/{c}/{'schema' if schema else 'plain'}",
                                           {"tokens": 0, "wall_s": 0.0, "requests": 0})
                        r["tokens"] += toks
                        r["wall_s"] += wall
                        r["requests"] += c * a.reqs
    finally:
        for proc, _ in servers.values():
            proc.terminate()
            proc.wait()
    print(f"{'server':>8} {'C':>3} {'plain tok/s':>12} {'schema tok/s':>13} {'tok/req p/s':>12} {'ratio':>6} {'mask share':>11}")
    for name in servers:
        for c in a.concurrency:
            p, s = (res[f"{name}/{c}/{k}"] for k in ("plain", "schema"))
            tp, ts = p["tokens"] / p["wall_s"], s["tokens"] / s["wall_s"]
            res[f"{name}/{c}/share"] = 1 - ts / tp
            per = f"{p['tokens'] / p['requests']:.0f}/{s['tokens'] / s['requests']:.0f}"
            print(f"{name:>8} {c:>3} {tp:>12.1f} {ts:>13.1f} {per:>12} {ts / tp:>6.2f} {100 * (1 - ts / tp):>10.1f}%")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(res, f, indent=1)


if __name__ == "__main__":
    main()
