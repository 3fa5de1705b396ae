#!/usr/bin/env python3
"""gpt-oss op goldens from transformers' own modeling code (float64), for tests/ops/gpt_oss_ops_test.cc.

Run from the repo root:
    /work/main/.venv/bin/python tools/gen_gpt_oss_op_goldens.py
Writes tests/data/ops/gpt_oss_ops.json:
  * "glu": GptOssExperts._apply_gate (clamped SwiGLU, alpha 1.702, limit 7.0) on random interleaved
    gate_up rows [N, 2·I] (values in ±12 so both clamps bite); out [N, I].
  * "attention": transformers.models.gpt_oss.modeling_gpt_oss.eager_attention_forward (sinks
    appended to the softmax, then dropped) on random q [nh, T, hd], k/v [nkv, T, hd] with a causal
    mask, with and without a sliding window (the mask transformers builds: key j visible from query
    i iff j <= i and i - j < window); out [T, nh, hd].
Inputs are float32 values (what the C++ side feeds), the oracle runs in float64.
"""
import json
import os
import types

import numpy as np
import torch
from transformers.models.gpt_oss import modeling_gpt_oss as m

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
rng = np.random.default_rng(1234)
f32 = lambda *shape, lo=-1.0, hi=1.0: rng.uniform(lo, hi, size=shape).astype(np.float32)


def glu_case():
    n, inter = 6, 37
    gate_up = f32(n, 2 * inter, lo=-12, hi=12)
    experts = types.SimpleNamespace(limit=7.0, alpha=1.702)
    out = m.GptOssExperts._apply_gate(experts, torch.from_numpy(gate_up).double())
    return {"n": n, "inter": inter, "gate_up": gate_up.reshape(-1).tolist(), "out": out.reshape(-1).tolist()}


def attention_case(name, nh, nkv, hd, T, window, sink_scale):
    q, k, v = f32(nh, T, hd, lo=-2, hi=2), f32(nkv, T, hd), f32(nkv, T, hd)
    sinks = f32(nh, lo=-sink_scale, hi=sink_scale)
    i = np.arange(T)[:, None]
    j = np.arange(T)[None, :]
    visible = (j <= i) & ((i - j < window) if window else True)
    mask = torch.from_numpy(np.where(visible, 0.0, -np.inf))[None, None]
    module = types.SimpleNamespace(num_key_value_groups=nh // nkv, sinks=torch.from_numpy(sinks).double(),
                                   training=False)
    scale = float(np.float32(1.0 / np.sqrt(np.float32(hd))))
    out, _ = m.eager_attention_forward(module, torch.from_numpy(q).double()[None], torch.from_numpy(k).double()[None],
                                       torch.from_numpy(v).double()[None], mask, scale)
    return {"name": name, "nh": nh, "nkv": nkv, "hd": hd, "T": T, "window": window, "scale": scale,
            "q": q.transpose(1, 0, 2).reshape(-1).tolist(),  # [T, nh, hd]
            "k": k.transpose(1, 0, 2).reshape(-1).tolist(),  # [T, nkv, hd]
            "v": v.transpose(1, 0, 2).reshape(-1).tolist(),
            "sinks": sinks.tolist(), "out": out[0].reshape(-1).tolist()}  # [T, nh, hd]


rec = {"glu": glu_case(), "attention": [
    attention_case("full_gqa", 4, 2, 16, 13, 0, 3.0),
    attention_case("sliding_window_5", 2, 1, 16, 17, 5, 3.0),
    attention_case("dominant_sinks", 2, 2, 8, 9, 4, 12.0),
]}
os.makedirs(os.path.join(ROOT, "tests", "data", "ops"), exist_ok=True)
with open(os.path.join(ROOT, "tests", "data", "ops", "gpt_oss_ops.json"), "w") as f:
    json.dump(rec, f, separators=(",", ":"))
print("wrote tests/data/ops/gpt_oss_ops.json")
