#!/usr/bin/env python3
"""MXFP4 goldens in gpt-oss's Hugging Face layout, dequantized by transformers itself.

Run from the repo root:
    /work/main/.venv/bin/python tools/gen_mxfp4_hf_goldens.py
Writes tests/data/quant/mxfp4_hf.json: random `blocks` U8 [E, R, G, 16] and `scales` U8 [E, R, G]
(every E8M0 byte 0..255 once), and transformers.integrations.mxfp4.convert_moe_packed_tensors
(dtype float32) of them, which is the parameter layout [E, G·32, R] (input-major), as uint32 bit
patterns; plus that tensor's gate / up halves as GptOssExperts slices them (`[..., ::2]`,
`[..., 1::2]`). tests/quant/mxfp4_hf_test.cc repacks with mxfp4_from_hf and dequantizes with
dequantize_row (GGUF MXFP4, itself checked against gguf-py in quant_golden_test).
"""
import json
import os

import numpy as np
import torch
from transformers.integrations.mxfp4 import convert_moe_packed_tensors

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
E, R, G = 4, 8, 8  # experts, output rows (2·I for gate_up), 32-groups per row: 256 scales

rng = np.random.default_rng(2024)
blocks = rng.integers(0, 256, size=(E, R, G, 16), dtype=np.uint8)
scales = rng.permutation(256).astype(np.uint8).reshape(E, R, G)  # every E8M0 byte once
out = convert_moe_packed_tensors(torch.from_numpy(blocks), torch.from_numpy(scales), dtype=torch.float32)
assert out.shape == (E, G * 32, R), out.shape
bits = lambda t: t.contiguous().numpy().view(np.uint32).reshape(-1).tolist()
rec = {"E": E, "R": R, "G": G, "blocks": blocks.reshape(-1).tolist(), "scales": scales.reshape(-1).tolist(),
       "dequant_bits": bits(out), "gate_bits": bits(out[..., ::2]), "up_bits": bits(out[..., 1::2])}
with open(os.path.join(ROOT, "tests", "data", "quant", "mxfp4_hf.json"), "w") as f:
    json.dump(rec, f, separators=(",", ":"))
print("wrote tests/data/quant/mxfp4_hf.json", out.shape, "nonfinite:", int((~torch.isfinite(out)).sum()))
