#!/usr/bin/env python3
"""Random-weight qwen35 GGUFs with the shapes of Qwen3.5-0.8B, for speed benchmarks only (bench/).

Qwen3.5-0.8B (text path; Qwen's model card and llama.cpp's qwen35 loader, which names a 24-layer,
1024-wide qwen35 file LLM_TYPE_0_8B): 24 layers in the repeating pattern 3 Gated DeltaNet layers +
1 gated full-attention layer (full_attention_interval 4), hidden 1024, FFN 3584, vocab 248320, tied
embeddings; attention 8 query heads (q_proj rows [q | gate]), 2 KV heads, head_dim 256, partial
rotary 0.25 (rope dims 64, IMROPE sections [11, 11, 10, 0]), theta 1e7; DeltaNet 16 key heads and
16 value heads of 128, conv kernel 4. The MTP block is left out (as convert_hf_to_gguf.py --no-mtp).
Checked against the released config.json of Qwen/Qwen3.5-0.8B (text_config, as a public log printed it
on 2026-04-24): hidden_size 1024, intermediate_size 3584, 24 layers, 8 / 2 heads, head_dim 256,
full_attention_interval 4, linear_num_key_heads 16, linear_num_value_heads 16, linear key / value head
dims 128, conv kernel 4, tie_word_embeddings true.
About 0.75 B parameters, 0.25 B of them the tied embedding.

Tensor names, shapes and keys are those llama.cpp's converter writes for qwen35 (attn_qkv /
attn_gate / ssm_{conv1d,a,dt.bias,alpha,beta,norm,out} on DeltaNet layers, attn_q of 2·heads·256
rows on the attention layers, post_attention_norm before the FFN). Weights are N(0, 0.02), seeded
per tensor name; ssm_a is −exp(N(0, 0.5)) (the converter stores −exp(A_log)); ssm_dt.bias N(0, 0.5);
norms 1. With Hk = Hv the converter's value-head reorder is the identity. Every 2-D weight is stored
in the requested type (token_embd included); ssm_conv1d and the 1-D tensors stay F32, as llama.cpp
keeps them. Tokenizer: the Qwen3 vocabulary of tests/data/tokenizers/qwen3 padded to 248320 (the
ids both engines get are ids of that vocabulary; a random model does not care which).

Command (repository root; ~2 min on 2 cores, F16 1.5 GB + Q4_K_M ~0.5 GB, never committed):
  /work/main/.venv/bin/python tools/gen_qwen35_shaped_gguf.py --out build/models --types Q4_K_M
Q4_K_M / Q8_0 files are llama.cpp's own llama_model_quantize of the F16 file (llama-cpp-python),
so they hold exactly the tensor types llama-quantize gives a real qwen35 model.
"""
import argparse
import os
import sys
import zlib

import numpy as np
import gguf

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_qwen3_shaped_gguf import add_vocab, LLAMA_MIXES  # noqa: E402

LAYERS, HIDDEN, FFN, VOCAB, INTERVAL = 24, 1024, 3584, 248320, 4
HEADS, KV_HEADS, HEAD_DIM, ROT = 8, 2, 256, 64
HK, HV, DK, DV, CONV_K = 16, 16, 128, 128, 4
KEY_DIM, VALUE_DIM = HK * DK, HV * DV
CONV_DIM = 2 * KEY_DIM + VALUE_DIM
MIXES = {**LLAMA_MIXES, "Q8_0": 7}


def is_linear(i):
    return (i + 1) % INTERVAL != 0


def tensor_shapes():
    """(name, numpy shape, kind): rows = output features; kind picks the init."""
    yield "token_embd.weight", [VOCAB, HIDDEN], "w"
    for i in range(LAYERS):
        p = f"blk.{i}."
        yield p + "attn_norm.weight", [HIDDEN], "one"
        yield p + "post_attention_norm.weight", [HIDDEN], "one"
        if is_linear(i):
            yield p + "attn_qkv.weight", [CONV_DIM, HIDDEN], "w"
            yield p + "attn_gate.weight", [VALUE_DIM, HIDDEN], "w"
            yield p + "ssm_conv1d.weight", [CONV_DIM, CONV_K], "f32"
            yield p + "ssm_dt.bias", [HV], "dt"
            yield p + "ssm_a", [HV], "a"
            yield p + "ssm_beta.weight", [HV, HIDDEN], "w"
            yield p + "ssm_alpha.weight", [HV, HIDDEN], "w"
            yield p + "ssm_norm.weight", [DV], "one"
            yield p + "ssm_out.weight", [HIDDEN, VALUE_DIM], "w"
        else:
            yield p + "attn_q.weight", [2 * HEADS * HEAD_DIM, HIDDEN], "w"
            yield p + "attn_k.weight", [KV_HEADS * HEAD_DIM, HIDDEN], "w"
            yield p + "attn_v.weight", [KV_HEADS * HEAD_DIM, HIDDEN], "w"
            yield p + "attn_output.weight", [HIDDEN, HEADS * HEAD_DIM], "w"
            yield p + "attn_q_norm.weight", [HEAD_DIM], "one"
            yield p + "attn_k_norm.weight", [HEAD_DIM], "one"
        yield p + "ffn_gate.weight", [FFN, HIDDEN], "w"
        yield p + "ffn_up.weight", [FFN, HIDDEN], "w"
        yield p + "ffn_down.weight", [HIDDEN, FFN], "w"
    yield "output_norm.weight", [HIDDEN], "one"


def write_f16(path, tok_dir, seed):
    w = gguf.GGUFWriter(path, arch="qwen35")
    a = "qwen35."
    w.add_name("Qwen3.5-0.8B-shaped random F16")
    w.add_block_count(LAYERS)
    w.add_context_length(262144)
    w.add_embedding_length(HIDDEN)
    w.add_feed_forward_length(FFN)
    w.add_head_count(HEADS)
    w.add_head_count_kv(KV_HEADS)
    w.add_key_length(HEAD_DIM)
    w.add_value_length(HEAD_DIM)
    w.add_rope_freq_base(1e7)
    w.add_rope_dimension_count(ROT)
    w.add_array(a + "rope.dimension_sections", [11, 11, 10, 0])
    w.add_layer_norm_rms_eps(1e-6)
    w.add_uint32(a + "ssm.conv_kernel", CONV_K)
    w.add_uint32(a + "ssm.state_size", DK)
    w.add_uint32(a + "ssm.group_count", HK)
    w.add_uint32(a + "ssm.time_step_rank", HV)
    w.add_uint32(a + "ssm.inner_size", VALUE_DIM)
    w.add_uint32(a + "full_attention_interval", INTERVAL)
    w.add_file_type(gguf.LlamaFileType.MOSTLY_F16)
    w.add_quantization_version(gguf.GGML_QUANT_VERSION)
    add_vocab(w, tok_dir, vocab=VOCAB)
    for name, shape, kind in tensor_shapes():
        rng = np.random.default_rng([seed, zlib.crc32(name.encode())])
        if kind == "one":
            w.add_tensor(name, np.ones(shape, dtype=np.float32))
        elif kind == "a":
            w.add_tensor(name, -np.exp(rng.standard_normal(shape, dtype=np.float32) * np.float32(0.5)))
        elif kind == "dt":
            w.add_tensor(name, rng.standard_normal(shape, dtype=np.float32) * np.float32(0.5))
        else:
            data = rng.standard_normal(shape, dtype=np.float32) * np.float32(0.02)
            w.add_tensor(name, data if kind == "f32" else data.astype(np.float16))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(root, "build", "models"))
    ap.add_argument("--types", nargs="+", default=["Q4_K_M"], choices=["F16"] + list(MIXES))
    ap.add_argument("--tokenizer", default=os.path.join(root, "tests", "data", "tokenizers", "qwen3"))
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)

    def path_of(t):
        return os.path.join(args.out, f"qwen3.5-0.8b-shaped-{t}.gguf")

    for t in dict.fromkeys(["F16"] + args.types):
        path = path_of(t)
        if os.path.exists(path):
            print(path, "exists")
            continue
        if t == "F16":
            write_f16(path + ".tmp", args.tokenizer, args.seed)
        else:
            quantize(path_of("F16"), path + ".tmp", MIXES[t])
        os.replace(path + ".tmp", path)
        print(path, os.path.getsize(path))


def quantize(src, dst, ftype):
    import ctypes
    import llama_cpp
    params = llama_cpp.llama_model_quantize_default_params()
    params.ftype = ftype
    params.nthread = 2
    if llama_cpp.llama_model_quantize(src.encode(), dst.encode(), ctypes.byref(params)) != 0:
        raise SystemExit(f"llama_model_quantize {src} (ftype {ftype}) failed")


if __name__ == "__main__":
    main()
