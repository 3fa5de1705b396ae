// ArchSpec: everything the one transformer needs to know about a model family — tensor names in
// Hugging Face checkpoints and in GGUF files, and the flags that switch its few variations.
// A family is one archs/<family>.cc (model/family.h) plus one line in archs/registry.cc;
// code outside archs/ never branches on a family name (docs/architecture.md §2).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "backend/op_params.h"

namespace oxyd::model {

/// One weight slot of a decoder layer or of the model, with its name in each format. "{}" in a
/// layer name stands for the layer index. Empty name = the format has no such tensor.
struct TensorName {
  std::string hf;
  std::string gguf;
};

/// Names of every weight the transformer may read. Absent optional tensors are simply skipped.
struct TensorNames {
  TensorName embed{"model.embed_tokens.weight", "token_embd.weight"};
  TensorName final_norm{"model.norm.weight", "output_norm.weight"};
  TensorName lm_head{"lm_head.weight", "output.weight"};  // absent → tied to embed
  TensorName attn_norm{"model.layers.{}.input_layernorm.weight", "blk.{}.attn_norm.weight"};
  TensorName q{"model.layers.{}.self_attn.q_proj.weight", "blk.{}.attn_q.weight"};
  TensorName k{"model.layers.{}.self_attn.k_proj.weight", "blk.{}.attn_k.weight"};
  TensorName v{"model.layers.{}.self_attn.v_proj.weight", "blk.{}.attn_v.weight"};
  TensorName qkv{"", ""};  // fused [q | k | v] rows (Phi-3)
  TensorName q_bias{"model.layers.{}.self_attn.q_proj.bias", "blk.{}.attn_q.bias"};
  TensorName k_bias{"model.layers.{}.self_attn.k_proj.bias", "blk.{}.attn_k.bias"};
  TensorName v_bias{"model.layers.{}.self_attn.v_proj.bias", "blk.{}.attn_v.bias"};
  TensorName o{"model.layers.{}.self_attn.o_proj.weight", "blk.{}.attn_output.weight"};
  TensorName o_bias{"model.layers.{}.self_attn.o_proj.bias", "blk.{}.attn_output.bias"};
  /// Per-head attention sink logits [num_heads] (gpt-oss): a softmax column that takes weight
  /// and gives no value (backend/op_params.h AttentionParams::sinks).
  TensorName sinks{"model.layers.{}.self_attn.sinks", "blk.{}.attn_sinks.weight"};
  TensorName q_norm{"model.layers.{}.self_attn.q_norm.weight", "blk.{}.attn_q_norm.weight"};
  TensorName k_norm{"model.layers.{}.self_attn.k_norm.weight", "blk.{}.attn_k_norm.weight"};
  TensorName post_attn_norm{"", ""};  // sandwich norm after attention (Gemma 2/3)
  TensorName ffn_norm{"model.layers.{}.post_attention_layernorm.weight", "blk.{}.ffn_norm.weight"};
  TensorName gate{"model.layers.{}.mlp.gate_proj.weight", "blk.{}.ffn_gate.weight"};
  TensorName up{"model.layers.{}.mlp.up_proj.weight", "blk.{}.ffn_up.weight"};
  TensorName gate_up{"", ""};  // fused [gate | up] rows (Phi-3)
  TensorName down{"model.layers.{}.mlp.down_proj.weight", "blk.{}.ffn_down.weight"};
  TensorName post_ffw_norm{"", ""};  // sandwich norm after the MLP (Gemma 2/3)
  // Mixture of experts (model/layers/moe.h). "{e}" stands for the expert index: such a name is one
  // 2-D tensor per expert; a name without it is a stacked 3-D tensor [E, rows, cols] (GGUF *_exps,
  // ggml ne = [cols, rows, E]). HF: per-expert tensors as save_pretrained writes them, or the fused
  // [E, 2·I, H] gate_up / [E, H, I] down of transformers v5's in-memory layout when present.
  TensorName router{"model.layers.{}.mlp.gate.weight", "blk.{}.ffn_gate_inp.weight"};
  TensorName router_bias{"", ""};
  TensorName expert_gate{"model.layers.{}.mlp.experts.{e}.gate_proj.weight", "blk.{}.ffn_gate_exps.weight"};
  TensorName expert_up{"model.layers.{}.mlp.experts.{e}.up_proj.weight", "blk.{}.ffn_up_exps.weight"};
  TensorName expert_down{"model.layers.{}.mlp.experts.{e}.down_proj.weight", "blk.{}.ffn_down_exps.weight"};
  TensorName expert_gate_up{"model.layers.{}.mlp.experts.gate_up_proj", ""};  // fused [gate | up] rows
  TensorName expert_down_stacked{"model.layers.{}.mlp.experts.down_proj", ""};
  // Per-expert biases, stacked [E, n] (gpt-oss); absent by default.
  TensorName expert_gate_bias{"", ""};
  TensorName expert_up_bias{"", ""};
  TensorName expert_down_bias{"", ""};
  // Shared expert (empty = none): a gated MLP of width shared_expert_intermediate_size that every
  // token of an MoE layer runs beside its routed experts, its output scaled by
  // sigmoid(shexp_gate_inp · h) (a [1, H] gate; GGUF ffn_gate_inp_shexp) and added.
  TensorName shexp_gate{"", ""}, shexp_up{"", ""}, shexp_down{"", ""}, shexp_gate_inp{"", ""};
  // Gated DeltaNet (linear_attention layers; empty = the family has none). A GGUF's lin_A_log
  // holds −exp(A_log) (llama.cpp's ssm_a), turned back into A_log at load.
  TensorName lin_qkv{"", ""}, lin_z{"", ""}, lin_b{"", ""}, lin_a{"", ""}, lin_out{"", ""};
  TensorName lin_conv{"", ""}, lin_A_log{"", ""}, lin_dt_bias{"", ""}, lin_norm{"", ""};
  // An MoE block beside the dense MLP (ArchSpec::moe_beside_dense): the dense output's post-norm,
  // the experts' pre- and post-norms; the router's input scale [H] and per-expert weight scale [E].
  TensorName post_ffw_norm_1{"", ""}, pre_ffw_norm_2{"", ""}, post_ffw_norm_2{"", ""};
  TensorName router_scale{"", ""}, expert_scale{"", ""};
  // Per-layer input embeddings (PLE, width P): the table [V, L·P], the projection of the scaled
  // embedding [L·P, H] and its norm [P]; per layer the gate [P, H], the projection [H, P] and
  // its post-norm [H]. Empty = none.
  TensorName ple_embed{"", ""}, ple_model_proj{"", ""}, ple_proj_norm{"", ""};
  TensorName ple_gate{"", ""}, ple_proj{"", ""}, ple_post_norm{"", ""};
  /// A learned scalar [1] that multiplies the residual stream at the end of the layer.
  TensorName layer_scale{"", ""};
  /// Per-pair RoPE frequency divisors written by llama.cpp's converter (llama3: rope_freqs;
  /// Phi-3 longrope: rope_factors_long). GGUF only; HF computes them from rope_parameters.
  std::string gguf_rope_factors = "rope_freqs.weight";
  // Encoders (ArchSpec::encoder; empty = none): absolute position and token-type embeddings,
  // the LayerNorm after the embeddings, and the biases of the post-LayerNorm blocks (attn_norm is
  // the LayerNorm after attention, ffn_norm the one after the MLP).
  TensorName pos_embed{"", ""};
  TensorName type_embed{"", ""};
  TensorName embed_norm{"", ""};
  TensorName embed_norm_bias{"", ""};
  TensorName attn_norm_bias{"", ""};
  TensorName ffn_norm_bias{"", ""};
  TensorName up_bias{"", ""};
  TensorName down_bias{"", ""};
  /// Sequence-classification head (cross-encoder rerankers): optional dense + tanh pooler on the
  /// first token (a decoder's: the last), then the classifier [num_labels, H] (+ bias). Absent = an
  /// embedding model. GGUF names: llama.cpp's, for any family (a rank GGUF; model_config_gguf.cc).
  TensorName cls_dense{"", "cls.weight"};
  TensorName cls_dense_bias{"", "cls.bias"};
  TensorName cls_out{"", "cls.output.weight"};
  TensorName cls_out_bias{"", "cls.output.bias"};
};

struct ArchSpec {
  std::string family;  // loader::ModelConfig::family
  TensorNames names;
  backend::Activation act = backend::Activation::SILU;
  /// HF checkpoints store w of a x̂·(1 + w) RMSNorm (Gemma); GGUF converters bake the +1 in.
  bool norm_one_plus_in_hf = false;
  /// h0 = embed · √hidden_size (Gemma).
  bool embed_scale_sqrt_hidden = false;
  /// llama.cpp's NORM rope: its converter permuted Q/K rows per head so the GGUF pairs dims
  /// (2i, 2i+1). We keep the file as is and rotate interleaved pairs (no load-time copy).
  bool gguf_rope_interleaved = false;
  /// q_proj rows are per head [query | gate] (Qwen3.5): attention output · sigmoid(gate) before o_proj.
  bool attn_output_gate = false;
  /// GGUF Gated DeltaNet value heads in tiled order (llama.cpp's qwen35 converter): position
  /// vi·Hk + ki holds the HF head ki·(Hv/Hk) + vi in every value-head-indexed tensor (attn_qkv's
  /// v rows, attn_gate, ssm_alpha/beta, ssm_a, ssm_dt, ssm_conv1d's v channels, ssm_out's
  /// columns). model/weights.cc restores the HF grouped order at load.
  bool gguf_lin_v_heads_tiled = false;
  /// The GGUF arch ignores the HF sliding window (llama.cpp's `llama` for Mistral).
  bool gguf_ignores_sliding_window = false;
  /// q_norm / k_norm span the whole projection ([nh·hd], [nkv·hd]) instead of one head (OLMoE).
  bool qk_norm_full_width = false;
  /// MoE routing (backend::RouterParams; top_k and norm_topk_prob come from the config).
  backend::RouterScoring router_scoring = backend::RouterScoring::SOFTMAX;
  bool router_softmax_after_topk = false;
  /// Hugging Face fused experts stored input-major with gate/up interleaved (gpt-oss): gate_up
  /// [E, H, 2I] (even columns gate), down [E, I, H], the gate_up bias [E, 2I] (split into the
  /// expert_gate_bias / expert_up_bias names), or MXFP4 `<name>_blocks` / `<name>_scales`.
  /// Rewritten at load into the stacked [E, 2I, H] / [E, H, I] layout (model/experts_layout.h).
  bool hf_experts_input_major = false;  // gpt-oss: top-k of the logits, then softmax over those
  /// > 0: the q·k scale whatever the head_dim (Gemma 4: 1, the q/k norms stand in for 1/√d).
  float attention_scale = 0.0f;
  /// v is RMS-normed (no weight) per head before it is cached (Gemma 4).
  bool attn_v_norm = false;
  /// A layer whose checkpoint has no v projection uses the raw k projection (before k_norm and
  /// RoPE) as v (Gemma 4 attention_k_eq_v full layers).
  bool v_from_k_when_absent = false;
  /// MoE layers keep their dense MLP (Gemma 4): m = post_ffw_norm_1(mlp(ffn_norm(x))) +
  /// post_ffw_norm_2(experts(pre_ffw_norm_2(x))), the router reading x̂·router_scale·H^-½ and each
  /// routing weight (softmax, top-k, renormalised) times expert_scale[e]; then post_ffw_norm(m).
  bool moe_beside_dense = false;
  /// PLE (the names above; ModelConfig::hidden_size_per_layer_input = P): per token
  /// ple = (norm(h0·W_projᵀ·H^-½) + table[id]·√P)·2^-½, split in L rows of P; layer l adds
  /// post_norm(W_proj_l(gelu_tanh(W_gate_l·x) ⊙ ple_l)) to x after its MLP.
  /// Multimodal wrappers keep the text model under another prefix: when an HF name is absent,
  /// each (from, to) whose `from` begins it is tried with that prefix replaced, in order
  /// (transformers v5 `model.language_model.`, v4 `language_model.model.`). Other tensors of the
  /// checkpoint (a vision tower, a projector) are never read.
  std::vector<std::pair<std::string, std::string>> hf_prefix_fallbacks;
  /// An encoder (BERT): word + absolute position (+ ModelConfig::position_offset) + token-type
  /// embeddings, then LayerNorm; post-LayerNorm blocks x = LN(x + attn(x)), x = LN(x + mlp(x))
  /// with a plain (ungated) MLP up → act → down and biases; bidirectional attention; no lm_head.
  /// Such a model only runs Transformer::encode.
  bool encoder = false;
};

}  // namespace oxyd::model
