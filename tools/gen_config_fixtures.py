#!/usr/bin/env python3
"""Writes HF config.json fixtures (tests/data/configs/<name>.json) for every family, and
expected.json: what transformers' own config classes make of each file (the oracle for
tests/loader/model_config_test.cc). Two kinds of fixture:
  * v5: written by transformers Config classes (small dims) with to_json_string(use_diff=True),
    i.e. what save_pretrained writes today;
  * v4: hand-written in the older layout real checkpoints still ship (rope_theta + rope_scaling,
    rope_local_base_freq, sliding_window_pattern, "type": "su"/"yarn"...), read back through
    transformers v5, which standardizes them the same way our loader must.
Run from the repository root:  /work/venv/bin/python tools/gen_config_fixtures.py
"""
import json
import os
import sys

import transformers as T
from transformers import AutoConfig

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "configs")

FAMILY = {"llama": "llama", "mistral": "mistral", "ministral3": "ministral3", "qwen2": "qwen2",
          "qwen3": "qwen3", "qwen3_moe": "qwen3_moe", "qwen3_5_text": "qwen3_5",
          "qwen3_5_moe_text": "qwen3_5_moe", "gemma": "gemma", "gemma2": "gemma2",
          "gemma3_text": "gemma3", "gemma4_text": "gemma4", "phi3": "phi3", "granite": "granite",
          "olmoe": "olmoe", "gpt_oss": "gpt_oss", "bert": "bert", "roberta": "bert"}

SMALL = dict(vocab_size=512, hidden_size=64, intermediate_size=128, num_hidden_layers=4,
             num_attention_heads=4, num_key_value_heads=2)


def v5(cfg, arch):
    d = json.loads(cfg.to_json_string(use_diff=True))
    for k in ("transformers_version", "id2label", "label2id"):
        d.pop(k, None)
    d["architectures"] = [arch]
    return d


def fixtures():
    f = {}
    # ---- v5, written by the config classes --------------------------------------------------
    f["llama3_v5"] = v5(T.LlamaConfig(**SMALL, head_dim=16, max_position_embeddings=131072, tie_word_embeddings=True, rope_parameters={
        "rope_type": "llama3", "rope_theta": 500000.0, "factor": 32.0, "low_freq_factor": 1.0,
        "high_freq_factor": 4.0, "original_max_position_embeddings": 8192}), "LlamaForCausalLM")
    f["qwen3_v5"] = v5(T.Qwen3Config(**SMALL, head_dim=32, tie_word_embeddings=True,
                                     rope_parameters={"rope_type": "default", "rope_theta": 1e6}),
                       "Qwen3ForCausalLM")
    f["qwen3_moe_v5"] = v5(T.Qwen3MoeConfig(**SMALL, head_dim=16, num_experts=8, num_experts_per_tok=2,
                                            moe_intermediate_size=32, norm_topk_prob=True,
                                            decoder_sparse_step=1, mlp_only_layers=[0]),
                           "Qwen3MoeForCausalLM")
    f["qwen3_5_v5"] = v5(T.Qwen3_5Config(text_config=dict(
        **SMALL, head_dim=32, linear_conv_kernel_dim=4, linear_key_head_dim=16, linear_value_head_dim=16,
        linear_num_key_heads=2, linear_num_value_heads=4,
        rope_parameters={"rope_type": "default", "rope_theta": 1e7, "partial_rotary_factor": 0.25,
                         "mrope_section": [11, 11, 10], "mrope_interleaved": True})),
        "Qwen3_5ForConditionalGeneration")
    small_moe = {k: v for k, v in SMALL.items() if k != "intermediate_size"}
    f["qwen3_5_moe_v5"] = v5(T.Qwen3_5MoeConfig(text_config=dict(
        **small_moe, head_dim=32, linear_conv_kernel_dim=4, linear_key_head_dim=16, linear_value_head_dim=16,
        linear_num_key_heads=2, linear_num_value_heads=4, num_experts=8, num_experts_per_tok=2,
        moe_intermediate_size=32, shared_expert_intermediate_size=32)),
        "Qwen3_5MoeForConditionalGeneration")
    f["gemma3_text_v5"] = v5(T.Gemma3TextConfig(**dict(SMALL, num_hidden_layers=7), head_dim=32,
                                                sliding_window=512, query_pre_attn_scalar=32),
                             "Gemma3ForCausalLM")
    f["gemma4_v5"] = v5(T.Gemma4Config(text_config=dict(
        **dict(SMALL, num_hidden_layers=6), head_dim=16, global_head_dim=32, num_global_key_value_heads=1,
        attention_k_eq_v=True, sliding_window=128, final_logit_softcapping=30.0,
        hidden_size_per_layer_input=8, num_kv_shared_layers=2, enable_moe_block=True, num_experts=4,
        top_k_experts=2, moe_intermediate_size=16)), "Gemma4ForConditionalGeneration")
    f["ministral3_v5"] = v5(T.Mistral3Config(text_config=T.Ministral3Config(**SMALL, head_dim=16)),
                            "Mistral3ForConditionalGeneration")
    f["gpt_oss_v5"] = v5(T.GptOssConfig(**SMALL, head_dim=16, num_local_experts=4, num_experts_per_tok=2),
                         "GptOssForCausalLM")
    f["granite_v5"] = v5(T.GraniteConfig(**SMALL, embedding_multiplier=12.0, attention_multiplier=0.015625,
                                         residual_multiplier=0.22, logits_scaling=8.0, tie_word_embeddings=True),
                         "GraniteForCausalLM")
    f["olmoe_v5"] = v5(T.OlmoeConfig(**SMALL, num_experts=8, num_experts_per_tok=2, clip_qkv=8.0),
                       "OlmoeForCausalLM")
    f["phi3_v5"] = v5(T.Phi3Config(**dict(SMALL, num_key_value_heads=4), partial_rotary_factor=0.75,
                                   max_position_embeddings=131072, original_max_position_embeddings=4096,
                                   rope_parameters={"rope_type": "longrope", "rope_theta": 10000.0,
                                                    "short_factor": [1.0] * 6, "long_factor": [2.0, 3.0] * 3,
                                                    "partial_rotary_factor": 0.75}),
                      "Phi3ForCausalLM")
    f["bert_v5"] = v5(T.BertConfig(vocab_size=512, hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                                   intermediate_size=128), "BertModel")
    # ---- v4 layouts, hand-written like real checkpoints ---------------------------------------
    f["llama32_v4"] = {
        "architectures": ["LlamaForCausalLM"], "model_type": "llama", "attention_bias": False,
        "bos_token_id": 128000, "eos_token_id": [128001, 128008, 128009], "head_dim": 64,
        "hidden_act": "silu", "hidden_size": 2048, "initializer_range": 0.02, "intermediate_size": 8192,
        "max_position_embeddings": 131072, "mlp_bias": False, "num_attention_heads": 32,
        "num_hidden_layers": 16, "num_key_value_heads": 8, "pretraining_tp": 1, "rms_norm_eps": 1e-05,
        "rope_scaling": {"factor": 32.0, "high_freq_factor": 4.0, "low_freq_factor": 1.0,
                         "original_max_position_embeddings": 8192, "rope_type": "llama3"},
        "rope_theta": 500000.0, "tie_word_embeddings": True, "torch_dtype": "bfloat16",
        "use_cache": True, "vocab_size": 128256}
    f["mistral7b_v4"] = {
        "architectures": ["MistralForCausalLM"], "model_type": "mistral", "bos_token_id": 1,
        "eos_token_id": 2, "hidden_act": "silu", "hidden_size": 4096, "intermediate_size": 14336,
        "max_position_embeddings": 32768, "num_attention_heads": 32, "num_hidden_layers": 32,
        "num_key_value_heads": 8, "rms_norm_eps": 1e-05, "rope_theta": 10000.0, "sliding_window": 4096,
        "tie_word_embeddings": False, "torch_dtype": "bfloat16", "vocab_size": 32000}
    f["qwen25_yarn_v4"] = {
        "architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2", "attention_dropout": 0.0,
        "bos_token_id": 151643, "eos_token_id": 151645, "hidden_act": "silu", "hidden_size": 896,
        "intermediate_size": 4864, "max_position_embeddings": 32768, "max_window_layers": 21,
        "num_attention_heads": 14, "num_hidden_layers": 24, "num_key_value_heads": 2,
        "rms_norm_eps": 1e-06, "rope_theta": 1000000.0, "sliding_window": 32768,
        "rope_scaling": {"type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768},
        "tie_word_embeddings": True, "torch_dtype": "bfloat16", "use_sliding_window": False,
        "vocab_size": 151936}
    f["gemma2_v4"] = {
        "architectures": ["Gemma2ForCausalLM"], "model_type": "gemma2", "attn_logit_softcapping": 50.0,
        "bos_token_id": 2, "eos_token_id": [1, 107], "final_logit_softcapping": 30.0, "head_dim": 256,
        "hidden_act": "gelu_pytorch_tanh", "hidden_activation": "gelu_pytorch_tanh", "hidden_size": 2304,
        "intermediate_size": 9216, "max_position_embeddings": 8192, "num_attention_heads": 8,
        "num_hidden_layers": 26, "num_key_value_heads": 4, "pad_token_id": 0,
        "query_pre_attn_scalar": 256, "rms_norm_eps": 1e-06, "rope_theta": 10000.0,
        "sliding_window": 4096, "torch_dtype": "float32", "vocab_size": 256000}
    f["gemma3_mm_v4"] = {
        "architectures": ["Gemma3ForConditionalGeneration"], "model_type": "gemma3",
        "boi_token_index": 255999, "eoi_token_index": 256000, "image_token_index": 262144,
        "mm_tokens_per_image": 256,
        "text_config": {"model_type": "gemma3_text", "head_dim": 256, "hidden_size": 2560,
                        "intermediate_size": 10240, "num_attention_heads": 8, "num_hidden_layers": 34,
                        "num_key_value_heads": 4, "query_pre_attn_scalar": 256, "rms_norm_eps": 1e-06,
                        "rope_local_base_freq": 10000.0, "rope_theta": 1000000.0,
                        "rope_scaling": {"factor": 8.0, "rope_type": "linear"}, "sliding_window": 1024,
                        "sliding_window_pattern": 6, "vocab_size": 262208,
                        "final_logit_softcapping": None, "attn_logit_softcapping": None},
        "torch_dtype": "bfloat16",
        "vision_config": {"model_type": "siglip_vision_model", "hidden_size": 1152, "image_size": 896,
                          "intermediate_size": 4304, "num_attention_heads": 16, "num_hidden_layers": 27,
                          "patch_size": 14, "vision_use_head": False}}
    f["phi3_mini_128k_v4"] = {
        "architectures": ["Phi3ForCausalLM"], "model_type": "phi3", "bos_token_id": 1, "eos_token_id": 32000,
        "hidden_act": "silu", "hidden_size": 3072, "intermediate_size": 8192,
        "max_position_embeddings": 131072, "num_attention_heads": 32, "num_hidden_layers": 32,
        "num_key_value_heads": 32, "original_max_position_embeddings": 4096, "pad_token_id": 32000,
        "rms_norm_eps": 1e-05, "rope_theta": 10000.0, "sliding_window": 262144,
        "rope_scaling": {"type": "longrope", "short_factor": [1.0 + i / 100 for i in range(48)],
                         "long_factor": [1.5 + i / 10 for i in range(48)]},
        "tie_word_embeddings": False, "torch_dtype": "bfloat16", "vocab_size": 32064}
    f["granite_v4"] = {
        "architectures": ["GraniteForCausalLM"], "model_type": "granite", "attention_bias": False,
        "attention_multiplier": 0.0078125, "bos_token_id": 0, "embedding_multiplier": 12.0, "eos_token_id": 0,
        "hidden_act": "silu", "hidden_size": 2048, "intermediate_size": 8192, "logits_scaling": 8.0,
        "max_position_embeddings": 131072, "num_attention_heads": 32, "num_hidden_layers": 40,
        "num_key_value_heads": 8, "pad_token_id": 0, "residual_multiplier": 0.22, "rms_norm_eps": 1e-05,
        "rope_theta": 10000000.0, "tie_word_embeddings": True, "vocab_size": 49155}
    f["gpt_oss_v4"] = {
        "architectures": ["GptOssForCausalLM"], "model_type": "gpt_oss", "attention_bias": True,
        "eos_token_id": 200002, "head_dim": 64, "hidden_act": "silu", "hidden_size": 2880,
        "intermediate_size": 2880, "layer_types": ["sliding_attention", "full_attention"] * 12,
        "max_position_embeddings": 131072, "num_attention_heads": 64, "num_experts_per_tok": 4,
        "num_hidden_layers": 24, "num_key_value_heads": 8, "num_local_experts": 32, "pad_token_id": 199999,
        "rms_norm_eps": 1e-05, "rope_scaling": {"beta_fast": 32.0, "beta_slow": 1.0, "factor": 32.0,
                                                "original_max_position_embeddings": 4096, "rope_type": "yarn",
                                                "truncate": False},
        "rope_theta": 150000, "sliding_window": 128, "swiglu_limit": 7.0, "tie_word_embeddings": False,
        "vocab_size": 201088,
        "quantization_config": {"modules_to_not_convert": ["model.layers.*.self_attn", "model.layers.*.mlp.router",
                                                           "model.embed_tokens", "lm_head"],
                                "quant_method": "mxfp4"}}
    f["qwen36_moe_fp8_v4"] = {
        "architectures": ["Qwen3_5MoeForConditionalGeneration"], "model_type": "qwen3_5_moe",
        "image_token_id": 248056,
        "quantization_config": {"activation_scheme": "dynamic", "fmt": "e4m3", "quant_method": "fp8",
                                "weight_block_size": [128, 128],
                                "modules_to_not_convert": ["lm_head", "model.visual.blocks.0.attn"]},
        "text_config": {"model_type": "qwen3_5_moe_text", "hidden_size": 2048, "num_hidden_layers": 40,
                        "num_attention_heads": 16, "num_key_value_heads": 2, "head_dim": 256,
                        "vocab_size": 248320, "num_experts": 256, "num_experts_per_tok": 8,
                        "moe_intermediate_size": 512, "shared_expert_intermediate_size": 512,
                        "linear_conv_kernel_dim": 4, "linear_key_head_dim": 128, "linear_value_head_dim": 128,
                        "linear_num_key_heads": 16, "linear_num_value_heads": 32, "full_attention_interval": 4,
                        "max_position_embeddings": 262144, "rms_norm_eps": 1e-06,
                        "rope_parameters": {"rope_type": "default", "rope_theta": 10000000,
                                            "partial_rotary_factor": 0.25, "mrope_section": [11, 11, 10],
                                            "mrope_interleaved": True},
                        "eos_token_id": 248044, "dtype": "bfloat16"},
        "tie_word_embeddings": False}
    f["roberta_granite_embedding_v4"] = {
        "architectures": ["RobertaModel"], "model_type": "roberta", "attention_probs_dropout_prob": 0.1,
        "bos_token_id": 0, "eos_token_id": 2, "hidden_act": "gelu", "hidden_size": 768,
        "intermediate_size": 3072, "layer_norm_eps": 1e-05, "max_position_embeddings": 514,
        "num_attention_heads": 12, "num_hidden_layers": 12, "pad_token_id": 1,
        "position_embedding_type": "absolute", "type_vocab_size": 1, "vocab_size": 50265}
    return f


def rope_dict(r):
    r = dict(r or {})
    out = {"rope_type": r.get("rope_type", r.get("type", "default")), "rope_theta": float(r["rope_theta"]),
           "factor": float(r.get("factor", 1.0)),
           "partial_rotary_factor": float(r.get("partial_rotary_factor", 1.0))}
    for k in ("original_max_position_embeddings", "low_freq_factor", "high_freq_factor", "beta_fast",
              "beta_slow", "attention_factor", "mscale", "mscale_all_dim", "truncate", "short_factor",
              "long_factor", "mrope_section", "mrope_interleaved", "llama_4_scaling_beta"):
        if r.get(k) is not None:
            out[k] = r[k]
    return out


def expected(d):
    top = AutoConfig.for_model(**d) if False else T.CONFIG_MAPPING[d["model_type"]].from_dict(d)
    tc = top.get_text_config()
    if tc.model_type == "gemma4_text":
        tc.allow_global_per_layer_attribute_access = True
    e = {"architecture": d["architectures"][0], "model_type": tc.model_type, "family": FAMILY[tc.model_type]}
    for k in ("vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads",
              "max_position_embeddings", "sliding_window", "query_pre_attn_scalar",
              "attn_logit_softcapping", "final_logit_softcapping", "clip_qkv", "norm_topk_prob",
              "linear_conv_kernel_dim", "linear_key_head_dim", "linear_value_head_dim",
              "linear_num_key_heads", "linear_num_value_heads", "shared_expert_intermediate_size",
              "hidden_size_per_layer_input", "num_kv_shared_layers", "enable_moe_block", "attention_k_eq_v",
              "embedding_multiplier", "attention_multiplier", "residual_multiplier", "logits_scaling",
              "swiglu_limit", "decoder_sparse_step", "mlp_only_layers", "type_vocab_size", "layer_norm_eps"):
        if hasattr(tc, k):
            e[k] = getattr(tc, k)
    e["intermediate_size"] = getattr(tc, "intermediate_size", None) or 0
    e["num_key_value_heads"] = getattr(tc, "num_key_value_heads", None) or tc.num_attention_heads
    e["head_dim"] = getattr(tc, "head_dim", None) or tc.hidden_size // tc.num_attention_heads
    if hasattr(tc, "rms_norm_eps"):
        e["rms_norm_eps"] = tc.rms_norm_eps
    e["hidden_act"] = getattr(tc, "hidden_activation", None) or tc.hidden_act
    e["tie_word_embeddings"] = bool(top.tie_word_embeddings)
    e["num_experts"] = getattr(tc, "num_experts", None) or getattr(tc, "num_local_experts", None) or 0
    e["num_experts_per_tok"] = getattr(tc, "num_experts_per_tok", None) or getattr(tc, "top_k_experts", None) or 0
    e["moe_intermediate_size"] = getattr(tc, "moe_intermediate_size", None) or 0
    if tc.model_type in ("olmoe", "gpt_oss"):
        e["moe_intermediate_size"] = tc.intermediate_size
    if hasattr(tc, "layer_types") and tc.layer_types is not None:
        e["layer_types"] = list(tc.layer_types)
    else:
        # No layer_types attribute (Mistral, Phi-3, ...): the modeling code passes
        # config.sliding_window to every layer's attention.
        sw = getattr(tc, "sliding_window", None)
        e["layer_types"] = ["sliding_attention" if sw else "full_attention"] * tc.num_hidden_layers
    if tc.model_type == "gemma4_text":
        full = [i for i, t in enumerate(tc.layer_types) if t == "full_attention"][0]
        lc = tc.per_layer_config[full]
        e["global_head_dim"] = lc.head_dim
        e["num_global_key_value_heads"] = lc.num_key_value_heads
    rp = getattr(tc, "rope_parameters", None)
    if rp is not None:
        if "full_attention" in rp or "sliding_attention" in rp:
            e["rope"] = {lt: rope_dict(rp.get(lt)) for lt in ("full_attention", "sliding_attention")}
        else:
            e["rope"] = {lt: rope_dict(rp) for lt in ("full_attention", "sliding_attention")}
    q = d.get("quantization_config") or d.get("text_config", {}).get("quantization_config")
    if q:
        e["quantization_config"] = q
    eos = tc.eos_token_id
    e["eos_token_id"] = [] if eos is None else (eos if isinstance(eos, list) else [eos])
    return e


def main():
    os.makedirs(OUT, exist_ok=True)
    exp = {}
    for name, d in fixtures().items():
        with open(os.path.join(OUT, name + ".json"), "w") as f:
            json.dump(d, f, indent=2)
        exp[name] = expected(json.loads(json.dumps(d)))
    with open(os.path.join(OUT, "expected.json"), "w") as f:
        json.dump({"generator": "tools/gen_config_fixtures.py", "transformers": T.__version__,
                   "configs": exp}, f, indent=1)
    print("wrote", len(exp), "configs to", OUT)


if __name__ == "__main__":
    sys.exit(main())
