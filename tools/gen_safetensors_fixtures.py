#!/usr/bin/env python3
"""Writes safetensors fixtures with the `safetensors` package (numpy + ml_dtypes arrays) under
tests/data/safetensors/, and expected.json: what safetensors.safe_open reports for each file
(names, dtype, shape) plus the raw bytes of every tensor (hex), for tests/loader/safetensors_test.cc.
  all_dtypes.safetensors   one tensor per supported dtype incl. BF16, F8_E4M3, F8_E5M2, BOOL, a scalar
  sharded/                 model-0000{1,2}-of-00002.safetensors + model.safetensors.index.json
Run from the repository root:  /work/venv/bin/python tools/gen_safetensors_fixtures.py
"""
import json
import os
import sys

import ml_dtypes
import numpy as np
from safetensors import safe_open
from safetensors.numpy import save_file

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "safetensors")


def all_dtypes():
    return {
        "f64": np.array([1.5, -2.25], dtype=np.float64),
        "f32": (np.arange(6, dtype=np.float32) * 0.5 - 1).reshape(2, 3),
        "f16": np.array([[1.0, -0.5], [65504, 0.001]], dtype=np.float16),
        "bf16": np.array([1.0, -3.5, 1e30, 0.1], dtype=ml_dtypes.bfloat16).reshape(2, 2),
        "f8_e4m3": np.array([448, -1.5, 0.015625, 0], dtype=ml_dtypes.float8_e4m3fn),
        "f8_e5m2": np.array([57344, -2, 0.5], dtype=ml_dtypes.float8_e5m2),
        "i64": np.array([2**40, -7], dtype=np.int64),
        "i32": np.array([[1, -2], [3, -4]], dtype=np.int32),
        "i16": np.array([-300, 300], dtype=np.int16),
        "i8": np.array([-128, 0, 127], dtype=np.int8),
        "u8": np.arange(8, dtype=np.uint8).reshape(2, 2, 2),
        "bool": np.array([True, False, True]),
        "scalar": np.array(3.0, dtype=np.float32),
        "empty": np.zeros((0, 4), dtype=np.float32),
        "model.layers.0.mlp.experts.gate_up_proj_blocks": np.arange(32, dtype=np.uint8).reshape(1, 2, 1, 16),
        "w5d": np.ones((1, 1, 1, 2, 2), dtype=np.float16),
    }


def describe(path):
    out = {"file": os.path.relpath(path, OUT), "tensors": []}
    raw = open(path, "rb").read()
    n = int.from_bytes(raw[:8], "little")
    header = json.loads(raw[8:8 + n])
    with safe_open(path, "np") as f:
        out["metadata"] = f.metadata() or {}
        for k in sorted(f.keys()):
            s = f.get_slice(k)
            b, e = header[k]["data_offsets"]
            out["tensors"].append({"name": k, "dtype": s.get_dtype(), "shape": list(s.get_shape()),
                                   "data_hex": raw[8 + n + b:8 + n + e].hex()})
    return out


def main():
    os.makedirs(os.path.join(OUT, "sharded"), exist_ok=True)
    descs = []
    p = os.path.join(OUT, "all_dtypes.safetensors")
    save_file(all_dtypes(), p, metadata={"format": "pt"})
    descs.append(describe(p))
    shards = {
        "model-00001-of-00002.safetensors": {"model.embed_tokens.weight": np.arange(8, dtype=np.float32).reshape(4, 2),
                                             "model.norm.weight": np.ones(2, dtype=np.float32)},
        "model-00002-of-00002.safetensors": {"lm_head.weight": np.full((4, 2), 0.5, dtype=ml_dtypes.bfloat16)},
    }
    weight_map = {}
    for fname, tensors in shards.items():
        p = os.path.join(OUT, "sharded", fname)
        save_file(tensors, p, metadata={"format": "pt"})
        descs.append(describe(p))
        weight_map.update({k: fname for k in tensors})
    with open(os.path.join(OUT, "sharded", "model.safetensors.index.json"), "w") as f:
        json.dump({"metadata": {"total_size": 56}, "weight_map": dict(sorted(weight_map.items()))}, f, indent=2)
    with open(os.path.join(OUT, "expected.json"), "w") as f:
        json.dump({"generator": "tools/gen_safetensors_fixtures.py", "files": descs}, f, indent=1)
    print("wrote", len(descs), "files to", OUT)


if __name__ == "__main__":
    sys.exit(main())
