#!/usr/bin/env python3
"""Writes metadata-only GGUFs (tests/data/gguf/config_<name>.gguf) the way llama.cpp's
convert_hf_to_gguf.py set_gguf_parameters() describes the HF configs in tests/data/configs/
(key names and value types come from gguf-py's GGUFWriter helpers; values from the HF config via
transformers; the per-arch choices follow llama.cpp's convert_hf_to_gguf.py and llama-arch.cpp). tests/loader/model_config_test.cc
checks that model_config_from_gguf() of each file agrees with parse_hf_config() of its source.
An `output.weight` tensor is written only for untied models (llama.cpp ties when it is absent).
Run from the repository root:  /work/venv/bin/python tools/gen_gguf_config_fixtures.py
"""
import json
import os
import sys

import numpy as np
import gguf
import transformers as T

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
CFG = os.path.join(ROOT, "tests", "data", "configs")
OUT = os.path.join(ROOT, "tests", "data", "gguf")


def load(name):
    d = json.load(open(os.path.join(CFG, name + ".json")))
    top = T.CONFIG_MAPPING[d["model_type"]].from_dict(d)
    tc = top.get_text_config()
    if tc.model_type == "gemma4_text":
        tc.allow_global_per_layer_attribute_access = True
    return top, tc


def common(w, tc, head_dim=None):
    w.add_context_length(tc.max_position_embeddings)
    w.add_embedding_length(tc.hidden_size)
    w.add_block_count(tc.num_hidden_layers)
    if getattr(tc, "intermediate_size", None):
        w.add_feed_forward_length(tc.intermediate_size)
    w.add_head_count(tc.num_attention_heads)
    w.add_head_count_kv(tc.num_key_value_heads)
    hd = head_dim or getattr(tc, "head_dim", None) or tc.hidden_size // tc.num_attention_heads
    w.add_key_length(hd)
    w.add_value_length(hd)
    w.add_vocab_size(tc.vocab_size)
    if hasattr(tc, "rms_norm_eps"):
        w.add_layer_norm_rms_eps(tc.rms_norm_eps)
    return hd


def rope(tc, lt=None):
    rp = tc.rope_parameters
    return rp[lt] if lt else (rp["full_attention"] if "full_attention" in rp else rp)


def write(name, arch, fill, top):
    path = os.path.join(OUT, f"config_{name}.gguf")
    w = gguf.GGUFWriter(path, arch)
    fill(w)
    if not top.tie_word_embeddings:
        w.add_tensor("output.weight", np.zeros((2, 4), dtype=np.float32))
    w.add_tensor("token_embd.weight", np.zeros((2, 4), dtype=np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def main():
    made = []

    top, tc = load("llama32_v4")   # llama3 rope → rope_freqs tensor, no scaling keys
    def f(w):
        hd = common(w, tc)
        w.add_rope_dimension_count(hd)
        w.add_rope_freq_base(rope(tc)["rope_theta"])
    write("llama32_v4", "llama", f, top); made.append("llama32_v4")

    for name in ("qwen3_v5", "qwen3_moe_v5"):
        top, tc = load(name)
        arch = "qwen3" if name == "qwen3_v5" else "qwen3moe"
        def f(w, tc=tc, arch=arch):
            common(w, tc)
            w.add_rope_freq_base(rope(tc)["rope_theta"])
            if arch == "qwen3moe":
                w.add_expert_count(tc.num_experts)
                w.add_expert_used_count(tc.num_experts_per_tok)
                w.add_expert_feed_forward_length(tc.moe_intermediate_size)
        write(name, arch, f, top); made.append(name)

    top, tc = load("gemma3_mm_v4")
    def f(w):
        common(w, tc)
        w.add_rope_freq_base(rope(tc, "full_attention")["rope_theta"])
        w.add_rope_freq_base_swa(rope(tc, "sliding_attention")["rope_theta"])
        w.add_sliding_window(tc.sliding_window)
        w.add_rope_scaling_type(gguf.RopeScalingType.LINEAR)
        w.add_rope_scaling_factor(rope(tc, "full_attention")["factor"])
    write("gemma3_mm_v4", "gemma3", f, top); made.append("gemma3_mm_v4")

    top, tc = load("gpt_oss_v4")
    def f(w):
        common(w, tc)
        r = rope(tc)
        w.add_rope_freq_base(r["rope_theta"])
        w.add_sliding_window(tc.sliding_window)
        w.add_expert_count(tc.num_local_experts)
        w.add_expert_used_count(tc.num_experts_per_tok)
        w.add_expert_feed_forward_length(tc.intermediate_size)
        w.add_rope_scaling_type(gguf.RopeScalingType.YARN)
        w.add_rope_scaling_factor(r["factor"])
        w.add_rope_scaling_orig_ctx_len(r["original_max_position_embeddings"])
    write("gpt_oss_v4", "gpt-oss", f, top); made.append("gpt_oss_v4")

    top, tc = load("qwen36_moe_fp8_v4")
    def f(w):
        hd = common(w, tc)
        r = rope(tc)
        w.add_rope_freq_base(r["rope_theta"])
        w.add_rope_dimension_count(int(hd * r["partial_rotary_factor"]))
        w.add_rope_dimension_sections(list(r["mrope_section"]) + [0])
        w.add_expert_count(tc.num_experts)
        w.add_expert_used_count(tc.num_experts_per_tok)
        w.add_expert_feed_forward_length(tc.moe_intermediate_size)
        w.add_expert_shared_feed_forward_length(tc.shared_expert_intermediate_size)
        w.add_ssm_conv_kernel(tc.linear_conv_kernel_dim)
        w.add_ssm_state_size(tc.linear_key_head_dim)
        w.add_ssm_group_count(tc.linear_num_key_heads)
        w.add_ssm_time_step_rank(tc.linear_num_value_heads)
        w.add_ssm_inner_size(tc.linear_value_head_dim * tc.linear_num_value_heads)
        w.add_full_attention_interval(4)
    write("qwen36_moe_fp8_v4", "qwen35moe", f, top); made.append("qwen36_moe_fp8_v4")

    top, tc = load("gemma4_v5")
    def f(w):
        full = [i for i, t in enumerate(tc.layer_types) if t == "full_attention"]
        ghd = tc.per_layer_config[full[0]].head_dim
        gkv = tc.per_layer_config[full[0]].num_key_value_heads
        w.add_context_length(tc.max_position_embeddings)
        w.add_embedding_length(tc.hidden_size)
        w.add_block_count(tc.num_hidden_layers)
        w.add_feed_forward_length(tc.intermediate_size)
        w.add_head_count(tc.num_attention_heads)
        w.add_head_count_kv([gkv if t == "full_attention" else tc.num_key_value_heads for t in tc.layer_types])
        w.add_key_length(ghd)
        w.add_value_length(ghd)
        w.add_key_length_swa(tc.head_dim)
        w.add_value_length_swa(tc.head_dim)
        w.add_layer_norm_rms_eps(tc.rms_norm_eps)
        w.add_sliding_window(tc.sliding_window)
        w.add_sliding_window_pattern([t == "sliding_attention" for t in tc.layer_types])
        w.add_shared_kv_layers(tc.num_kv_shared_layers)
        w.add_rope_freq_base(rope(tc, "full_attention")["rope_theta"])
        w.add_rope_freq_base_swa(rope(tc, "sliding_attention")["rope_theta"])
        w.add_rope_dimension_count(ghd)
        w.add_rope_dimension_count_swa(tc.head_dim)
        w.add_final_logit_softcapping(tc.final_logit_softcapping)
        w.add_expert_count(tc.num_experts)
        w.add_expert_used_count(tc.top_k_experts)
        w.add_expert_feed_forward_length(tc.moe_intermediate_size)
        w.add_embedding_length_per_layer_input(tc.hidden_size_per_layer_input)
        w.add_vocab_size(tc.vocab_size)
    write("gemma4_v5", "gemma4", f, top); made.append("gemma4_v5")

    top, tc = load("granite_v4")
    def f(w):
        common(w, tc)
        w.add_rope_freq_base(rope(tc)["rope_theta"])
        w.add_embedding_scale(tc.embedding_multiplier)
        w.add_attention_scale(tc.attention_multiplier)
        w.add_residual_scale(tc.residual_multiplier)
        w.add_logit_scale(tc.logits_scaling)
    write("granite_v4", "granite", f, top); made.append("granite_v4")

    top, tc = load("roberta_granite_embedding_v4")
    def f(w):
        w.add_context_length(tc.max_position_embeddings - tc.pad_token_id - 1)
        w.add_embedding_length(tc.hidden_size)
        w.add_block_count(tc.num_hidden_layers)
        w.add_feed_forward_length(tc.intermediate_size)
        w.add_head_count(tc.num_attention_heads)
        w.add_layer_norm_eps(tc.layer_norm_eps)
        w.add_causal_attention(False)
        w.add_pooling_type(gguf.PoolingType.CLS)
        w.add_vocab_size(tc.vocab_size)
    write("roberta_granite_embedding_v4", "bert", f, top); made.append("roberta_granite_embedding_v4")

    top, tc = load("ministral3_v5")   # mistral3: yarn keys + attention temperature (llama_4_scaling_beta)
    def f(w):
        hd = common(w, tc)
        r = rope(tc)
        w.add_rope_dimension_count(hd)
        w.add_rope_freq_base(r["rope_theta"])
        w.add_rope_scaling_type(gguf.RopeScalingType.YARN)
        w.add_rope_scaling_factor(r["factor"])
        w.add_rope_scaling_orig_ctx_len(r["original_max_position_embeddings"])
        w.add_rope_scaling_yarn_beta_fast(r["beta_fast"])
        w.add_rope_scaling_yarn_beta_slow(r["beta_slow"])
        w.add_rope_scaling_yarn_log_mul(r["mscale_all_dim"])
        w.add_attn_temperature_scale(r["llama_4_scaling_beta"])
    write("ministral3_v5", "mistral3", f, top); made.append("ministral3_v5")

    top, tc = load("phi3_v5")   # longrope: factor tensors + attn_factor key, no scaling type
    def f(w):
        hd = common(w, tc)
        r = rope(tc)
        w.add_rope_dimension_count(int(r["partial_rotary_factor"] * tc.hidden_size) // tc.num_attention_heads)
        w.add_rope_freq_base(r["rope_theta"])
        w.add_rope_scaling_orig_ctx_len(r["original_max_position_embeddings"])
        w.add_rope_scaling_attn_factors(1.0)
        w.add_tensor("rope_factors_long.weight", np.array(r["long_factor"], dtype=np.float32))
        w.add_tensor("rope_factors_short.weight", np.array(r["short_factor"], dtype=np.float32))
    write("phi3_v5", "phi3", f, top); made.append("phi3_v5")

    print("wrote", made)


if __name__ == "__main__":
    sys.exit(main())
