#!/usr/bin/env python3
"""Tiny random-weight models of every issue-5 family, built in transformers, plus goldens and GGUFs.

Command (from the repository root; needs torch (CPU is enough) and the llama.cpp copy inside the PyPI
sdist of llama-cpp-python 0.3.36, unpacked somewhere, e.g.
`pip download --no-deps --no-binary :all: llama-cpp-python==0.3.36 && tar xzf llama_cpp_python-0.3.36.tar.gz`):

    /work/venv/bin/python tools/gen_tiny_models.py --llama-cpp /tmp/llama_cpp_python-0.3.36/vendor/llama.cpp
    # or only some families, e.g. the MoE ones:  ... --only qwen3_moe olmoe qwen3_moe_mixed

Writes tests/data/archs/<family>/ for each family (deterministic, seeded):
  config.json, generation_config.json, model.safetensors (F32), tokenizer.json, tokenizer_config.json
  model-F32.gguf (llama only: size), model-F16.gguf, model-Q8_0.gguf
                                                     llama.cpp's convert_hf_to_gguf.py (--outtype f32/f16/q8_0)
  model-Q4_K.gguf or model-Q4_0.gguf                 the same converter, with 2-D weights forced to Q4_K
                                                     (Q6_K for token_embd) where a row is a multiple of 256,
                                                     Q4_0 otherwise; K-quant bytes from ggml's own C encoder
  logits.bin    f32, per prompt [len, vocab] for every prompt position, prompts back to back
  goldens.json  prompts (token ids), greedy tokens, and per GGUF format: tensor types, the oracle's
                last-position logits of the same model with every weight replaced by dequant(quant(w))
                (`quant_logits.bin`), its greedy tokens, and its KL divergence from the F32 reference.
Oracle: transformers (eager attention) in float64 on the F32 weights. Greedy decoding recomputes the whole
sequence every step (no KV cache), so sliding windows, longrope factors etc. are those of the full forward.
Tokenizers: a byte-level BPE trained with Hugging Face `tokenizers` on a few KB of text, padded with added
tokens to exactly vocab_size (the tests feed token ids; the tokenizer is there so the converter and a
loader see a real-format file). The GGUF tokenizer metadata uses pre-tokenizer "default".
Exceptions: mistral has no GGUFs (llama.cpp's `llama` arch drops its sliding window); llama_tok uses the
real Llama 2 vocabulary from tests/data/tokenizers/llama2 (not copied beside the model), F16 weights, logits of the last position
only, and only F16 and Q8_0 GGUFs, converted with that real tokenizer (the converter's own vocab path;
quant_logits.bin: last position only). qwen3_bf16 is a BF16 checkpoint (oracle: float64 on the
bf16 weights; goldens.json also gives the same oracle with every linear input rounded to bf16, the
legitimate error of a bf16-activation engine) and has no GGUFs. Only qwen3 (hidden 256) gets a K-quant
file; hidden-128 models use Q4_0.
Mixture of experts (qwen3_moe, olmoe, qwen3_moe_mixed): transformers' eager per-expert loop; router
weights drawn ROUTER_SCALE x wider so that top-k choices are far from ties; goldens.json records
router_margin_min (the smallest k-th minus (k+1)-th router logit over every MoE layer, prompt position and
greedy step, for the F32 oracle and for each quantized-weights oracle). Expert tensors are rounded per row
like every weight (3-D [E, rows, cols] stacks); routers (ffn_gate_inp) stay F32 as llama.cpp keeps them.
qwen3_moe_mixed has dense and MoE layers (decoder_sparse_step, mlp_only_layers) and no GGUFs: llama.cpp's
qwen3moe cannot hold a dense layer. olmoe_clip (clip_qkv) and qwen3_moe_bf16 (BF16, sharpened as qwen3_bf16)
have no GGUFs either.
gpt_oss (GptOssForCausalLM): attention sinks, alternating sliding (window 8, shorter than every prompt)
and full layers, YaRN (factor 32 over 4096, truncate false), q/k/v/o biases, router with bias, top-2 of 4
experts with biases and clamped SwiGLU; its experts are input-major ([E, in, out], gate/up interleaved),
rounded for the quantized oracles along the GGUF rows (roundtrip_gpt_oss). GGUFs: F16, Q8_0, and MXFP4
(experts MXFP4 via the converter's type hook, everything else Q8_0, as gpt-oss GGUFs are).
gpt_oss_mxfp4: the same architecture with its experts snapped to MXFP4 and saved the way the released
gpt-oss checkpoints are (`*_blocks` / `*_scales`, quantization_config mxfp4; checked to read back
exactly through transformers' convert_moe_packed_tensors); HF only, the oracle runs on those weights.
ministral3 is the multimodal wrapper Mistral3ForConditionalGeneration (text weights saved under
language_model.model., a 1-layer Pixtral tower beside them; the oracle is the wrapper fed token ids);
its GGUFs come from the converter's mistral3 arch. qwen3_5 (Qwen3_5ForCausalLM: 3 Gated DeltaNet
layers + 1 gated full-attention layer): GGUFs from the converter's qwen35 arch (--no-mtp); its value heads
are reordered (grouped by key head -> tiled), so out_proj is rounded in the GGUF's column order
(roundtrip_v_tiled_cols); ssm_conv1d stays F32 in the Q4_0 file as llama.cpp keeps it.
gemma4 (Gemma4ForCausalLM, E2B-like): per-layer input embeddings, layers 4-5 sharing the K/V of layers 2
(sliding) and 3 (full) with double-wide MLPs, full layers with head_dim 64 and proportional RoPE, window 8,
final softcap 30, learned layer scalars; gemma4_bf16 is the same as a sharpened BF16 checkpoint;
gemma4_moe is the multimodal wrapper Gemma4ForConditionalGeneration (a 1-layer vision tower beside the text
model) with an MoE block (top-2 of 4, router scale, per-expert scales) beside every dense MLP and
attention_k_eq_v full layers. gemma4 gets F16 and Q8_0 GGUFs from the converter's gemma4 arch (no 4-bit
file); gemma4_moe none yet (tests/data/archs/README.md: how it was checked).
gpt_oss_bf16: gpt_oss as a sharpened BF16 checkpoint, HF only. gpt_oss_q4k: gpt_oss with hidden and
expert width 256, so its F16, Q8_0 and Q4_K GGUFs put the experts in Q4_K rows (forced as for qwen3).
qwen3_5_moe (Qwen3_5MoeForCausalLM): the qwen3_5 layer mix with an MoE block on every layer (top-2 of 8
experts, width 32, saved per expert) and a shared expert (width 64)
behind its sigmoid gate; GGUFs from the converter's qwen35moe arch (--no-mtp). qwen3_5_moe_bf16: the same
architecture as a sharpened BF16 checkpoint, no GGUFs. qwen3_5_bf16, ministral3_bf16: qwen3_5 and
ministral3 as sharpened BF16 checkpoints, no GGUFs (last in the table: a family's seed is its position).
Only the families named by --only are written (the others' folders are left as they are).
KL numbers in goldens.json (kl_to_f32_mean / _max, over every prompt position) are what a correct engine
should reproduce on each GGUF up to its own activation rounding; tests/archs bounds ours by 3x that.
Nothing from the sdist is committed.
"""
from __future__ import annotations

import argparse
import json
import math
import pathlib
import shutil
import struct
import sys

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parent.parent
TESTS = ROOT / "tests"
OUT = ROOT / "tests" / "data" / "archs"
PROMPT_LENS = [20, 33, 40]
NUM_GREEDY = 32
NUM_QUANT_GREEDY = 16
QUANT_LAST_POSITIONS = 4

TEXT = """The quick brown fox jumps over the lazy dog. A model reads tokens, one after another, and
predicts what comes next. Attention looks back over the keys and values of earlier positions; a sliding
window keeps only the most recent ones. Rotary position embeddings turn each pair of dimensions by an
angle that grows with the position. Norms keep activations in range, and the feed-forward block mixes
features with a gated activation. Quantized weights store small integers with a scale per block of 32
or 256 values. """ * 6


def family_configs():
    """family -> (config class name, kwargs). Sizes keep every model near or below 2 MB in F32."""
    V = 320
    base = dict(vocab_size=V, max_position_embeddings=128, rms_norm_eps=1e-6, bos_token_id=1,
                eos_token_id=2, pad_token_id=0)
    fams = {
        "llama": ("LlamaConfig", dict(base, hidden_size=128, intermediate_size=128, num_hidden_layers=2,
                  num_attention_heads=2, num_key_value_heads=1, head_dim=64, tie_word_embeddings=False,
                  rope_parameters=dict(rope_type="llama3", rope_theta=10000.0, factor=8.0,
                                       low_freq_factor=1.0, high_freq_factor=4.0,
                                       original_max_position_embeddings=32))),
        "mistral": ("MistralConfig", dict(base, hidden_size=128, intermediate_size=128, num_hidden_layers=2,
                    num_attention_heads=2, num_key_value_heads=1, head_dim=64, sliding_window=8,
                    tie_word_embeddings=False, rope_parameters=dict(rope_type="default", rope_theta=10000.0))),
        "qwen2": ("Qwen2Config", dict(base, hidden_size=128, intermediate_size=128, num_hidden_layers=2,
                  num_attention_heads=2, num_key_value_heads=1, tie_word_embeddings=True,
                  rope_parameters=dict(rope_type="default", rope_theta=1000000.0))),
        "qwen3": ("Qwen3Config", dict(base, hidden_size=256, intermediate_size=256, num_hidden_layers=2,
                  num_attention_heads=2, num_key_value_heads=1, head_dim=64, tie_word_embeddings=True,
                  rope_parameters=dict(rope_type="default", rope_theta=1000000.0))),
        "gemma": ("GemmaConfig", dict(base, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                  num_attention_heads=1, num_key_value_heads=1, head_dim=256,
                  hidden_activation="gelu_pytorch_tanh", tie_word_embeddings=True,
                  rope_parameters=dict(rope_type="default", rope_theta=10000.0))),
        "gemma2": ("Gemma2Config", dict(base, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                   num_attention_heads=2, num_key_value_heads=1, head_dim=128, query_pre_attn_scalar=128,  # llama.cpp: 1/sqrt(head_dim) unless 27B
                  
                   attn_logit_softcapping=5.0, final_logit_softcapping=10.0, sliding_window=8,
                   hidden_activation="gelu_pytorch_tanh", tie_word_embeddings=True,
                   rope_parameters=dict(rope_type="default", rope_theta=10000.0))),
        # 6 layers so the 5:1 local/global pattern llama.cpp assumes for gemma3 GGUFs holds here too.
        "gemma3": ("Gemma3TextConfig", dict(base, hidden_size=64, intermediate_size=64, num_hidden_layers=6,
                   num_attention_heads=2, num_key_value_heads=1, head_dim=128, query_pre_attn_scalar=128,
                   sliding_window=8, hidden_activation="gelu_pytorch_tanh", tie_word_embeddings=True,
                   layer_types=["sliding_attention"] * 5 + ["full_attention"],
                   rope_parameters={"full_attention": dict(rope_type="default", rope_theta=1000000.0),
                                    "sliding_attention": dict(rope_type="default", rope_theta=10000.0)})),
        # All prompts are longer than original_max_position_embeddings (16), so HF and llama.cpp both
        # use the long factors (HF by current length, llama.cpp by context size).
        "phi3": ("Phi3Config", dict(base, hidden_size=128, intermediate_size=128, num_hidden_layers=2,
                 num_attention_heads=2, num_key_value_heads=1, tie_word_embeddings=False,
                 sliding_window=None, original_max_position_embeddings=16,
                 rope_parameters=dict(rope_type="longrope", rope_theta=10000.0,
                                      short_factor=[1.0 + 0.05 * i for i in range(32)],
                                      long_factor=[1.0 + 0.5 * i for i in range(32)],
                                      original_max_position_embeddings=16))),
        "granite": ("GraniteConfig", dict(base, hidden_size=128, intermediate_size=128, num_hidden_layers=2,
                    num_attention_heads=2, num_key_value_heads=1, tie_word_embeddings=True,
                    embedding_multiplier=2.0, attention_multiplier=0.1, residual_multiplier=1.5,
                    logits_scaling=4.0, rope_parameters=dict(rope_type="default", rope_theta=10000.0))),
        # The real Llama 2 vocabulary (32000, tests/data/tokenizers/llama2): tiny hidden size and F16
        # weights keep it near 2 MB; prompts are real text tokenized by HF tokenizers. No GGUFs (size).
        "llama_tok": ("LlamaConfig", dict(base, vocab_size=32000, hidden_size=32, intermediate_size=64,
                      num_hidden_layers=2, num_attention_heads=1, num_key_value_heads=1, head_dim=64,
                      tie_word_embeddings=True, rope_parameters=dict(rope_type="default", rope_theta=10000.0))),
        # BF16 safetensors (the dtype transformers checkpoints usually ship in); Qwen3 layout.
        "qwen3_bf16": ("Qwen3Config", dict(base, hidden_size=128, intermediate_size=256, num_hidden_layers=2,
                       num_attention_heads=2, num_key_value_heads=1, head_dim=64, tie_word_embeddings=False,
                       rope_parameters=dict(rope_type="default", rope_theta=1000000.0))),
        # Mixture of experts (issue 23). Hidden 256 for K-quant rows; every layer MoE, as llama.cpp's
        # qwen3moe requires (its converter cannot map a dense layer's MLP). llama.cpp renormalizes
        # qwen3moe top-k weights: norm_topk_prob=True.
        "qwen3_moe": ("Qwen3MoeConfig", dict(base, hidden_size=256, intermediate_size=128, num_hidden_layers=2,
                      num_attention_heads=2, num_key_value_heads=1, head_dim=64, tie_word_embeddings=True,
                      num_experts=8, num_experts_per_tok=2, moe_intermediate_size=32, norm_topk_prob=True,
                      rope_parameters=dict(rope_type="default", rope_theta=1000000.0))),
        # Full-width q/k norms; top-4 of 8 without renormalisation. rms_norm_eps 1e-5: llama.cpp's
        # olmoe converter writes 1e-5 whatever the config says. No GQA: llama.cpp's olmoe sizes
        # attn_k_norm by n_embd (as OLMoE-1B-7B, 16 KV heads of 16).
        "olmoe": ("OlmoeConfig", dict(base, hidden_size=128, intermediate_size=32, num_hidden_layers=2,
                  num_attention_heads=2, num_key_value_heads=2, tie_word_embeddings=False, rms_norm_eps=1e-5,
                  num_experts=8, num_experts_per_tok=4, norm_topk_prob=False, clip_qkv=None,
                  rope_parameters=dict(rope_type="default", rope_theta=10000.0))),
        # Dense and MoE layers mixed by transformers' rule: decoder_sparse_step=2 makes layers 1 and 3
        # MoE, mlp_only_layers=[3] makes 3 dense again. HF only (no GGUF: see qwen3_moe).
        "qwen3_moe_mixed": ("Qwen3MoeConfig", dict(base, hidden_size=128, intermediate_size=128, num_hidden_layers=4,
                            num_attention_heads=2, num_key_value_heads=1, head_dim=64, tie_word_embeddings=False,
                            num_experts=8, num_experts_per_tok=2, moe_intermediate_size=64, norm_topk_prob=False,
                            decoder_sparse_step=2, mlp_only_layers=[3],
                            rope_parameters=dict(rope_type="default", rope_theta=1000000.0))),
        # OLMoE's clip_qkv: q, k, v clamped to ±1 after the q/k norms (about a third of the values).
        # HF only: llama.cpp's olmoe has no clamp and its converter drops the key.
        "olmoe_clip": ("OlmoeConfig", dict(base, hidden_size=64, intermediate_size=32, num_hidden_layers=2,
                       num_attention_heads=2, num_key_value_heads=2, tie_word_embeddings=False, rms_norm_eps=1e-5,
                       num_experts=4, num_experts_per_tok=2, norm_topk_prob=False, clip_qkv=1.0,
                       rope_parameters=dict(rope_type="default", rope_theta=10000.0))),
        # BF16 safetensors of an MoE model (sharpened like qwen3_bf16). HF only.
        "qwen3_moe_bf16": ("Qwen3MoeConfig", dict(base, hidden_size=128, intermediate_size=128, num_hidden_layers=2,
                           num_attention_heads=2, num_key_value_heads=1, head_dim=64, tie_word_embeddings=False,
                           num_experts=8, num_experts_per_tok=2, moe_intermediate_size=32, norm_topk_prob=True,
                           rope_parameters=dict(rope_type="default", rope_theta=1000000.0))),
        # gpt-oss (issue 23): sinks, alternating sliding (window 8 < every prompt) / full layers, YaRN as
        # the real model (factor 32 over 4096), q/k/v/o biases, router with bias, top-2 of 4 experts with
        # biases and clamped SwiGLU. Widths are multiples of 32 so experts can be MXFP4.
        "gpt_oss": ("GptOssConfig", dict(base, hidden_size=64, intermediate_size=64, num_hidden_layers=2,
                    num_attention_heads=4, num_key_value_heads=2, head_dim=16, tie_word_embeddings=False,
                    rms_norm_eps=1e-5, num_local_experts=4, num_experts_per_tok=2, sliding_window=8,
                    rope_parameters=dict(rope_type="yarn", rope_theta=150000.0, factor=32.0, beta_fast=32.0,
                                         beta_slow=1.0, truncate=False, original_max_position_embeddings=4096))),
        # The same model stored as gpt-oss checkpoints are: experts as MXFP4 `_blocks` / `_scales`
        # (quantization_config mxfp4), everything else F32. HF only.
        "gpt_oss_mxfp4": ("GptOssConfig", dict(base, hidden_size=64, intermediate_size=64, num_hidden_layers=2,
                          num_attention_heads=4, num_key_value_heads=2, head_dim=16, tie_word_embeddings=False,
                          rms_norm_eps=1e-5, num_local_experts=4, num_experts_per_tok=2, sliding_window=8,
                          rope_parameters=dict(rope_type="yarn", rope_theta=150000.0, factor=32.0, beta_fast=32.0,
                                               beta_slow=1.0, truncate=False,
                                               original_max_position_embeddings=4096))),
        # Ministral 3 as its multimodal wrapper (text under model.language_model., a 1-layer Pixtral
        # vision tower and projector beside it that a text engine must skip). YaRN over an original
        # context of 16 and the query temperature floor(pos / 16): the prompts (20-40 tokens, +32
        # greedy) cross floors 1 to 4, so a wrong or missing temperature changes the logits.
        "ministral3": ("Mistral3Config", dict(
            tie_word_embeddings=False, image_token_index=10,
            text_config=dict(base, model_type="ministral3", hidden_size=128, intermediate_size=128,
                             num_hidden_layers=2, num_attention_heads=2, num_key_value_heads=1, head_dim=64,
                             rms_norm_eps=1e-5, tie_word_embeddings=False, sliding_window=None,
                             rope_parameters=dict(rope_type="yarn", rope_theta=1000000.0, factor=4.0,
                                                  original_max_position_embeddings=16, beta_fast=32.0,
                                                  beta_slow=1.0, mscale=1.0, mscale_all_dim=1.0,
                                                  llama_4_scaling_beta=0.25)),
            vision_config=dict(model_type="pixtral", hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                               num_attention_heads=2, head_dim=16, image_size=32, patch_size=8))),
        # Qwen3.5 dense text model: layers 0-2 Gated DeltaNet (2 key heads for 4 value heads), layer 3
        # gated full attention with partial rotary (0.25 of head_dim 32; M-RoPE sections for text
        # reduce to 1-D RoPE).
        "qwen3_5": ("Qwen3_5TextConfig", dict(base, hidden_size=64, intermediate_size=128, num_hidden_layers=4,
                    num_attention_heads=2, num_key_value_heads=1, head_dim=32, tie_word_embeddings=False,
                    linear_num_key_heads=2, linear_num_value_heads=4, linear_key_head_dim=16,
                    linear_value_head_dim=16, linear_conv_kernel_dim=4,
                    layer_types=["linear_attention"] * 3 + ["full_attention"],
                    rope_parameters=dict(rope_type="default", rope_theta=10000.0, partial_rotary_factor=0.25,
                                         mrope_section=[2, 1, 1], mrope_interleaved=True))),
        # Gemma 4 text (E2B-like): per-layer input embeddings (PLE width 16), layers 4-5 reuse the K/V
        # of layers 2 (sliding) and 3 (full; the last own-KV layer is full, as llama.cpp's gemma4
        # assumes) and have double-wide MLPs, full layers with their own
        # head_dim 64 and proportional RoPE (a quarter of the pairs rotate), sliding window 8, final
        # softcap 30, learned layer scalars.
        "gemma4": ("Gemma4TextConfig", dict(base, hidden_size=64, intermediate_size=64, num_hidden_layers=6,
                   num_attention_heads=2, num_key_value_heads=1, head_dim=32, global_head_dim=64,
                   sliding_window=8, hidden_activation="gelu_pytorch_tanh", tie_word_embeddings=True,
                   final_logit_softcapping=30.0, hidden_size_per_layer_input=16, vocab_size_per_layer_input=V,
                   num_kv_shared_layers=2, use_double_wide_mlp=True, attention_k_eq_v=False,
                   layer_types=["sliding_attention"] * 3 + ["full_attention", "sliding_attention", "full_attention"])),
        # The same model as a BF16 checkpoint (sharpened as qwen3_bf16).
        "gemma4_bf16": ("Gemma4TextConfig", dict(base, hidden_size=64, intermediate_size=64, num_hidden_layers=6,
                        num_attention_heads=2, num_key_value_heads=1, head_dim=32, global_head_dim=64,
                        sliding_window=8, hidden_activation="gelu_pytorch_tanh", tie_word_embeddings=True,
                        final_logit_softcapping=30.0, hidden_size_per_layer_input=16,
                        vocab_size_per_layer_input=V, num_kv_shared_layers=2, use_double_wide_mlp=True,
                        layer_types=["sliding_attention"] * 3 + ["full_attention", "sliding_attention",
                                                                 "full_attention"])),
        # Gemma 4 MoE (26B-A4B-like) as the multimodal wrapper Gemma4ForConditionalGeneration (a 1-layer
        # vision tower beside the text model): every layer an MoE block (top-2 of 4, router scale and
        # per-expert scales) in parallel with the dense MLP, no PLE, full layers with k_eq_v (values
        # from the raw k projection) and one KV head for 2 on the sliding layers.
        "gemma4_moe": ("Gemma4Config", dict(
            tie_word_embeddings=True,
            text_config=dict(base, model_type="gemma4_text", hidden_size=64, intermediate_size=64,
                             num_hidden_layers=6, num_attention_heads=4, num_key_value_heads=2, head_dim=16,
                             global_head_dim=32, num_global_key_value_heads=1, attention_k_eq_v=True,
                             sliding_window=8, hidden_activation="gelu_pytorch_tanh",
                             tie_word_embeddings=True, final_logit_softcapping=30.0,
                             hidden_size_per_layer_input=0, enable_moe_block=True, num_experts=4,
                             top_k_experts=2, moe_intermediate_size=32,
                             layer_types=["sliding_attention"] * 5 + ["full_attention"]),
            vision_config=dict(model_type="gemma4_vision", hidden_size=32, intermediate_size=64,
                               num_hidden_layers=1, num_attention_heads=2, num_key_value_heads=2, head_dim=16),
            audio_config=None)),
        # Qwen3.5-MoE / Qwen3.6 MoE text model: the qwen3_5 layer mix with an MoE block on every layer
        # (softmax router, top-2 of 8, always renormalized) plus a shared expert twice as wide as an
        # expert (64 vs 32, so a width mix-up shows) behind its sigmoid gate. save_pretrained writes
        # per-expert tensors (its in-memory fused gate_up_proj / down_proj: tests/archs/moe_fused_layout_test).
        "qwen3_5_moe": ("Qwen3_5MoeTextConfig", dict(base, hidden_size=64, num_hidden_layers=4,
                        num_attention_heads=2, num_key_value_heads=1, head_dim=32, tie_word_embeddings=False,
                        linear_num_key_heads=2, linear_num_value_heads=4, linear_key_head_dim=16,
                        linear_value_head_dim=16, linear_conv_kernel_dim=4,
                        num_experts=8, num_experts_per_tok=2, moe_intermediate_size=32,
                        shared_expert_intermediate_size=64,
                        layer_types=["linear_attention"] * 3 + ["full_attention"],
                        rope_parameters=dict(rope_type="default", rope_theta=10000.0, partial_rotary_factor=0.25,
                                             mrope_section=[2, 1, 1], mrope_interleaved=True))),
        # The same architecture as a BF16 checkpoint (sharpened as qwen3_bf16). HF only.
        "qwen3_5_moe_bf16": ("Qwen3_5MoeTextConfig", dict(base, hidden_size=64, num_hidden_layers=4,
                             num_attention_heads=2, num_key_value_heads=1, head_dim=32, tie_word_embeddings=False,
                             linear_num_key_heads=2, linear_num_value_heads=4, linear_key_head_dim=16,
                             linear_value_head_dim=16, linear_conv_kernel_dim=4,
                             num_experts=8, num_experts_per_tok=2, moe_intermediate_size=32,
                             shared_expert_intermediate_size=64,
                             layer_types=["linear_attention"] * 3 + ["full_attention"],
                             rope_parameters=dict(rope_type="default", rope_theta=10000.0,
                                                  partial_rotary_factor=0.25, mrope_section=[2, 1, 1],
                                                  mrope_interleaved=True))),
        # gpt_oss as a sharpened BF16 checkpoint (the dtype of gpt-oss's non-expert weights). HF only.
        "gpt_oss_bf16": ("GptOssConfig", dict(base, hidden_size=64, intermediate_size=64, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, head_dim=16, tie_word_embeddings=False,
                         rms_norm_eps=1e-5, num_local_experts=4, num_experts_per_tok=2, sliding_window=8,
                         rope_parameters=dict(rope_type="yarn", rope_theta=150000.0, factor=32.0, beta_fast=32.0,
                                              beta_slow=1.0, truncate=False,
                                              original_max_position_embeddings=4096))),
        # gpt_oss with hidden and expert width 256, so that its experts, q/k/v and the head take Q4_K
        # rows: a Q4_K GGUF (experts included) beside F16 and Q8_0.
        "gpt_oss_q4k": ("GptOssConfig", dict(base, hidden_size=256, intermediate_size=256, num_hidden_layers=2,
                        num_attention_heads=4, num_key_value_heads=2, head_dim=16, tie_word_embeddings=False,
                        rms_norm_eps=1e-5, num_local_experts=4, num_experts_per_tok=2, sliding_window=8,
                        rope_parameters=dict(rope_type="yarn", rope_theta=150000.0, factor=32.0, beta_fast=32.0,
                                             beta_slow=1.0, truncate=False,
                                             original_max_position_embeddings=4096))),
    }
    # qwen3_5 and ministral3 as sharpened BF16 checkpoints (as qwen3_bf16), HF only. Appended last: a
    # family's seed is its position in this table.
    for name in ("qwen3_5", "ministral3"):
        fams[name + "_bf16"] = fams[name]
    return fams


REAL_TOKENIZER = {"llama_tok": "llama2"}  # family -> tests/data/tokenizers/<name> (not copied)
REAL_TEXT = ["The capital of France is Paris, and the capital of Italy is Rome. Both cities are old.",
             "def add(a, b):\n    return a + b\n\nprint(add(2, 3))  # prints five, of course",
             "Once upon a time, in a small village by the sea, there lived an old fisherman who told stories."]
# llama.cpp converts MistralForCausalLM to its `llama` arch, which has no sliding window: such a GGUF
# is a different model from the HF one the goldens describe, so none is written.
NO_GGUF = {"mistral", "qwen3_bf16", "qwen3_moe_mixed", "qwen3_moe_bf16", "olmoe_clip", "gpt_oss_mxfp4",
           "gemma4_bf16", "gemma4_moe", "qwen3_5_moe_bf16", "gpt_oss_bf16", "qwen3_5_bf16", "ministral3_bf16"}
# The gpt-oss variants: its input-major expert layout (init, rounding along the GGUF rows).
GPT_OSS = {"gpt_oss", "gpt_oss_mxfp4", "gpt_oss_bf16", "gpt_oss_q4k"}
# qwen3_5_moe: its 4-bit file is another model (the same-weights oracle's KL from F32 was 6.3 mean, 0 of
# 16 greedy steps in common on every prompt: Gated DeltaNet state and router flips amplify the rounding),
# so its logits say nothing about an engine; F16 and Q8_0 (with llama.cpp as second oracle) remain.
NO_4BIT = {"qwen3_5_moe", "gemma4"}  # gemma4: F16 and Q8_0 (the converter's gemma4 arch), no 4-bit file
HF_MXFP4 = {"gpt_oss_mxfp4"}  # experts snapped to MXFP4 and saved as HF blocks / scales
SHARPEN = {"qwen3_bf16", "qwen3_moe_bf16", "gemma4_bf16", "qwen3_5_moe_bf16", "gpt_oss_bf16", "qwen3_5_bf16",
           "ministral3_bf16"}  # greedy margins made large enough for bf16 activations (sharpen())
WEIGHT_DTYPE = {"llama_tok": "float16", "qwen3_bf16": "bfloat16", "qwen3_moe_bf16": "bfloat16",
                "gemma4_bf16": "bfloat16", "qwen3_5_moe_bf16": "bfloat16", "gpt_oss_bf16": "bfloat16",
                "qwen3_5_bf16": "bfloat16", "ministral3_bf16": "bfloat16"}  # checkpoint dtype; F32 otherwise
KEEP_F32_GGUF = {"llama"}  # the Q/K-permuted NORM-rope path, checked at F32 precision
GEMMA_STYLE = {"gemma", "gemma2", "gemma3", "qwen3_5", "qwen3_5_moe", "qwen3_5_moe_bf16", "qwen3_5_bf16"}  # RMSNorm computes x̂·(1 + w)
PLAIN_NORMS = ("linear_attn.norm.weight",)  # plain-weight norms of GEMMA_STYLE families
ARCH_CLASS = {"ministral3": "Mistral3ForConditionalGeneration", "ministral3_bf16": "Mistral3ForConditionalGeneration",
              "gemma4_moe": "Gemma4ForConditionalGeneration"}  # else from the config class name
NOT_TEXT = ("model.vision_tower.", "model.multi_modal_projector.", "model.embed_vision.", "model.audio_tower.",
            "model.embed_audio.")  # left at transformers' own init
KQUANT = {"qwen3", "qwen3_moe", "gpt_oss_q4k"}  # hidden 256: a Q4_K file (the others Q4_0)
# MoE router weights are drawn ROUTER_SCALE× wider than other matrices, so that the k-th and
# (k+1)-th router logits of a token are rarely near-equal (goldens.json: router_margin_min).
ROUTER_SCALE = 4.0
# Families whose goldens carry half_kv_oracle (half_kv_oracle()): Gemma 4's scale-1 attention makes
# f16 / bf16 K/V rounding move the logits ~40x more than in the other tiny models.
HALF_KV_ORACLE = {"gemma4", "gemma4_bf16", "gemma4_moe"}


def text_name(name: str) -> str:
    """A wrapper's text parameter under the plain causal-LM name (model.language_model.x -> model.x)."""
    return "model." + name[len("model.language_model."):] if name.startswith("model.language_model.") else name


def text_kw(kw: dict) -> dict:
    return kw.get("text_config", kw)


def make_tokenizer(out_dir: pathlib.Path, vocab_size: int):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    # <|endoftext|>, <unk>, <bos>, <eos>: tokens the per-family transformers tokenizer classes add when
    # missing (e.g. Qwen2Tokenizer), which would push ids past vocab_size.
    specials = ["<pad>", "<s>", "</s>", "<|endoftext|>", "<unk>", "<bos>", "<eos>"]
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=specials,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train_from_iterator([TEXT], trainer)
    extra = vocab_size - tok.get_vocab_size()
    if extra > 0:
        tok.add_special_tokens([f"<extra_{i}>" for i in range(extra)])
    assert tok.get_vocab_size() == vocab_size, tok.get_vocab_size()
    tok.save(str(out_dir / "tokenizer.json"))
    (out_dir / "tokenizer_config.json").write_text(json.dumps({
        "tokenizer_class": "PreTrainedTokenizerFast", "bos_token": "<s>", "eos_token": "</s>",
        "pad_token": "<pad>", "add_bos_token": False, "model_max_length": 128}, indent=1))


def init_weights(model, family: str, seed: int):
    """N(0, 1/fan_in) matrices, norms 1 + 0.1·noise (Gemma: stored w = 0.1·noise, i.e. 1 + w), final
    norm ×4 so the next-token distribution is peaked (with N(0, 0.02²) and unit norms the top-2 logits
    of a tiny model differ by ~0.003 nats: greedy is then decided by rounding noise)."""
    import torch
    g = torch.Generator().manual_seed(seed)
    gemma = family in GEMMA_STYLE
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.startswith(NOT_TEXT):
                continue
            name = text_name(name)
            if name.endswith("linear_attn.A_log"):  # decay rates exp(A_log) in [1, 8]
                p.copy_(torch.log(1.0 + 7.0 * torch.rand(p.shape, generator=g, dtype=torch.float64)))
            elif name.endswith("linear_attn.dt_bias"):
                p.copy_(0.5 * torch.randn(p.shape, generator=g, dtype=torch.float64))
            elif name.endswith("linear_attn.conv1d.weight"):  # [C, 1, K]
                p.copy_(torch.randn(p.shape, generator=g, dtype=torch.float64) / math.sqrt(p.shape[-1]))
            elif name.endswith(("norm.weight", "norm_1.weight", "norm_2.weight")):  # Gemma 4 MoE block norms _1 / _2
                scale = 1.0
                if name == "model.norm.weight":
                    scale = 4.0
                elif "post_" in name and gemma:  # sandwich post-norms (smaller ones repeat one token)
                    scale = 2.0
                eff = scale * (1.0 + 0.1 * torch.randn(p.shape, generator=g, dtype=torch.float64))
                p.copy_((eff - 1.0) if gemma and not name.endswith(PLAIN_NORMS) else eff)
            elif name.endswith("self_attn.sinks"):  # gpt-oss: per-head sink logits
                p.copy_(torch.randn(p.shape, generator=g, dtype=torch.float64))
            elif name.endswith("_bias") and "mlp.experts." in name:  # gpt-oss stacked expert biases [E, n]
                p.copy_(0.2 * torch.randn(p.shape, generator=g, dtype=torch.float64))
            elif family in GPT_OSS and (name.endswith("mlp.experts.gate_up_proj")
                                          or name.endswith("mlp.experts.down_proj")):  # input-major [E, in, out]
                p.copy_(1.0 / math.sqrt(p.shape[1]) * torch.randn(p.shape, generator=g, dtype=torch.float64))
            elif name.endswith("router.scale"):  # Gemma 4 router input scale [H]
                p.copy_(1.0 + 0.1 * torch.randn(p.shape, generator=g, dtype=torch.float64))
            elif name.endswith("router.per_expert_scale"):  # Gemma 4 [E], on the routing weights
                p.copy_(1.0 + 0.3 * torch.rand(p.shape, generator=g, dtype=torch.float64))
            elif name.endswith("router.proj.weight"):  # Gemma 4 router [E, H]
                p.copy_(ROUTER_SCALE / math.sqrt(p.shape[1]) * torch.randn(p.shape, generator=g, dtype=torch.float64))
            elif name.endswith("mlp.router.weight"):  # gpt-oss router [E, H]
                p.copy_(ROUTER_SCALE / math.sqrt(p.shape[1]) * torch.randn(p.shape, generator=g, dtype=torch.float64))
            elif name.endswith(".bias"):
                p.copy_(0.2 * torch.randn(p.shape, generator=g, dtype=torch.float64))
            elif p.dim() == 3:  # stacked experts (transformers v5): [E, out, in]
                p.copy_(1.0 / math.sqrt(p.shape[2]) * torch.randn(p.shape, generator=g, dtype=torch.float64))
            elif p.dim() == 2 and name.endswith("mlp.gate.weight"):  # MoE router [E, H]
                p.copy_(ROUTER_SCALE / math.sqrt(p.shape[1]) * torch.randn(p.shape, generator=g, dtype=torch.float64))
            elif p.dim() == 2:
                fan_in = p.shape[1]
                if "embed_tokens" in name:
                    std = 1.0 / math.sqrt(fan_in) * (1.0 if not gemma else 1.0)
                else:
                    std = 1.0 / math.sqrt(fan_in)
                p.copy_(std * torch.randn(p.shape, generator=g, dtype=torch.float64))
            else:
                raise RuntimeError(f"unexpected parameter {name} {tuple(p.shape)}")
        for name, b in model.named_buffers():
            if name.endswith("layer_scalar"):  # Gemma 4: a learned scalar per layer, saved as a buffer
                b.copy_(0.6 + 0.8 * torch.rand(b.shape, generator=g, dtype=torch.float64))


def sharpen(model, prompts, steps=300, lr=3e-3):
    """Self-distillation: a few hundred seeded Adam steps (float64, CPU) that train the model on its
    own greedy continuations of the prompts, so greedy top-1 margins grow from ~0.01 (random weights)
    to well above the logit error of rounded activations. The result is just another fixed model;
    every golden is computed from it afterwards."""
    import torch
    seqs = [p + greedy(model, p, NUM_GREEDY) for p in prompts]
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    with torch.enable_grad():
        for _ in range(steps):
            opt.zero_grad()
            loss = 0
            for sq in seqs:
                ids = torch.tensor([sq])
                logits = model(input_ids=ids, use_cache=False).logits[0, :-1]
                loss = loss + torch.nn.functional.cross_entropy(logits, ids[0, 1:])
            loss.backward()
            opt.step()
    model.zero_grad(set_to_none=True)


def bf16_activation_oracle(model, prompts, ref_logits, greedy_ref):
    """The float64 oracle with every nn.Linear input rounded to bf16, as a CPU engine that multiplies
    BF16 weights against bf16 activations does: how far such an engine's logits may legitimately be
    from the float64 reference (tests/archs bounds ours by a multiple of it)."""
    import torch
    hooks = [m.register_forward_pre_hook(lambda _m, a: (a[0].to(torch.bfloat16).to(torch.float64),))
             for m in model.modules() if isinstance(m, torch.nn.Linear)]
    try:
        diffs = [float(np.abs(full_logits(model, p) - r).max()) for p, r in zip(prompts, ref_logits)]
        same = [greedy(model, p, NUM_GREEDY) == g for p, g in zip(prompts, greedy_ref)]
    finally:
        for h in hooks:
            h.remove()
    return {"max_abs_diff": diffs, "greedy_equal": same}


def half_kv_oracle(model, prompts):
    """The float64 oracle with the attention's K and V rounded to f16 / bf16 (what a half KV cache
    holds; KV-sharing layers see the rounded K/V of the layer they share): max |Δlogit| per prompt
    against the unrounded oracle. Patches the eager attention of the model's own modeling module."""
    import importlib
    import torch
    mod = importlib.import_module(type(model).__module__)
    orig = mod.eager_attention_forward
    refs = [full_logits(model, p) for p in prompts]
    out = {}
    for name, dt in [("F16", torch.float16), ("BF16", torch.bfloat16)]:
        def rounded(module, q, k, v, *a, dt=dt, **kw):
            return orig(module, q, k.to(dt).to(k.dtype), v.to(dt).to(v.dtype), *a, **kw)
        mod.eager_attention_forward = rounded
        try:
            out[name] = [float(np.abs(full_logits(model, p) - r).max()) for p, r in zip(prompts, refs)]
        finally:
            mod.eager_attention_forward = orig
    return out


def full_logits(model, ids):
    import torch
    with torch.no_grad():
        out = model(input_ids=torch.tensor([ids], dtype=torch.long), use_cache=False)
    return out.logits[0].to(torch.float64).numpy()


def greedy(model, ids, n):
    toks = list(ids)
    out = []
    for _ in range(n):
        nxt = int(np.argmax(full_logits(model, toks)[-1]))
        out.append(nxt)
        toks.append(nxt)
    return out


def router_margin_min(model, seqs, k):
    """Smallest gap between a token's k-th and (k+1)-th router logit over every MoE layer and
    position of `seqs` (full forwards): how far routing is from a tie an engine's rounding could
    flip. None for a dense model or k = num_experts."""
    import torch
    gaps = []

    def hook(_m, _a, out):
        lg = out[0] if isinstance(out, tuple) else out
        srt = torch.sort(lg.to(torch.float64), dim=-1, descending=True).values
        if srt.shape[-1] > k:
            gaps.append(float((srt[..., k - 1] - srt[..., k]).min()))
    def hook_probs(_m, _a, out):  # Gemma 4's router returns softmax probabilities: log p = logit + c
        hook(_m, _a, torch.log(out[0]))
    hooks = [m.register_forward_hook(hook) for m in model.modules() if type(m).__name__.endswith("TopKRouter")]
    hooks += [m.register_forward_hook(hook_probs) for m in model.modules() if type(m).__name__ == "Gemma4TextRouter"]
    try:
        for sq in seqs:
            full_logits(model, sq)
    finally:
        for h in hooks:
            h.remove()
    return min(gaps) if gaps else None


def log_softmax(x):
    m = x.max(axis=-1, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis=-1, keepdims=True))


def kl(p_logits, q_logits):
    lp, lq = log_softmax(p_logits), log_softmax(q_logits)
    return (np.exp(lp) * (lp - lq)).sum(axis=-1)


# ---------------------------------------------------------------- GGUF conversion (llama.cpp converter)

class Converter:
    def __init__(self, llama_cpp: pathlib.Path):
        sys.path.insert(0, str(llama_cpp))
        sys.path.insert(1, str(llama_cpp / "gguf-py"))
        import convert_hf_to_gguf as conv  # noqa: E402  (inserts its gguf-py too)
        import gguf
        from conversion import base
        self.conv, self.gguf, self.base = conv, gguf, base
        sys.path.insert(0, str(ROOT / "tools"))
        import gen_quant_goldens as gq
        import tempfile
        self._tmp = tempfile.TemporaryDirectory()
        self.ggml = gq.build_ggml(llama_cpp / "ggml", pathlib.Path(self._tmp.name))
        self.gq = gq
        self.force = None  # callable(new_name, shape) -> qtype or False
        self.real_vocab = False  # True: the converter's own set_vocab (real tokenizer files)
        self._patch()

    def _patch(self):
        gguf, base = self.gguf, self.base
        base.TextModel.get_vocab_base_pre = lambda self_, tokenizer: "default"
        import conversion
        conv = self
        for cls_name in ["LlamaModel", "GemmaModel", "Gemma2Model", "Gemma3Model", "Phi3MiniModel",
                         "GraniteModel", "Qwen2Model", "Qwen2MoeModel", "Qwen3Model", "GptOssModel", "Qwen3MoeModel", "OlmoeModel",
                         "Gemma4Model"]:
            cls = None
            for mod in list(sys.modules.values()):
                if mod and getattr(mod, "__name__", "").startswith("conversion") and hasattr(mod, cls_name):
                    cls = getattr(mod, cls_name)
            if cls is None:
                try:
                    cls = conversion.get_model_class({"LlamaModel": "LlamaForCausalLM",
                                                      "GemmaModel": "GemmaForCausalLM",
                                                      "Gemma2Model": "Gemma2ForCausalLM",
                                                      "Gemma3Model": "Gemma3ForCausalLM",
                                                      "Phi3MiniModel": "Phi3ForCausalLM",
                                                      "GraniteModel": "GraniteForCausalLM",
                                                      "Qwen2Model": "Qwen2ForCausalLM",
                                                      "Qwen2MoeModel": "Qwen2MoeForCausalLM",
                                                      "Qwen3Model": "Qwen3ForCausalLM",
                                                      "GptOssModel": "GptOssForCausalLM",
                                                      "Qwen3MoeModel": "Qwen3MoeForCausalLM",
                                                      "OlmoeModel": "OlmoeForCausalLM",
                                                      "Gemma4Model": "Gemma4ForCausalLM"}[cls_name])
                except Exception as e:  # pragma: no cover
                    raise RuntimeError(f"converter class {cls_name}: {e}")
            cls.set_vocab = (lambda orig: lambda self_: orig(self_) if conv.real_vocab
                             else self_._set_vocab_gpt2())(cls.set_vocab)
        orig_force = base.ModelBase.tensor_force_quant

        def force(self_, name, new_name, bid, n_dims):
            if conv.force is not None and n_dims in (2, 3) and new_name.endswith(".weight") \
                    and not new_name.endswith("_norm.weight") and "ffn_gate_inp" not in new_name \
                    and "ssm_conv1d" not in new_name:  # F32 as llama.cpp keeps it
                return conv.force(new_name)
            return orig_force(self_, name, new_name, bid, n_dims)
        base.ModelBase.tensor_force_quant = force
        orig_quantize = gguf.quants.quantize
        kquant = {gguf.GGMLQuantizationType.Q4_K: "Q4_K", gguf.GGMLQuantizationType.Q6_K: "Q6_K"}

        def quantize(data, qtype):
            if qtype in kquant:
                rows = np.ascontiguousarray(data, dtype=np.float32)
                raw = conv.gq.ggml_quantize(conv.ggml, kquant[qtype], rows.reshape(-1))
                return raw.reshape(*rows.shape[:-1], -1)
            return orig_quantize(data, qtype)
        gguf.quants.quantize = quantize

    def convert(self, model_dir: pathlib.Path, outtype: str, out: pathlib.Path, force=None, extra=()):
        self.force = force
        argv = sys.argv
        sys.argv = ["convert_hf_to_gguf.py", str(model_dir), "--outtype", outtype, "--outfile", str(out),
                    "--no-lazy", *extra]
        try:
            self.conv.main()
        finally:
            sys.argv = argv
            self.force = None
        return out

    def tensor_types(self, path: pathlib.Path):
        r = self.gguf.GGUFReader(str(path))
        return {t.name: t.tensor_type.name for t in r.tensors}

    def tensor_ne0(self, path: pathlib.Path):
        r = self.gguf.GGUFReader(str(path))
        return {t.name: int(t.shape[0]) for t in r.tensors}


def roundtrip_rows(conv: Converter, w: np.ndarray, qtype_name: str) -> np.ndarray:
    """dequant(quant(w)) row by row with the same encoders the GGUF was written with."""
    gguf = conv.gguf
    if qtype_name == "F32":
        return w
    if qtype_name == "F16":
        return w.astype(np.float16).astype(np.float32)
    qt = getattr(gguf.GGMLQuantizationType, qtype_name)
    rows = np.ascontiguousarray(w.reshape(-1, w.shape[-1]), dtype=np.float32)  # 3-D experts: every row
    raw = gguf.quants.quantize(rows, qt)
    return gguf.quants.dequantize(raw, qt).reshape(w.shape).astype(np.float32)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--llama-cpp", type=pathlib.Path, required=True,
                    help="vendor/llama.cpp folder of the unpacked llama-cpp-python 0.3.36 sdist")
    ap.add_argument("--only", nargs="*", default=None)
    ap.add_argument("--out", type=pathlib.Path, default=OUT, help="output folder (default tests/data/archs)")
    args = ap.parse_args()
    conv = Converter(args.llama_cpp)
    import torch
    import transformers
    torch.set_grad_enabled(False)
    fams = family_configs()
    for fi, (family, (cfg_cls, kw)) in enumerate(fams.items()):
        if args.only and family not in args.only:
            continue
        out = args.out / family
        if out.exists():
            shutil.rmtree(out)
        out.mkdir(parents=True)
        cfg = getattr(transformers, cfg_cls)(**kw)
        cfg._attn_implementation = "eager"
        tcfg = cfg.get_text_config()
        num_experts = getattr(tcfg, "num_experts", 0) or 0
        top_k = getattr(tcfg, "num_experts_per_tok", None) or getattr(tcfg, "top_k_experts", None)
        if num_experts:
            cfg._experts_implementation = "eager"  # the per-expert loop (grouped_mm has no float64)
            tcfg._experts_implementation = "eager"
        cfg.get_text_config()._attn_implementation = "eager"
        arch = ARCH_CLASS.get(family) or cfg_cls.replace("TextConfig", "ForCausalLM").replace("Config", "ForCausalLM")
        cfg.architectures = [arch]
        torch.manual_seed(1000 + fi)
        model = getattr(transformers, arch)(cfg).to(torch.float64).eval()
        init_weights(model, family, 1000 + fi)
        if family in HF_MXFP4:
            mxfp4_experts = snap_experts_mxfp4(model, conv)
        if family in SHARPEN:  # same prompts as below (same seed)
            rng = np.random.default_rng(77 + fi)
            sharpen(model, [[int(x) for x in rng.integers(3, text_kw(kw)["vocab_size"], n)] for n in PROMPT_LENS])
        real_tok = REAL_TOKENIZER.get(family)
        wdtype = WEIGHT_DTYPE.get(family)
        if wdtype:  # F16 / BF16 checkpoint; the oracle runs on exactly those weights
            model16 = model.to(getattr(torch, wdtype))
            model16.save_pretrained(out, safe_serialization=True)
            model32 = model16.to(torch.float32)
        else:
            model32 = model.to(torch.float32)
            model32.save_pretrained(out, safe_serialization=True)
            if family in HF_MXFP4:
                write_hf_mxfp4(out, mxfp4_experts)
        model = model32.to(torch.float64)
        gen = transformers.GenerationConfig(bos_token_id=1, eos_token_id=2, pad_token_id=0, do_sample=False)
        gen.save_pretrained(out)
        if real_tok:
            from tokenizers import Tokenizer
            tok = Tokenizer.from_file(str(TESTS / "data" / "tokenizers" / real_tok / "tokenizer.json"))
            prompts = [tok.encode(t).ids for t in REAL_TEXT]
        else:
            make_tokenizer(out, text_kw(kw)["vocab_size"])
            rng = np.random.default_rng(77 + fi)
            prompts = [[int(x) for x in rng.integers(3, text_kw(kw)["vocab_size"], n)] for n in PROMPT_LENS]
        ref_logits = [full_logits(model, p) for p in prompts]
        greedy_ref = [greedy(model, p, NUM_GREEDY) for p in prompts]
        margins = []
        for p, gt in zip(prompts, greedy_ref):
            lg = full_logits(model, p + gt[:-1])[len(p) - 1:]
            srt = np.sort(lg, axis=-1)
            margins.append(float(np.min(srt[:, -1] - srt[:, -2])))
        # all positions for the small vocabularies; the last few for the real one (size)
        logit_positions = 1 if real_tok else 0
        with open(out / "logits.bin", "wb") as f:
            for lg in ref_logits:
                f.write(lg[-logit_positions:].astype("<f4").tobytes())
        golden = {"family": family, "architecture": arch, "vocab_size": text_kw(kw)["vocab_size"],
                  "prompts": prompts, "greedy": greedy_ref,
                  "logit_range": [float(lg.max() - lg.min()) for lg in ref_logits],
                  "top1_margin_min": [float(np.min(np.sort(lg, axis=-1)[:, -1] - np.sort(lg, axis=-1)[:, -2]))
                                      for lg in ref_logits],
                  "greedy_top1_margin_min": margins,
                  "logits_file": "logits.bin", "logits_last_positions": logit_positions, "gguf": {}}
        if num_experts:
            golden["router_margin_min"] = router_margin_min(
                model, [p + g for p, g in zip(prompts, greedy_ref)], top_k)
        if family in HF_MXFP4:
            # MXFP4 weights meet 8-bit activations in the CPU kernels (as llama.cpp's do, and as for a
            # GGUF's quantized formats, ArchGguf): the engine is bounded like a quantized GGUF, 3e-2 of
            # the logit range, and its greedy steps must match wherever the oracle's margin is clear.
            golden["quantized_activations"] = {"tol_of_range": 3e-2, "greedy_margins": [
                [float(x) for x in np.diff(np.sort(full_logits(model, p + gt[:-1])[len(p) - 1:], axis=-1)[:, -2:],
                                           axis=-1)[:, 0]] for p, gt in zip(prompts, greedy_ref)]}
        if family in HALF_KV_ORACLE:
            golden["half_kv_oracle"] = half_kv_oracle(model, prompts)
        if wdtype == "bfloat16":
            golden["bf16_activation_oracle"] = bf16_activation_oracle(model, prompts, ref_logits, greedy_ref)
        if real_tok:
            golden["tokenizer"] = f"data/tokenizers/{real_tok}"  # under tests/
            golden["prompt_text"] = REAL_TEXT
            golden["greedy_text"] = [tok.decode(g) for g in greedy_ref]

        # GGUFs
        state = {k: v.detach().to(torch.float32).numpy() for k, v in model32.state_dict().items()}
        kq = family in KQUANT

        def force_k(new_name):
            g = conv.gguf.GGMLQuantizationType
            if ne0[new_name] % 256 == 0:
                return g.Q6_K if new_name.startswith("token_embd") or new_name.startswith("output.") else g.Q4_K
            return g.Q4_0

        def force_q40(new_name):
            return conv.gguf.GGMLQuantizationType.Q4_0
        fmts = [] if family in NO_GGUF else [("F32", "f32", None), ("F16", "f16", None), ("Q8_0", "q8_0", None),
                ("Q4_K" if kq else "Q4_0", "q8_0", force_k if kq else force_q40)]
        if family in NO_4BIT:
            fmts = [f for f in fmts if f[0] not in ("Q4_0", "Q4_K")]
        if family == "gpt_oss":  # experts MXFP4, everything else as Q8_0 (what gpt-oss GGUFs hold)
            fmts = [("F32", "f32", None), ("F16", "f16", None), ("Q8_0", "q8_0", None),
                    ("MXFP4", "q8_0", lambda nn: conv.gguf.GGMLQuantizationType.MXFP4 if "_exps." in nn else False)]
        conv_dir, qlast = out, QUANT_LAST_POSITIONS
        if real_tok:  # the converter reads the real tokenizer (SentencePiece-style BPE) beside the weights
            fmts = [("F16", "f16", None), ("Q8_0", "q8_0", None)]
            qlast = 1  # 32000-wide rows: last position only (size)
            conv_dir = pathlib.Path(conv._tmp.name) / family
            shutil.rmtree(conv_dir, ignore_errors=True)
            shutil.copytree(out, conv_dir)
            for fn in ["tokenizer.json", "tokenizer_config.json"]:
                shutil.copy(TESTS / "data" / "tokenizers" / real_tok / fn, conv_dir / fn)
        qlog_all = []
        for fmt, outtype, force in fmts:
            path = out / f"model-{fmt}.gguf"
            conv.real_vocab = bool(real_tok)
            # qwen3_5 / qwen3_5_moe have no MTP block (the converter would look for one)
            conv.convert(conv_dir, outtype, path, force, ["--no-mtp"] if family.startswith("qwen3_5") else [])
            if fmt == "F32":
                ne0 = conv.tensor_ne0(path)
                if family not in KEEP_F32_GGUF:  # size budget: F16 + its own oracle checks the GGUF path
                    golden["gguf"]["F32"] = {"file": None, "tensor_types": conv.tensor_types(path)}
                    path.unlink()
                    continue
            types = conv.tensor_types(path)
            entry = {"file": path.name, "tensor_types": types}
            if fmt != "F32":
                # oracle for this file: the same model with each weight replaced by dequant(quant(w))
                qmodel = getattr(transformers, arch)(cfg).to(torch.float64).eval()
                sd = {}
                for k, w in state.items():
                    if family in GPT_OSS and ("mlp.experts." in k or k.endswith("mlp.router.weight")):
                        sd[k] = torch.from_numpy(roundtrip_gpt_oss(conv, k, w, types))
                        continue
                    t = gguf_type_for(k, w, types, family)
                    if k.endswith("linear_attn.out_proj.weight"):  # rounded in the GGUF's column order
                        sd[k] = torch.from_numpy(roundtrip_v_tiled_cols(conv, w, t, cfg))
                        continue
                    sd[k] = torch.from_numpy(roundtrip_rows(conv, w, t) if w.ndim in (2, 3) else w)
                qmodel.load_state_dict(sd, strict=False)
                if cfg.tie_word_embeddings:
                    qmodel.tie_weights()
                qmodel = qmodel.to(torch.float64)
                qlogits = [full_logits(qmodel, p) for p in prompts]
                kls = np.concatenate([kl(r, q) for r, q in zip(ref_logits, qlogits)])
                entry["oracle_greedy"] = [greedy(qmodel, p, NUM_QUANT_GREEDY) for p in prompts]
                # top-1 minus top-2 logit at each greedy step: a step whose margin is below an
                # engine's logit error may legitimately flip
                entry["oracle_greedy_margins"] = []
                for p, gt in zip(prompts, entry["oracle_greedy"]):
                    srt = np.sort(full_logits(qmodel, p + gt[:-1])[len(p) - 1:], axis=-1)
                    entry["oracle_greedy_margins"].append([float(x) for x in srt[:, -1] - srt[:, -2]])
                if num_experts:
                    entry["router_margin_min"] = router_margin_min(
                        qmodel, [p + g for p, g in zip(prompts, entry["oracle_greedy"])], top_k)
                entry["kl_to_f32_mean"] = float(kls.mean())
                entry["kl_to_f32_max"] = float(kls.max())
                entry["quant_logits_offset"] = sum(len(x) for x in qlog_all)
                qlog_all += [lg[-qlast:] for lg in qlogits]
                entry["greedy16_agree_with_f32"] = [
                    int(sum(a == b for a, b in zip(g, r[:NUM_QUANT_GREEDY])))
                    for g, r in zip(entry["oracle_greedy"], greedy_ref)]
            golden["gguf"][fmt] = entry
        if qlog_all:
            with open(out / "quant_logits.bin", "wb") as f:
                for lg in qlog_all:
                    f.write(lg.astype("<f4").tobytes())
        golden["quant_last_positions"] = qlast
        (out / "goldens.json").write_text(json.dumps(golden, indent=1))
        sizes = {p.name: p.stat().st_size for p in sorted(out.iterdir())}
        print(family, sum(sizes.values()), {k: v["kl_to_f32_mean"] for k, v in golden["gguf"].items()
                                            if "kl_to_f32_mean" in v}, golden.get("greedy_text", ""),
              golden.get("bf16_activation_oracle", ""))


# HF parameter -> GGUF tensor type (row-wise roundtrip is invariant to the Q/K row permutation the llama
# converter applies, so the HF tensor can be rounded in place).

def snap_experts_mxfp4(model, conv: Converter) -> dict:
    """gpt-oss experts rounded to MXFP4 in place (ggml's reference quantizer, per output row along the
    input dim), returning {HF name: (blocks [E, rows, cols/32, 16], scales [E, rows, cols/32])} in
    the HF checkpoint layout (element 2k in the low nibble of byte k, 2k+1 in the high one)."""
    import torch
    gguf = conv.gguf
    qt = gguf.GGMLQuantizationType.MXFP4
    out = {}
    for name, p in model.named_parameters():
        if not (name.endswith("mlp.experts.gate_up_proj") or name.endswith("mlp.experts.down_proj")):
            continue
        w = p.detach().to(torch.float32).numpy().transpose(0, 2, 1)  # [E, out, in]: rows along `in`
        E, rows, cols = w.shape
        raw = gguf.quants.quantize(np.ascontiguousarray(w.reshape(-1, cols)), qt)  # [E·rows, cols/32·17]
        deq = gguf.quants.dequantize(raw, qt).reshape(E, rows, cols)
        p.copy_(torch.from_numpy(deq.transpose(0, 2, 1).copy()).to(p.dtype))
        blk = raw.reshape(E, rows, cols // 32, 17)
        scales = blk[..., 0].copy()
        qs = blk[..., 1:]  # GGUF: byte j holds elements j (low) and j + 16 (high)
        elems = np.concatenate([qs & 0xF, qs >> 4], axis=-1)  # [.., 32] in element order
        blocks = (elems[..., 0::2] | (elems[..., 1::2] << 4)).astype(np.uint8)
        # transformers' own loader must read these bytes back as exactly the snapped weights
        from transformers.integrations.mxfp4 import convert_moe_packed_tensors
        back = convert_moe_packed_tensors(torch.from_numpy(blocks), torch.from_numpy(scales), dtype=torch.float32)
        assert torch.equal(back.to(torch.float64), p.detach()), name
        out[name] = (blocks, scales)
    return out


def write_hf_mxfp4(out_dir: pathlib.Path, experts: dict):
    """Replaces the float experts of the saved checkpoint by `<name>_blocks` / `<name>_scales` and
    marks the config quant_method mxfp4, as the released gpt-oss checkpoints are."""
    from safetensors.numpy import load_file, save_file
    path = out_dir / "model.safetensors"
    tensors = load_file(str(path))
    for name, (blocks, scales) in experts.items():
        del tensors[name]
        tensors[name + "_blocks"], tensors[name + "_scales"] = blocks, scales
    save_file(tensors, str(path), metadata={"format": "pt"})
    cfg = json.loads((out_dir / "config.json").read_text())
    cfg["quantization_config"] = {"quant_method": "mxfp4", "modules_to_not_convert": [
        "model.layers.*.self_attn", "model.layers.*.mlp.router", "model.embed_tokens", "lm_head"]}
    (out_dir / "config.json").write_text(json.dumps(cfg, indent=2, sort_keys=True) + "\n")


def roundtrip_gpt_oss(conv: Converter, hf_name: str, w: np.ndarray, types: dict) -> np.ndarray:
    """gpt-oss's input-major experts [E, in, out] (gate_up interleaved; the converter splits even /
    odd columns into ffn_gate_exps / ffn_up_exps, rows along `in`), their biases [E, n], the router."""
    import re
    blk, rest = re.match(r"model\.layers\.(\d+)\.(.*)", hf_name).groups()
    name = {"mlp.router.weight": "ffn_gate_inp.weight", "mlp.experts.gate_up_proj": "ffn_gate_exps.weight",
            "mlp.experts.down_proj": "ffn_down_exps.weight", "mlp.experts.gate_up_proj_bias": "ffn_gate_exps.bias",
            "mlp.experts.down_proj_bias": "ffn_down_exps.bias"}[rest]
    t = types[f"blk.{blk}.{name}"]
    if rest.endswith("_bias") or rest == "mlp.router.weight":
        return roundtrip_rows(conv, w, t)
    if rest == "mlp.experts.gate_up_proj":  # gate and up are written with one type
        assert types[f"blk.{blk}.ffn_up_exps.weight"] == t
    rows = np.ascontiguousarray(w.transpose(0, 2, 1)).reshape(-1, w.shape[1])  # [E·out, in]
    return roundtrip_rows(conv, rows, t).reshape(w.shape[0], w.shape[2], w.shape[1]).transpose(0, 2, 1).copy()


def roundtrip_v_tiled_cols(conv: Converter, w: np.ndarray, qtype_name: str, cfg) -> np.ndarray:
    """A Gated DeltaNet out_proj [H, Hv·dv]: the converter reorders its value-head columns from
    grouped by key head (HF) to tiled (GGUF: position vi·Hk + ki holds HF head ki·(Hv/Hk) + vi)
    before the rows are quantized, so the rounding blocks are those of the tiled order."""
    hk, hv, dv = cfg.linear_num_key_heads, cfg.linear_num_value_heads, cfg.linear_value_head_dim
    r = hv // hk
    heads = [(j % hk) * r + j // hk for j in range(hv)]  # HF head at tiled position j
    cols = np.concatenate([np.arange(g * dv, (g + 1) * dv) for g in heads])
    tiled = roundtrip_rows(conv, np.ascontiguousarray(w[:, cols]), qtype_name)
    out = np.empty_like(tiled)
    out[:, cols] = tiled
    return out


def gguf_type_for(hf_name: str, w: np.ndarray, types: dict, family: str) -> str:
    import re
    if hf_name.startswith(NOT_TEXT):
        return "F32"  # not in the text GGUF; it does not take part in a text-only forward
    hf_name = text_name(hf_name)
    m = re.match(r"model\.layers\.(\d+)\.(.*)", hf_name)
    table = {
        "self_attn.q_proj.weight": "attn_q.weight", "self_attn.k_proj.weight": "attn_k.weight",
        "self_attn.v_proj.weight": "attn_v.weight", "self_attn.o_proj.weight": "attn_output.weight",
        "self_attn.qkv_proj.weight": "attn_qkv.weight",
        "mlp.gate_proj.weight": "ffn_gate.weight", "mlp.up_proj.weight": "ffn_up.weight",
        "mlp.down_proj.weight": "ffn_down.weight", "mlp.gate_up_proj.weight": "ffn_up.weight",
        "mlp.gate.weight": "ffn_gate_inp.weight", "mlp.experts.gate_up_proj": "ffn_gate_exps.weight",
        "mlp.experts.down_proj": "ffn_down_exps.weight",
        "linear_attn.in_proj_qkv.weight": "attn_qkv.weight", "linear_attn.in_proj_z.weight": "attn_gate.weight",
        "linear_attn.in_proj_a.weight": "ssm_alpha.weight", "linear_attn.in_proj_b.weight": "ssm_beta.weight",
        "linear_attn.out_proj.weight": "ssm_out.weight", "linear_attn.conv1d.weight": "ssm_conv1d.weight",
        "mlp.shared_expert.gate_proj.weight": "ffn_gate_shexp.weight",
        "mlp.shared_expert.up_proj.weight": "ffn_up_shexp.weight",
        "mlp.shared_expert.down_proj.weight": "ffn_down_shexp.weight",
        "mlp.shared_expert_gate.weight": "ffn_gate_inp_shexp.weight",
        "per_layer_input_gate.weight": "inp_gate.weight", "per_layer_projection.weight": "proj.weight",
    }
    top = {"model.embed_tokens_per_layer.weight": "per_layer_token_embd.weight",
           "model.per_layer_model_projection.weight": "per_layer_model_proj.weight"}
    if m:
        key = f"blk.{m.group(1)}.{table.get(m.group(2), m.group(2))}"
    elif hf_name == "model.embed_tokens.weight":
        key = "token_embd.weight"
    elif hf_name == "lm_head.weight":
        key = "output.weight" if "output.weight" in types else "token_embd.weight"
    else:
        key = top.get(hf_name)
    if w.ndim not in (2, 3):
        return "F32"
    if m and key not in types and m.group(2) in ("self_attn.k_proj.weight", "self_attn.v_proj.weight"):
        return "F32"  # a Gemma 4 KV-shared layer: its own k/v projections are unused, not in the GGUF
    if key not in types:
        raise RuntimeError(f"{family}: no GGUF tensor for {hf_name} (looked for {key})")
    return types[key]


if __name__ == "__main__":
    main()
