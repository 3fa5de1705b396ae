#!/usr/bin/env python3
"""Greedy token ids of llama.cpp (PyPI llama-cpp-python) for the real Gemma 3 270M Q4_K_M GGUF.

Oracle for tests/archs/real_gemma3_test.cc. Each prompt is tokenized by llama.cpp (BOS added,
special tokens parsed), fed as ids, then argmax decode one token per step, N tokens, 2 threads.
The "chat" prompts are rendered by jinja2 from tests/data/chat_templates/google-gemma-3-it.jinja
(the GGUF carries no template), like `oxydllm run --chat-template` does.

  MAKEFLAGS=-j2 CMAKE_ARGS="-DGGML_NATIVE=ON" /work/venv/bin/pip install llama-cpp-python
  /work/venv/bin/python tools/gen_gemma3_greedy_golden.py /work/models/gemma-3-270m-q4_k_m.gguf \
      tests/data/gemma3_270m/greedy.json
  ... tools/gen_gemma3_greedy_golden.py GGUF tests/data/gemma3_270m/greedy.json --margins
      (adds llama.cpp's per-step margins along the committed ids; see margins() below)
"""
import json
import os
import sys

import jinja2
import llama_cpp
import numpy as np

PROMPTS = ["What is the capital of France?", "Write a haiku about the sea.", "Count from 1 to 10."]
N = 32
HERE = os.path.dirname(os.path.abspath(__file__))
TEMPLATE = os.path.join(HERE, "..", "tests", "data", "chat_templates", "google-gemma-3-it.jinja")


def render_chat(user):
    src = open(os.environ.get("GEMMA3_TEMPLATE", TEMPLATE)).read()
    env = jinja2.Environment(trim_blocks=True, lstrip_blocks=True)
    env.globals["raise_exception"] = lambda m: (_ for _ in ()).throw(Exception(m))
    return env.from_string(src).render(messages=[{"role": "user", "content": user}],
                                       add_generation_prompt=True, bos_token="<bos>", eos_token="<eos>")


def greedy(llm, ids, n):
    llm.reset()
    llm.eval(ids)
    out = []
    while len(out) < n:
        # Last row's logits straight from llama.cpp (eval() keeps none without logits_all).
        row = np.ctypeslib.as_array(llama_cpp.llama_get_logits_ith(llm._ctx.ctx, -1), shape=(llm.n_vocab(),))
        tok = int(np.argmax(row))
        out.append(tok)
        if len(out) < n:
            llm.eval([tok])
    return out


def margins(llm, ids, tokens):
    """Per step of `tokens` fed after `ids`: llama.cpp's logit of that token minus its best other one
    (negative where llama.cpp here would pick another token). Small margins mark near-ties that
    rounding differences (summation order, activation quantization) may flip."""
    llm.reset()
    llm.eval(ids)
    out = []
    for i, tok in enumerate(tokens):
        row = np.ctypeslib.as_array(llama_cpp.llama_get_logits_ith(llm._ctx.ctx, -1), shape=(llm.n_vocab(),))
        best_other = float(np.max(np.delete(row, tok)))
        out.append(round(float(row[tok]) - best_other, 4))
        if i + 1 < len(tokens):
            llm.eval([tok])
    return out


def no_repack_params():
    # llama.cpp's AMX weight repacking (extra buffer types) segfaults in decode on this machine
    # (llama-cpp-python 0.3.36, GGML_NATIVE): load weights as plain CPU tensors instead.
    p = _default_params()
    p.use_extra_bufts = False
    return p


_default_params = llama_cpp.llama_cpp.llama_model_default_params


def add_margins(llm, dst):
    """--margins: keeps the golden's ids and adds each case's "margins" along its greedy ids."""
    with open(dst) as f:
        golden = json.load(f)
    for c in golden["cases"]:
        c["margins"] = margins(llm, c["prompt_ids"], c["greedy"])
    golden["margins"] = f"llama-cpp-python {llama_cpp.__version__}, n_threads=2, along the greedy ids"
    with open(dst, "w") as f:
        json.dump(golden, f, indent=1)


def main():
    gguf, dst = sys.argv[1], sys.argv[2]
    llama_cpp.llama_cpp.llama_model_default_params = no_repack_params
    llm = llama_cpp.Llama(model_path=gguf, n_ctx=512, n_threads=2, n_threads_batch=2, verbose=False)
    if "--margins" in sys.argv[3:]:
        return add_margins(llm, dst)
    cases = []
    for p in PROMPTS:
        for kind, text in (("raw", p), ("chat", render_chat(p))):
            # Chat text already starts with <bos>: no extra BOS, as transformers passes it.
            ids = llm.tokenize(text.encode(), add_bos=(kind == "raw"), special=True)
            cases.append({"kind": kind, "text": text, "prompt_ids": ids, "greedy": greedy(llm, ids, N),
                          "greedy_text": llm.detokenize(greedy(llm, ids, N)).decode("utf-8", "replace")})
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    with open(dst, "w") as f:
        json.dump({"oracle": f"llama-cpp-python {llama_cpp.__version__}, argmax, n_threads=2, no extra bufts",
                   "gguf": os.path.basename(gguf), "n": N, "cases": cases}, f, indent=1)
    for c in cases:
        print(c["kind"], repr(c["greedy_text"]))


if __name__ == "__main__":
    main()
