#!/usr/bin/env python3
"""Goldens for src/sample/ from Hugging Face transformers' logits processors (the oracle).

Command (from the repo root):
  /work/venv/bin/python tools/gen_sampling_goldens.py tests/data/sample/goldens.json

Each case: a random logits row, the processor and its parameters, HF's output row (-inf = removed,
written as null). presence/frequency penalties are not in HF; they follow OpenAI's documented
formula (logit -= count * frequency + (count > 0) * presence over output tokens) written here in
numpy. "pipeline" cases chain HF processors in sample/'s documented order and give the final
softmax probabilities, used by the chi-square sampling test.
"""
import json
import sys

import numpy as np
import torch
from transformers.generation import logits_process as lp

rng = np.random.default_rng(1234)


def row(vocab, scale=3.0):
    return (rng.standard_normal(vocab) * scale).astype(np.float32)


def enc(t):
    return [None if not np.isfinite(v) else float(v) for v in t.reshape(-1).tolist()]


def apply(proc, logits, input_ids=None):
    ids = torch.tensor([input_ids or [0]], dtype=torch.long)
    return proc(ids, torch.tensor(logits)[None, :].clone())[0].numpy()


cases = []
for vocab in (50, 257):
    for _ in range(2):
        x = row(vocab)
        for k in (1, 5, 40):
            cases.append(dict(op="top_k", params=dict(top_k=k), logits=enc(x), expected=enc(apply(lp.TopKLogitsWarper(k), x))))
        for p in (0.1, 0.5, 0.9, 0.99):
            cases.append(dict(op="top_p", params=dict(top_p=p), logits=enc(x), expected=enc(apply(lp.TopPLogitsWarper(p), x))))
        for m in (0.01, 0.1, 0.5):
            cases.append(dict(op="min_p", params=dict(min_p=m), logits=enc(x), expected=enc(apply(lp.MinPLogitsWarper(m), x))))
        for m in (0.2, 0.5, 0.95):
            cases.append(dict(op="typical_p", params=dict(typical_p=m), logits=enc(x), expected=enc(apply(lp.TypicalLogitsWarper(m), x))))
        for t in (0.3, 1.7):
            cases.append(dict(op="temperature", params=dict(temperature=t), logits=enc(x), expected=enc(apply(lp.TemperatureLogitsWarper(t), x))))
        prompt = rng.integers(0, vocab, 12).tolist()
        output = rng.integers(0, vocab, 9).tolist()
        output += output[:3]  # repeated tokens, so counts > 1
        for r in (1.3, 0.8):
            exp = apply(lp.RepetitionPenaltyLogitsProcessor(r), x, prompt + output)
            cases.append(dict(op="repetition_penalty", params=dict(repetition_penalty=r), prompt=prompt,
                              output=output, logits=enc(x), expected=enc(exp)))
        for pres, freq in ((0.5, 0.0), (0.0, 0.7), (-0.4, 1.1)):
            counts = np.bincount(np.array(output), minlength=vocab).astype(np.float32)
            exp = x - counts * np.float32(freq) - (counts > 0).astype(np.float32) * np.float32(pres)
            cases.append(dict(op="presence_frequency", params=dict(presence_penalty=pres, frequency_penalty=freq),
                              prompt=prompt, output=output, logits=enc(x), expected=enc(exp)))

# Pipelines on a small vocab: penalties -> bias -> temperature -> top_k -> top_p -> min_p -> typical_p.
pipelines = [
    dict(temperature=0.8, top_k=6),
    dict(temperature=1.2, top_p=0.8),
    dict(temperature=1.0, min_p=0.05, repetition_penalty=1.2),
    dict(temperature=0.7, top_k=8, top_p=0.9, min_p=0.02, typical_p=0.9, repetition_penalty=1.1,
         presence_penalty=0.3, frequency_penalty=0.2, logit_bias={"3": 2.0, "7": -1.5}),
    dict(temperature=1.0),
]
for params in pipelines:
    vocab = 12
    x = row(vocab, 1.5)
    prompt = [1, 2, 3]
    output = [3, 4, 4]
    y = apply(lp.RepetitionPenaltyLogitsProcessor(params.get("repetition_penalty", 1.0)), x, prompt + output)
    counts = np.bincount(np.array(output), minlength=vocab).astype(np.float32)
    y = y - counts * np.float32(params.get("frequency_penalty", 0.0)) - (counts > 0) * np.float32(params.get("presence_penalty", 0.0))
    for tok, b in params.get("logit_bias", {}).items():
        y[int(tok)] += np.float32(b)
    y = y.astype(np.float32)
    y = apply(lp.TemperatureLogitsWarper(params["temperature"]), y)
    if "top_k" in params:
        y = apply(lp.TopKLogitsWarper(params["top_k"]), y)
    if "top_p" in params:
        y = apply(lp.TopPLogitsWarper(params["top_p"]), y)
    if "min_p" in params:
        y = apply(lp.MinPLogitsWarper(params["min_p"]), y)
    if "typical_p" in params:
        y = apply(lp.TypicalLogitsWarper(params["typical_p"]), y)
    probs = torch.softmax(torch.tensor(y, dtype=torch.float64), dim=-1).numpy()
    cases.append(dict(op="pipeline", params=params, prompt=prompt, output=output, logits=enc(x),
                      expected=[float(p) for p in probs]))

with open(sys.argv[1], "w") as f:
    json.dump(cases, f, separators=(",", ":"))
print(len(cases), "cases")
