#!/usr/bin/env python3
"""llama.cpp's greedy tokens on every quantized GGUF in tests/data/archs: a second oracle that rounds
activations to 8 bits the way a quantized CPU engine does.

Command (from the repository root; needs llama-cpp-python 0.3.36, see tools/requirements.txt):

    /work/venv/bin/python tools/gen_llamacpp_greedy_goldens.py [--only FAMILY ...]

Why: the tiny models have random weights, so greedy top-1 margins go down to ~0.01 logits, while
rounding activations to 8 bits (ggml's Q8_0 / Q8_K, and ours) moves logits by 0.1-0.5 from the
float64 transformers oracle on the same dequantized weights. Any correct 8-bit-activation engine,
llama.cpp included (its agreement with that oracle is written here too), then flips some near-tie
steps. llama.cpp on the SAME GGUF file shares that rounding, so ours must match its 16 greedy
tokens on most prompts (tests/archs/archs_test.cc).

Writes tests/data/archs/<family>/llamacpp_greedy.json for every family with a quantized GGUF:
  prompts     the goldens.json prompts, then NUM_EXTRA more random-id prompts (seeded per family)
  formats     per quantized GGUF: greedy (16 tokens per prompt), margins (llama.cpp's top-1 minus
              top-2 logit at each step), and for the goldens.json prompts llama.cpp's own agreement
              with the transformers same-weights oracle (oracle_agree: equal steps before the first
              difference) and its max |Δlogit| to quant_logits.bin (last positions).
Settings: token ids fed directly (llama.cpp adds no BOS to ids given to eval), n_threads 1, F32 K/V
cache (ours in the test is F32), no flash attention, n_ctx 128 (llama.cpp rounds it to 256; phi3: past
its original 16, so the long rope factors, as transformers uses for these prompt lengths), logits_all,
no extra CPU buffer types (see no_extra_buffer_types).
"""
from __future__ import annotations

import json
import pathlib

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parent.parent
ARCHS = ROOT / "tests" / "data" / "archs"
NUM_STEPS = 16
NUM_EXTRA = 5
EXTRA_LENS = [12, 18, 25, 31, 37]
FLOAT_FORMATS = {"F32", "F16", "BF16"}


def no_extra_buffer_types():
    """Model params without ggml's extra CPU buffer types (weight repacking, AMX): with them the
    0.3.36 build segfaults in decode on every quantized file on this AMX-capable Xeon (Q8_0, Q4_0,
    Q4_K, and the real Gemma 3 Q4_K_M alike). The plain CPU path quantizes activations the same way
    (Q8_0 per 32 for Q4_0/Q8_0 weights, Q8_K per 256 for K-quants)."""
    import llama_cpp.llama_cpp as lc
    orig = lc.llama_model_default_params

    def params():
        p = orig()
        p.use_extra_bufts = False
        return p
    lc.llama_model_default_params = params


def run(path: pathlib.Path, prompts):
    import llama_cpp
    llm = llama_cpp.Llama(model_path=str(path), n_ctx=128, n_batch=128, n_ubatch=128, n_threads=1,
                          n_threads_batch=1, logits_all=True, flash_attn=False, type_k=0, type_v=0,
                          seed=0, verbose=False)
    out = []
    for p in prompts:
        llm.reset()
        llm.eval(list(p))
        first = np.array(llm.scores[:len(p)], dtype=np.float64)  # [len, vocab]
        toks, margins = [], []
        for _ in range(NUM_STEPS):
            row = np.array(llm.scores[llm.n_tokens - 1], dtype=np.float64)
            srt = np.sort(row)
            t = int(np.argmax(row))
            toks.append(t)
            margins.append(float(srt[-1] - srt[-2]))
            llm.eval([t])
        out.append((toks, margins, first))
    llm.close()
    return out


def main():
    import argparse
    import llama_cpp
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", nargs="*", default=None, help="these family folders only (others untouched)")
    args = ap.parse_args()
    no_extra_buffer_types()
    for fam_dir in sorted(p for p in ARCHS.iterdir() if (p / "goldens.json").exists()):
        if args.only and fam_dir.name not in args.only:
            continue
        g = json.loads((fam_dir / "goldens.json").read_text())
        quant = {f: e for f, e in g["gguf"].items() if f not in FLOAT_FORMATS and e.get("file")}
        if not quant:
            continue
        rng = np.random.default_rng(4242 + sum(map(ord, g["family"])))  # ids 0-2 are pad/bos/eos
        extra = [[int(x) for x in rng.integers(3, g["vocab_size"], n)] for n in EXTRA_LENS]
        if "prompt_text" in g:  # real-tokenizer model: real-text prompts only
            extra = []
        prompts = g["prompts"] + extra
        qlog = np.fromfile(fam_dir / "quant_logits.bin", dtype="<f4").reshape(-1, g["vocab_size"])
        last = g["quant_last_positions"]
        res = {"tool": "tools/gen_llamacpp_greedy_goldens.py", "llama_cpp_python": llama_cpp.__version__,
               "num_golden_prompts": len(g["prompts"]), "prompts": prompts, "formats": {}}
        for fmt, e in quant.items():
            runs = run(fam_dir / e["file"], prompts)
            ent = {"file": e["file"], "greedy": [r[0] for r in runs], "margins": [r[1] for r in runs],
                   "oracle_agree": [], "max_abs_diff_vs_oracle": []}
            for p in range(len(g["prompts"])):
                want = e["oracle_greedy"][p]
                got = runs[p][0]
                k = 0
                while k < NUM_STEPS and got[k] == want[k]:
                    k += 1
                ent["oracle_agree"].append(k)
                off = e["quant_logits_offset"] + p * last
                n = len(prompts[p])
                d = np.abs(runs[p][2][n - last:] - qlog[off:off + last]).max()
                ent["max_abs_diff_vs_oracle"].append(float(d))
            res["formats"][fmt] = ent
            print(g["family"], fmt, "llama.cpp vs transformers same-weights oracle: equal steps",
                  ent["oracle_agree"], "max|Δlogit|", ["%.3g" % x for x in ent["max_abs_diff_vs_oracle"]],
                  "min margin", ["%.3g" % min(m) for m in ent["margins"]])
        (fam_dir / "llamacpp_greedy.json").write_text(json.dumps(res, indent=1))


if __name__ == "__main__":
    main()
