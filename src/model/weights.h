// Weights: the tensors of one model, viewed in place in the mmapped GGUF or safetensors file
// (any weight format; quantization is a property of each weight). Load-time fix-ups live here
// and only here: fused q/k/v and gate/up are split into row views (no copy), Gemma's HF x̂·(1+w)
// norms become plain weights, every 1-D tensor (norms, biases) is converted to F32, FP8 / AWQ /
// GPTQ linears of a safetensors checkpoint are repacked once to Q8_0 / Q4_1 (loader/quant_checkpoint.h;
// that copy is the only one, not packed again), and the 2-D weights the CPU matmul reads faster
// in its own layout get a packed copy (Backend::prepare).
// Invariant: a LayerWeights tensor with data == nullptr is absent (the transformer skips it).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "backend/op_params.h"
#include "core/tensor.h"
#include "loader/gguf.h"
#include "loader/model_config.h"
#include "model/arch.h"

namespace oxyd::model {

struct LayerWeights {
  Tensor attn_norm, q, k, v, o;            // q [nh·hd, H], k/v [nkv·hd, H], o [H, nh·hd]
  Tensor q_bias, k_bias, v_bias;           // [nh·hd], [nkv·hd] F32 or absent
  Tensor o_bias;                           // [H] F32 or absent
  Tensor sinks;                            // [nh] F32 attention sink logits or absent
  Tensor q_norm, k_norm;                   // [hd] F32 or absent
  Tensor post_attn_norm, ffn_norm, post_ffw_norm;  // [H] F32 (post_* absent unless sandwich)
  Tensor gate, up, down;                   // gate/up [I, H], down [H, I] (absent on an MoE layer)
  // Mixture of experts (present iff router.data): experts[e] are 2-D views of the expert's rows in
  // the stacked or per-expert checkpoint tensors (no copy). Biases are F32 or absent.
  Tensor router, router_bias;              // [E, H], [E]
  /// gate/up [I_moe, H], down [H, I_moe]; biases [I_moe], [I_moe], [H] or absent.
  using Expert = backend::ExpertWeights;
  std::vector<Expert> experts;             // [E]
  // ArchSpec::moe_beside_dense: the router input's norm weight (router_scale·H^-½, F32 [H]), the
  // per-expert scale of the routing weights (F32 [E]) and the block's three extra norms [H].
  Tensor router_norm, expert_scale;
  Tensor post_ffw_norm_1, pre_ffw_norm_2, post_ffw_norm_2;
  // Per-layer input embeddings: gate [P, H], projection [H, P], post-norm [H] F32 (or absent).
  Tensor ple_gate, ple_proj, ple_post_norm;
  float layer_scale = 1.0f;                // learned residual scale (ArchSpec names.layer_scale)
  // Shared expert of an MoE layer (absent unless the family names one): gate/up [I_s, H], down
  // [H, I_s], and its sigmoid gate [1, H] F32.
  Tensor shexp_gate, shexp_up, shexp_down, shexp_gate_inp;
  Tensor q_gate;                           // [nh·hd, H] output gate (ArchSpec::attn_output_gate) or absent
  // Gated DeltaNet (linear_attention layers; then q/k/v/o are absent). conv_dim = 2·Hk·dk + Hv·dv.
  Tensor lin_qkv, lin_z, lin_b, lin_a, lin_out;  // [conv_dim, H], [Hv·dv, H], [Hv, H], [Hv, H], [H, Hv·dv]
  Tensor lin_conv;                         // [conv_dim, K] F32
  Tensor lin_A_log, lin_dt_bias;           // [Hv] F32
  Tensor lin_norm;                         // [dv] F32 (a plain weight, no 1 + w)
  // Encoders (ArchSpec::encoder): LayerNorm and MLP biases, F32 or absent.
  Tensor attn_norm_bias, ffn_norm_bias;    // [H]
  Tensor up_bias, down_bias;               // [I], [H]
};

/// Whether decoder layer l of `config` is a mixture-of-experts layer. Hugging Face: transformers'
/// rule (num_experts > 0, l not in mlp_only_layers, (l + 1) % decoder_sparse_step == 0). GGUF, which
/// carries neither key: when `has_router(l)` (the file has the layer's router), or when it has no
/// dense MLP either (so a missing router is reported as such).
bool is_moe_layer(const loader::ModelConfig& config, int64_t l, const std::function<bool()>& has_router,
                  const std::function<bool()>& has_dense_mlp);

/// Whether the MoE layers of `config` have a shared expert in this format: the family names its
/// tensors and the config gives its width (shared_expert_intermediate_size > 0).
bool has_shared_expert(const loader::ModelConfig& config, const ArchSpec& spec, bool gguf);

/// Where the weights come from.
enum class WeightSource { GGUF, SAFETENSORS };

class Weights {
 public:
  /// Opens a .gguf file, or a Hugging Face directory / .safetensors file, and binds every tensor
  /// of `spec` for `config`. Missing required tensors and shape mismatches throw
  /// Error(INVALID_ARGUMENT) naming the file and tensor.
  /// `device`: where the forward pass runs. On the CPU the weights its matmul reads faster packed
  /// get their packed copies; for another device nothing is packed and the caller (Transformer::load,
  /// once it has read what it needs from the host rows) calls upload_to.
  /// `f32_as_bf16` (--dtype bf16): on the CPU, the layers' F32 matmul weights are held as BF16 rows
  /// instead (packed over themselves where the kernel wants them packed), the file's F32 pages
  /// released; the head, embeddings and 1-D tensors stay as stored.
  static std::unique_ptr<Weights> load(const std::string& path, const loader::ModelConfig& config,
                                       const ArchSpec& spec, Device device = Device::CPU, bool f32_as_bf16 = false);
  ~Weights();

  WeightSource source() const { return source_; }
  /// Bytes of the file this model reads in place through the mapping: the union of its 2-D
  /// weights' byte ranges (a tied head or fused qkv / gate_up views count once; metadata and
  /// unused tensors not at all).
  int64_t mapped_bytes() const;
  /// Bytes of the copies made at load (every 1-D tensor as F32, Gemma's 1 + w, rope factors,
  /// experts rewritten from another layout).
  int64_t owned_bytes() const;
  /// Copies every tensor into memory of `d`'s backend (one allocation, 256-byte aligned slices;
  /// a tensor bound twice, such as a tied head, is copied once) and rebinds it there; the host rows
  /// stay mapped. Error(UNSUPPORTED) naming the dtype, before anything is copied, when d's backend
  /// has no kernel for one of the weights.
  void upload_to(Device d);
  Tensor embed;        // [vocab, H]
  Tensor final_norm;   // [H] F32
  Tensor lm_head;      // [vocab, H] (the embedding when tied)
  Tensor ple_embed;      // [V_ple, L·P] per-layer input embeddings, or absent
  Tensor ple_model_proj; // [L·P, H]
  Tensor ple_proj_norm;  // [P] F32
  Tensor rope_factors; // [rot/2] F32 per-pair frequency divisors (GGUF llama3 / longrope) or absent
  // Encoders (ArchSpec::encoder); absent otherwise. lm_head is then absent too (no data, the
  // embedding's device).
  Tensor pos_embed;    // [max_position_embeddings, H]
  Tensor type_embed;   // [type_vocab_size, H]
  Tensor embed_norm, embed_norm_bias;  // [H] F32
  // Sequence-classification head (config.num_labels > 0): [H, H] + [H] F32 (optional), [labels, H] + [labels] F32.
  Tensor cls_dense, cls_dense_bias, cls_out, cls_out_bias;
  std::vector<LayerWeights> layers;

 private:
  Weights() = default;
  /// Gives every 2-D weight that the CPU matmul reads faster packed (backend Backend::wants_packed) its
  /// packed copy, owned here, and releases the file pages of the original rows.
  void pack_for_matmul(bool f32_as_bf16);
  backend::Allocation device_copy_;  // upload_to's
  struct Impl;
  std::unique_ptr<Impl> impl_;
  WeightSource source_ = WeightSource::GGUF;
};

/// One 2-D weight a matmul reads, as Weights::load binds it: rows [row0, row0 + rows) of the
/// checkpoint tensor `name` of layer `layer`, a [total_rows, cols] matrix (a fused qkv or gate_up
/// tensor is several of these).
/// Expert weights: `expert` >= 0; a stacked tensor [E, total_rows / E, cols] (GGUF *_exps, HF fused
/// experts) is read as [total_rows, cols] with row0 = expert · rows (+ the up half's offset); a
/// per-expert name ("{e}") names a 2-D tensor of its own.
struct MatmulWeightRef {
  enum class Slot { HEAD, Q, K, V, O, GATE, UP, DOWN, ROUTER, EXPERT_GATE, EXPERT_UP, EXPERT_DOWN,
                    LIN_QKV, LIN_Z, LIN_B, LIN_A, LIN_OUT, PLE_MODEL_PROJ, PLE_GATE, PLE_PROJ, SHEXP_GATE, SHEXP_UP,
                    SHEXP_DOWN } slot;
  const TensorName* name;  // in spec.names
  int64_t layer, row0, rows, total_rows, cols;
  int64_t expert = -1;
};

/// The matmul weights of a model of `config`: the head (lm_head unless tied or absent, else the
/// embedding), then per layer q, k, v (or the fused qkv), o, gate, up (or gate_up), down; an MoE
/// layer has the router and every expert's gate, up, down instead of the dense three, then its
/// shared expert's gate, up, down where the family names one.
/// `exists(name, layer)` says whether the checkpoint has a tensor, to choose between the fused
/// and separate names and the head's. Weights::load and packed_weight_extra_bytes both bind
/// through this, so the estimate counts the weights the engine packs.
std::vector<MatmulWeightRef> matmul_weight_refs(const loader::ModelConfig& config, const ArchSpec& spec,
                                                const std::function<bool(const TensorName&, int64_t)>& exists);
/// `name` with "{}" replaced by the layer and "{e}" by the expert (when expert >= 0).
std::string tensor_name(const std::string& name, int64_t layer, int64_t expert = -1);

/// What the packed copies Weights::load makes on this machine (pack_for_matmul: every weight of
/// matmul_weight_refs) hold beyond the file rows they replace, for a GGUF of `config` with this
/// tensor table: from the header alone, for `oxydllm estimate`. Tensors the binding would not find
/// count 0.
int64_t packed_weight_extra_bytes(const loader::ModelConfig& config, const ArchSpec& spec,
                                  const std::vector<loader::GgufTensorInfo>& tensors);
/// The same with the spec of config.family; 0 for a family the engine lacks (it would not load).
int64_t packed_weight_extra_bytes(const loader::ModelConfig& config,
                                  const std::vector<loader::GgufTensorInfo>& tensors);

/// Whether Weights::load holds checkpoint tensor `name` (a safetensors name, any wrapper prefix) as
/// an F32 copy although it is not 1-D: a Gated DeltaNet's conv1d and a shared expert's gate, which
/// it binds as vectors, by config.family's tensor names. For `oxydllm estimate`.
bool held_as_f32_copy(const loader::ModelConfig& config, const std::string& name);

}  // namespace oxyd::model
