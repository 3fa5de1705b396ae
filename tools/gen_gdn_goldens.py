#!/usr/bin/env python3
"""Gated DeltaNet (Qwen3.5 linear_attention) op goldens from transformers' own torch functions.

Command (from the repository root; needs torch and transformers 5.25):

    /work/main/.venv/bin/python tools/gen_gdn_goldens.py

Writes tests/data/gdn/gdn_goldens.bin (little-endian f32 arrays back to back) and gdn_goldens.json
(per array: shape and offset in floats), read by tests/ops/gdn_test.cc. Every output is what the
functions of transformers/models/qwen3_5/modeling_qwen3_5.py return on seeded random inputs:
  conv_*      causal_conv1d_update (depthwise causal conv over time, then SiLU) on [1, C, T] with a
              non-zero conv state; conv_state_out is the state it leaves (the last K-1 inputs)
  gating_*    the decay and beta lines of Qwen3_5GatedDeltaNet.forward, run as written there:
              g = -exp(A_log) * softplus(a + dt_bias), beta = sigmoid(b)
  rec_* / chunk_*  torch_recurrent_gated_delta_rule and torch_chunk_gated_delta_rule (chunk 64) with
              use_qk_l2norm_in_kernel=True, Hk=2 key heads serving Hv=4 value heads, a non-zero
              initial state, T=150 tokens (two full chunks and a partial one); *_state the final state
  norm_*      Qwen3_5RMSNormGated(x, gate) (norm, weight, then SiLU gate)
  layer_*     a whole Qwen3_5GatedDeltaNet forward (no cache) of a tiny config: its weights and the
              input/output hidden states, so the C++ test composes the ops as the model will
  wide_*      the delta rule's two forms again at real head widths (dk 128, dv 80, Hk 1, Hv 2, T 72):
              the CPU kernels' full register blocks and gemm tiles (the small case fits in their tails)
Shapes are stored in the torch functions' own layouts; the C++ test permutes where ours differ
(conv state: ours is [K-1, C], torch's [C, K-1]).
"""
from __future__ import annotations

import json
import pathlib

import numpy as np
import torch
import torch.nn.functional as F
from transformers import Qwen3_5TextConfig
from transformers.models.qwen3_5 import modeling_qwen3_5 as mq

ROOT = pathlib.Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "data" / "gdn"


def main():
    torch.manual_seed(1234)
    arrays: dict[str, np.ndarray] = {}

    def put(name, t):
        arrays[name] = t.detach().to(torch.float32).contiguous().numpy()

    # Causal depthwise conv with a state (decode and prefill share this function in transformers).
    C, K = 24, 4
    for name, T in (("conv_prefill", 37), ("conv_decode", 1)):
        x = torch.randn(1, C, T)
        w = torch.randn(C, K) * 0.5
        state = torch.randn(1, C, K - 1)
        put(f"{name}_x", x[0].T)            # [T, C]
        put(f"{name}_weight", w)            # [C, K]
        put(f"{name}_state_in", state[0])   # [C, K-1]
        st = state.clone()
        y = mq.causal_conv1d_update(x, st, w, None, activation="silu")
        put(f"{name}_y", y[0].T)            # [T, C]
        put(f"{name}_state_out", st[0])     # [C, K-1]

    # Gating.
    T, Hv = 29, 4
    a, b = torch.randn(T, Hv) * 2, torch.randn(T, Hv) * 2
    A_log = torch.log(torch.empty(Hv).uniform_(0.01, 16))
    dt_bias = torch.randn(Hv)
    put("gating_a", a)
    put("gating_b", b)
    put("gating_A_log", A_log)
    put("gating_dt_bias", dt_bias)
    put("gating_beta", b.sigmoid())
    put("gating_g", -A_log.float().exp() * F.softplus(a.float() + dt_bias))

    # The delta rule, both forms, from one input.
    T, Hk, Hv, dk, dv = 150, 2, 4, 32, 16
    q, k = torch.randn(1, T, Hk, dk), torch.randn(1, T, Hk, dk)
    v = torch.randn(1, T, Hv, dv)
    g = -torch.rand(1, T, Hv) * 0.5         # log decays in (-0.5, 0]
    beta = torch.rand(1, T, Hv)
    s0 = torch.randn(1, Hv, dk, dv) * 0.3
    for n, t in (("q", q[0]), ("k", k[0]), ("v", v[0]), ("g", g[0]), ("beta", beta[0]), ("state_in", s0[0])):
        put(f"delta_{n}", t)
    o, s = mq.torch_recurrent_gated_delta_rule(q, k, v, g=g, beta=beta, initial_state=s0.clone(),
                                               output_final_state=True, use_qk_l2norm_in_kernel=True)
    put("rec_out", o[0])        # [T, Hv, dv]
    put("rec_state", s[0])      # [Hv, dk, dv]
    o, s = mq.torch_chunk_gated_delta_rule(q, k, v, g=g, beta=beta, chunk_size=64, initial_state=s0.clone(),
                                           output_final_state=True, use_qk_l2norm_in_kernel=True)
    put("chunk_out", o[0])
    put("chunk_state", s[0])

    # Gated RMSNorm.
    N, dv = 10, 16
    norm = mq.Qwen3_5RMSNormGated(dv, eps=1e-6)
    with torch.no_grad():
        norm.weight.copy_(1 + 0.3 * torch.randn(dv))
    x, z = torch.randn(N, dv), torch.randn(N, dv)
    put("norm_x", x)
    put("norm_gate", z)
    put("norm_weight", norm.weight)
    put("norm_y", norm(x, z))

    # A whole linear-attention layer (no cache: the chunked form over the prompt).
    cfg = Qwen3_5TextConfig(hidden_size=64, linear_num_key_heads=2, linear_num_value_heads=4,
                            linear_key_head_dim=32, linear_value_head_dim=16, linear_conv_kernel_dim=4,
                            num_hidden_layers=1, layer_types=["linear_attention"], rms_norm_eps=1e-6,
                            hidden_act="silu")
    layer = mq.Qwen3_5GatedDeltaNet(cfg, 0).eval()
    with torch.no_grad():
        for p in layer.parameters():  # everything random, norms near 1
            p.copy_(torch.randn(p.shape) * (0.2 if p.dim() > 1 else 0.5))
        layer.norm.weight.copy_(1 + 0.2 * torch.randn(layer.norm.weight.shape))
    T = 70
    h = torch.randn(1, T, cfg.hidden_size)
    with torch.no_grad():
        y = layer(h)
    for n, p in layer.named_parameters():
        put("layer_" + n.replace(".", "_"), p.squeeze(1) if n == "conv1d.weight" else p)
    put("layer_h", h[0])
    put("layer_y", y[0])

    # The delta rule at real head widths (dk 128, dv 80: the CPU kernels' full register blocks and
    # gemm tiles, plus a partial one), own generator so that the arrays above keep their values.
    gen = torch.Generator().manual_seed(4321)
    T, Hk, Hv, dk, dv = 72, 1, 2, 128, 80
    q, k = torch.randn(1, T, Hk, dk, generator=gen), torch.randn(1, T, Hk, dk, generator=gen)
    v = torch.randn(1, T, Hv, dv, generator=gen)
    g = -torch.rand(1, T, Hv, generator=gen) * 0.5
    beta = torch.rand(1, T, Hv, generator=gen)
    s0 = torch.randn(1, Hv, dk, dv, generator=gen) * 0.3
    for n, t in (("q", q[0]), ("k", k[0]), ("v", v[0]), ("g", g[0]), ("beta", beta[0]), ("state_in", s0[0])):
        put(f"wide_delta_{n}", t)
    o, s = mq.torch_recurrent_gated_delta_rule(q, k, v, g=g, beta=beta, initial_state=s0.clone(),
                                               output_final_state=True, use_qk_l2norm_in_kernel=True)
    put("wide_rec_out", o[0])
    put("wide_rec_state", s[0])
    o, s = mq.torch_chunk_gated_delta_rule(q, k, v, g=g, beta=beta, chunk_size=64, initial_state=s0.clone(),
                                           output_final_state=True, use_qk_l2norm_in_kernel=True)
    put("wide_chunk_out", o[0])
    put("wide_chunk_state", s[0])

    OUT.mkdir(parents=True, exist_ok=True)
    index, off = {}, 0
    with open(OUT / "gdn_goldens.bin", "wb") as f:
        for n, a in arrays.items():
            f.write(a.astype("<f4").tobytes())
            index[n] = {"shape": list(a.shape), "offset": off}
            off += a.size
    meta = {"tool": "tools/gen_gdn_goldens.py", "transformers": __import__("transformers").__version__,
            "torch": torch.__version__, "layer_config": {
                "hidden_size": 64, "linear_num_key_heads": 2, "linear_num_value_heads": 4,
                "linear_key_head_dim": 32, "linear_value_head_dim": 16, "linear_conv_kernel_dim": 4,
                "rms_norm_eps": 1e-6}, "arrays": index}
    (OUT / "gdn_goldens.json").write_text(json.dumps(meta, indent=1))
    print("floats", off, "bytes", 4 * off)


if __name__ == "__main__":
    main()
