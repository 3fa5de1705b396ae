#!/usr/bin/env python3
"""Random-weight GGUFs with the real shapes of two MoE models, for speed benchmarks only (bench/).

qwen3moe: Qwen3-30B-A3B: hidden 2048, 32 query heads, 4 KV heads, head_dim 128, 128 experts, 8 active,
          expert FFN 768, vocab 151936 (real Qwen3 vocabulary, as gen_qwen3_shaped_gguf.py), untied
          LM head, q/k norms, rope theta 1e6, 48 layers (--layers scales the count down).
          Tensor types follow llama.cpp's Q4_K_M rules for this model (src/llama-quant.cpp): Q4_K
          everywhere, Q6_K for attn_v and ffn_down_exps on the "more bits" layers (the first and last
          eighth and every third layer between) and for output.weight; router and norms F32.
gpt-oss:  gpt-oss-20b: hidden 2880, 64 query heads, 8 KV heads, head_dim 64, 32 experts, 4 active,
          expert FFN 2880, vocab 201088 (o200k harmony, tests/data/tokenizers/gptoss), sliding window
          128 on even layers, YaRN (factor 32 over 4096), 24 layers (--layers scales down). Types as
          in the MXFP4 GGUF that llama.cpp's converter writes: experts MXFP4, other matrices Q8_0,
          biases, sinks, router and norms F32.

The quantized blocks are random bytes with their scale fields set so that weights are of the
order of 0.02 (no quantizer runs: a 10 GB file takes about a minute); 1-D tensors are ones (norms)
or N(0, 0.02) (biases, sinks). Both engines read the same bytes, which is all a speed benchmark
needs; the values mean nothing. Tensors are written one at a time (memory stays small).

Command (repository root; files are never committed):
  .venv/bin/python tools/gen_moe_shaped_gguf.py --model qwen3moe --layers 24 --out build/models
  .venv/bin/python tools/gen_moe_shaped_gguf.py --model gpt-oss --out build/models
"""
import argparse
import os
import sys
import zlib

import numpy as np
import gguf

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_qwen3_shaped_gguf import add_vocab  # noqa: E402

Q = gguf.GGMLQuantizationType
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# (block bytes, block elements, [(byte offset, kind)] of its scale fields)
BLOCKS = {
    Q.Q4_K: (144, 256, [(0, "f16"), (2, "f16")]),
    Q.Q6_K: (210, 256, [(208, "f16")]),
    Q.Q8_0: (34, 32, [(0, "f16")]),
    Q.MXFP4: (17, 32, [(0, "e8m0")]),
}
# Scale values that put dequantized weights near 0.02 in magnitude.
F16_SCALE = {Q.Q4_K: 2e-4, Q.Q6_K: 1e-3, Q.Q8_0: 2e-4}
E8M0_SCALE = 120  # 2^-7: fp4 values up to 6 → ±0.05


def use_more_bits(i, n):
    return i < n // 8 or i >= 7 * n // 8 or (i - n // 8) % 3 == 2


def qwen3moe_tensors(L):
    H, NH, NKV, HD, E, FF, V = 2048, 32, 4, 128, 128, 768, 151936
    yield "token_embd.weight", Q.Q4_K, [V, H]
    for i in range(L):
        p = f"blk.{i}."
        more = use_more_bits(i, L)
        yield p + "attn_norm.weight", Q.F32, [H]
        yield p + "attn_q.weight", Q.Q4_K, [NH * HD, H]
        yield p + "attn_k.weight", Q.Q4_K, [NKV * HD, H]
        yield p + "attn_v.weight", Q.Q6_K if more else Q.Q4_K, [NKV * HD, H]
        yield p + "attn_q_norm.weight", Q.F32, [HD]
        yield p + "attn_k_norm.weight", Q.F32, [HD]
        yield p + "attn_output.weight", Q.Q4_K, [H, NH * HD]
        yield p + "ffn_norm.weight", Q.F32, [H]
        yield p + "ffn_gate_inp.weight", Q.F32, [E, H]
        yield p + "ffn_gate_exps.weight", Q.Q4_K, [E, FF, H]
        yield p + "ffn_up_exps.weight", Q.Q4_K, [E, FF, H]
        yield p + "ffn_down_exps.weight", Q.Q6_K if more else Q.Q4_K, [E, H, FF]
    yield "output_norm.weight", Q.F32, [H]
    yield "output.weight", Q.Q6_K, [V, H]


def gptoss_tensors(L):
    H, NH, NKV, HD, E, FF, V = 2880, 64, 8, 64, 32, 2880, 201088
    yield "token_embd.weight", Q.Q8_0, [V, H]
    for i in range(L):
        p = f"blk.{i}."
        yield p + "attn_norm.weight", Q.F32, [H]
        for name, rows in (("attn_q", NH * HD), ("attn_k", NKV * HD), ("attn_v", NKV * HD)):
            yield p + name + ".weight", Q.Q8_0, [rows, H]
            yield p + name + ".bias", Q.F32, [rows]
        yield p + "attn_output.weight", Q.Q8_0, [H, NH * HD]
        yield p + "attn_output.bias", Q.F32, [H]
        yield p + "attn_sinks.weight", Q.F32, [NH]
        yield p + "post_attention_norm.weight", Q.F32, [H]
        yield p + "ffn_gate_inp.weight", Q.F32, [E, H]
        yield p + "ffn_gate_inp.bias", Q.F32, [E]
        for name, shape in (("ffn_gate_exps", [E, FF, H]), ("ffn_up_exps", [E, FF, H]), ("ffn_down_exps", [E, H, FF])):
            yield p + name + ".weight", Q.MXFP4, shape
            yield p + name + ".bias", Q.F32, shape[:2]
    yield "output_norm.weight", Q.F32, [H]
    yield "output.weight", Q.Q8_0, [V, H]


def tensor_data(name, qtype, shape, seed):
    rng = np.random.default_rng([seed, zlib.crc32(name.encode())])
    if qtype == Q.F32:
        if name.endswith("norm.weight"):
            return np.ones(shape, dtype=np.float32)
        return rng.standard_normal(shape, dtype=np.float32) * np.float32(0.02)
    nbytes, nelem, fields = BLOCKS[qtype]
    rows = int(np.prod(shape[:-1]))
    assert shape[-1] % nelem == 0, (name, shape)
    blocks = rows * shape[-1] // nelem
    raw = rng.integers(0, 256, size=(blocks, nbytes), dtype=np.uint8)
    for off, kind in fields:
        if kind == "f16":
            scale = np.float16(F16_SCALE[qtype])
            raw[:, off:off + 2] = np.frombuffer(scale.tobytes(), dtype=np.uint8)
        else:
            raw[:, off] = E8M0_SCALE
    byte_shape = list(shape[:-1]) + [shape[-1] // nelem * nbytes]
    return raw.reshape(byte_shape)


def write_header(w, model, layers):
    w.add_block_count(layers)
    w.add_layer_norm_rms_eps(1e-6 if model == "qwen3moe" else 1e-5)
    w.add_quantization_version(gguf.GGML_QUANT_VERSION)
    if model == "qwen3moe":
        w.add_name(f"Qwen3-30B-A3B-shaped random Q4_K_M ({layers} of 48 layers)")
        w.add_context_length(40960)
        w.add_embedding_length(2048)
        w.add_feed_forward_length(6144)
        w.add_head_count(32)
        w.add_head_count_kv(4)
        w.add_key_length(128)
        w.add_value_length(128)
        w.add_rope_freq_base(1e6)
        w.add_expert_count(128)
        w.add_expert_used_count(8)
        w.add_expert_feed_forward_length(768)
        w.add_file_type(gguf.LlamaFileType.MOSTLY_Q4_K_M)
        add_vocab(w, os.path.join(ROOT, "tests/data/tokenizers/qwen3"), 151936, "qwen2")
    else:
        w.add_name(f"gpt-oss-20b-shaped random MXFP4 ({layers} of 24 layers)")
        w.add_context_length(131072)
        w.add_embedding_length(2880)
        w.add_feed_forward_length(2880)
        w.add_head_count(64)
        w.add_head_count_kv(8)
        w.add_key_length(64)
        w.add_value_length(64)
        w.add_rope_freq_base(150000.0)
        w.add_rope_scaling_type(gguf.RopeScalingType.YARN)
        w.add_rope_scaling_factor(32.0)
        w.add_rope_scaling_orig_ctx_len(4096)
        w.add_sliding_window(128)
        w.add_expert_count(32)
        w.add_expert_used_count(4)
        w.add_expert_feed_forward_length(2880)
        w.add_file_type(gguf.LlamaFileType.MOSTLY_MXFP4_MOE)
        add_vocab(w, os.path.join(ROOT, "tests/data/tokenizers/gptoss"), 201088, "gpt-4o")


def write_file(path, model, layers, seed):
    arch = "qwen3moe" if model == "qwen3moe" else "gpt-oss"
    tensors = list((qwen3moe_tensors if model == "qwen3moe" else gptoss_tensors)(layers))
    w = gguf.GGUFWriter(path, arch=arch)
    write_header(w, model, layers)
    for name, qtype, shape in tensors:
        if qtype == Q.F32:
            w.add_tensor_info(name, shape, np.dtype(np.float32), int(np.prod(shape)) * 4)
        else:
            nbytes, nelem, _ = BLOCKS[qtype]
            byte_shape = list(shape[:-1]) + [shape[-1] // nelem * nbytes]
            w.add_tensor_info(name, byte_shape, np.dtype(np.uint8), int(np.prod(byte_shape)), raw_dtype=qtype)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_ti_data_to_file()
    for name, qtype, shape in tensors:
        w.write_tensor_data(tensor_data(name, qtype, shape, seed))
    w.close()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", choices=["qwen3moe", "gpt-oss"], required=True)
    ap.add_argument("--layers", type=int, help="layer count (default: the real model's, 48 / 24)")
    ap.add_argument("--out", default=os.path.join(ROOT, "build", "models"))
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    layers = args.layers or (48 if args.model == "qwen3moe" else 24)
    base = "qwen3-30b-a3b-shaped-Q4_K_M" if args.model == "qwen3moe" else "gpt-oss-20b-shaped-MXFP4"
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, f"{base}-L{layers}.gguf")
    if os.path.exists(path):
        print(path, "exists")
        return
    write_file(path + ".tmp", args.model, layers, args.seed)
    os.replace(path + ".tmp", path)
    print(path, os.path.getsize(path))


if __name__ == "__main__":
    main()
