#!/usr/bin/env python3
"""RoPE inv_freq / attention_factor goldens from transformers' own ROPE_INIT_FUNCTIONS.

Command (from the repo root; writes tests/data/rope/rope_goldens.json):
    /work/venv/bin/python tools/gen_rope_goldens.py tests/data/rope/rope_goldens.json

torch is not installed here (its PyPI wheel pulls gigabytes of CUDA libraries), so the HF
functions run unmodified on a ~40-line numpy stand-in for the few torch calls they make
(arange, tensor, zeros, cat, where, clamp, .to, .float), all in float32 like torch's defaults.
The oracle is HF's code path itself, not a re-derivation; numpy's float32 pow may differ from
torch's by an ulp, which the C++ test's tolerance (relative 4e-6) covers.
Read by tests/ops/rope_scaling_test.cc against ops::rope_frequencies.
"""
import ast
import json
import os
import sys
import types

import numpy as np
import transformers
import transformers.modeling_rope_utils as mru
from transformers import LlamaConfig


class _T(np.ndarray):
    """numpy array with the two torch.Tensor methods the rope functions call."""

    def to(self, device=None, dtype=None):
        return self if dtype is None else self.astype(dtype).view(_T)

    def float(self):
        return self.astype(np.float32).view(_T)


def _w(a):
    return np.asarray(a).view(_T)


torch_shim = types.SimpleNamespace(
    float=np.float32,
    float32=np.float32,
    int64=np.int64,
    Tensor=_T,
    arange=lambda start, end=None, step=1, dtype=None, device=None: _w(
        (np.arange(start) if end is None else np.arange(start, end, step)).astype(
            dtype if dtype is not None else np.int64)),
    tensor=lambda data, dtype=None, device=None: _w(np.array(data, dtype=dtype)),
    zeros=lambda n, dtype=None, device=None: _w(np.zeros(n, dtype=dtype or np.float32)),
    cat=lambda ts, dim=0: _w(np.concatenate(ts, axis=dim)),
    where=lambda c, a, b: _w(np.where(c, a, b)),
    clamp=lambda x, lo, hi: _w(np.clip(x, lo, hi)),
    maximum=lambda a, b: _w(np.maximum(a, b)),
)
mru.torch = torch_shim  # the module binds `torch` only when torch is importable


def _default_rope_fn():
    """HF v5 has no "default" entry in ROPE_INIT_FUNCTIONS: each model's RotaryEmbedding has a
    compute_default_rope_parameters. Phi3's honours partial_rotary_factor; its modeling file
    imports torch, so the function is lifted out of the source (annotations dropped) and run on
    the stand-in."""
    path = os.path.join(os.path.dirname(transformers.__file__), "models", "phi3", "modeling_phi3.py")
    tree = ast.parse(open(path).read())
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name == "compute_default_rope_parameters":
            node.decorator_list = []
            node.returns = None
            for a in node.args.args + node.args.kwonlyargs:
                a.annotation = None
            ns = {"torch": torch_shim}
            exec(compile(ast.Module([node], []), path, "exec"), ns)
            return ns[node.name]
    raise RuntimeError("compute_default_rope_parameters not found in " + path)


INIT_FUNCTIONS = dict(mru.ROPE_INIT_FUNCTIONS, default=_default_rope_fn())

# (name, head_dim, rope_parameters, extra config kwargs, seq_len)
LONG_SHORT = [round(1.0 + 0.02 * i, 4) for i in range(48)]
LONG_LONG = [round(1.0 + 1.3 * i, 4) for i in range(48)]
CASES = [
    ("default_llama2", 128, {"rope_type": "default", "rope_theta": 10000.0}, {}, None),
    ("default_partial_qwen35", 256, {"rope_type": "default", "rope_theta": 10000000.0,
                                     "partial_rotary_factor": 0.25}, {}, None),
    ("default_head80_phi", 80, {"rope_type": "default", "rope_theta": 10000.0, "partial_rotary_factor": 0.4}, {}, None),
    ("linear_x4", 64, {"rope_type": "linear", "rope_theta": 10000.0, "factor": 4.0}, {}, None),
    ("dynamic_short", 64, {"rope_type": "dynamic", "rope_theta": 10000.0, "factor": 2.0},
     {"max_position_embeddings": 2048}, 1000),
    ("dynamic_long", 64, {"rope_type": "dynamic", "rope_theta": 10000.0, "factor": 2.0},
     {"max_position_embeddings": 2048}, 6000),
    ("llama3_1", 128, {"rope_type": "llama3", "rope_theta": 500000.0, "factor": 8.0, "low_freq_factor": 1.0,
                       "high_freq_factor": 4.0, "original_max_position_embeddings": 8192},
     {"max_position_embeddings": 131072}, None),
    ("llama3_2", 64, {"rope_type": "llama3", "rope_theta": 500000.0, "factor": 32.0, "low_freq_factor": 1.0,
                      "high_freq_factor": 4.0, "original_max_position_embeddings": 8192},
     {"max_position_embeddings": 131072}, None),
    ("yarn_qwen", 128, {"rope_type": "yarn", "rope_theta": 1000000.0, "factor": 4.0,
                        "original_max_position_embeddings": 32768}, {"max_position_embeddings": 131072}, None),
    ("yarn_gpt_oss_no_truncate", 64, {"rope_type": "yarn", "rope_theta": 150000.0, "factor": 32.0,
                                      "beta_fast": 32.0, "beta_slow": 1.0, "truncate": False,
                                      "original_max_position_embeddings": 4096},
     {"max_position_embeddings": 131072}, None),
    ("yarn_mscale_partial", 128, {"rope_type": "yarn", "rope_theta": 10000.0, "factor": 40.0, "mscale": 1.0,
                                  "mscale_all_dim": 0.8, "beta_fast": 16.0, "beta_slow": 2.0,
                                  "partial_rotary_factor": 0.5, "original_max_position_embeddings": 4096},
     {"max_position_embeddings": 163840}, None),
    ("yarn_attention_factor_given", 64, {"rope_type": "yarn", "rope_theta": 10000.0, "factor": 8.0,
                                         "attention_factor": 1.25, "original_max_position_embeddings": 2048},
     {"max_position_embeddings": 16384}, None),
    ("longrope_short", 96, {"rope_type": "longrope", "rope_theta": 10000.0, "short_factor": LONG_SHORT,
                            "long_factor": LONG_LONG, "original_max_position_embeddings": 4096},
     {"max_position_embeddings": 131072}, None),
    ("longrope_long", 96, {"rope_type": "longrope", "rope_theta": 10000.0, "short_factor": LONG_SHORT,
                           "long_factor": LONG_LONG, "original_max_position_embeddings": 4096},
     {"max_position_embeddings": 131072}, 8192),
    ("longrope_given_factors", 96, {"rope_type": "longrope", "rope_theta": 250000.0, "short_factor": LONG_SHORT,
                                    "long_factor": LONG_LONG, "factor": 16.0, "attention_factor": 1.1,
                                    "original_max_position_embeddings": 8192},
     {"max_position_embeddings": 131072}, 9000),
    ("proportional_gemma4", 512, {"rope_type": "proportional", "rope_theta": 1000000.0,
                                  "partial_rotary_factor": 0.25}, {}, None),
    ("proportional_factor", 128, {"rope_type": "proportional", "rope_theta": 10000.0, "factor": 8.0,
                                  "partial_rotary_factor": 0.5}, {}, None),
]


def main(out_path):
    cases = []
    for name, head_dim, params, extra, seq_len in CASES:
        cfg = LlamaConfig(head_dim=head_dim, hidden_size=head_dim * 4, num_attention_heads=4,
                          rope_parameters=dict(params), **extra)
        fn = INIT_FUNCTIONS[params["rope_type"]]
        inv_freq, attention_factor = fn(cfg, None, seq_len=seq_len)
        inv_freq = np.asarray(inv_freq, dtype=np.float32)
        cases.append({
            "name": name,
            "head_dim": head_dim,
            "seq_len": seq_len or 0,
            "max_position_embeddings": cfg.max_position_embeddings,
            "params": params,
            "inv_freq": [float(v) for v in inv_freq],
            "attention_factor": float(attention_factor),
        })
    with open(out_path, "w") as f:
        json.dump({"generator": "tools/gen_rope_goldens.py", "transformers": transformers.__version__,
                   "cases": cases}, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "tests/data/rope/rope_goldens.json")
