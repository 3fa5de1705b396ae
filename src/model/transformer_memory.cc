// Memory accounting of a loaded Transformer (see transformer.h): what it holds now, and the
// workspace forward() reaches for a step budget, computed from the same shapes forward() and the
// layers resize their buffers to. A test keeps the two equal after a full-length prefill.
#include <algorithm>

#include "model/transformer.h"
#include "ops/dispatch.h"

namespace oxyd::model {
namespace {

int64_t capacity_bytes(const Workspace& w) { return w.capacity_bytes(); }
int64_t size_bytes(const Workspace& w) { return w.size_bytes(); }

}  // namespace

MemoryUsage Transformer::memory_usage() const {
  MemoryUsage u;
  u.weights_mapped = weights_->mapped_bytes();
  u.weights_owned = weights_->owned_bytes();
  for (const auto* v : {&moe_in_, &moe_out_, &ple_, &ple_tmp_, &ple_l_, &ple_g_}) {
    u.workspace += capacity_bytes(*v);
    u.workspace_used += size_bytes(*v);
  }
  for (const auto* v : {&x_, &h_, &sel_, &attn_ws_.q, &attn_ws_.k, &attn_ws_.v, &attn_ws_.out, &attn_ws_.gate,
                        &mlp_ws_.gate, &mlp_ws_.up, &moe_ws_.logits, &moe_ws_.ids, &moe_ws_.weights, &moe_ws_.rows,
                        &moe_ws_.gather, &moe_ws_.offsets, &moe_ws_.xs, &moe_ws_.ys, &lin_ws_.mixed, &lin_ws_.qkv, &lin_ws_.z, &lin_ws_.a, &lin_ws_.b,
                        &lin_ws_.core}) {
    u.workspace += capacity_bytes(*v);
    u.workspace_used += size_bytes(*v);
  }
  const backend::Backend& be = ops::device_backend(weights_->lm_head.device);
  u.workspace += int64_t(logits_.size()) + be.matmul_scratch_held();
  u.workspace_used += int64_t(sizeof(float)) * std::max<int64_t>(last_num_logits_, 1) * config_.vocab_size +
                      be.matmul_scratch_used();
  return u;
}

// The largest matmul activation scratch of a step: every layer matmul runs on T rows, the head
// on R rows.
static int64_t max_scratch(const Weights& w, const loader::ModelConfig& c, int64_t T, int64_t R) {
  const int64_t H = c.hidden_size;
  const backend::Backend& be = ops::device_backend(w.lm_head.device);
  int64_t m = R > 0 ? be.matmul_scratch_bytes(w.lm_head.dtype, R, H) : 0;
  if (w.ple_model_proj.data) m = std::max(m, be.matmul_scratch_bytes(w.ple_model_proj.dtype, T, H));
  for (const Tensor* t : {&w.cls_dense, &w.cls_out})  // a classification head, on at most T rows
    if (t->data) m = std::max(m, be.matmul_scratch_bytes(t->dtype, T, H));
  for (const LayerWeights& L : w.layers) {
    for (const Tensor* t : {&L.q, &L.k, &L.v, &L.q_gate, &L.lin_qkv, &L.lin_z, &L.lin_a, &L.lin_b, &L.ple_gate})
      if (t->data) m = std::max(m, be.matmul_scratch_bytes(t->dtype, T, H));
    for (const Tensor* t : {&L.lin_out, &L.o, &L.ple_proj})
      if (t->data) m = std::max(m, be.matmul_scratch_bytes(t->dtype, T, t->cols()));
    if (L.up.data) {  // the dense MLP (also beside an MoE block; an encoder's has no gate)
      for (const Tensor* t : {&L.gate, &L.up})
        if (t->data) m = std::max(m, be.matmul_scratch_bytes(t->dtype, T, H));
      m = std::max(m, be.matmul_scratch_bytes(L.down.dtype, T, L.down.cols()));
    }
    if (!L.router.data) continue;
    // MoE: the router on T rows; the experts' grouped matmuls on all T·k gathered rows at once, or
    // (a backend without a grouped form) one expert on at most T rows (it is picked once a token).
    m = std::max(m, be.matmul_scratch_bytes(L.router.dtype, T, H));
    const int64_t N = T * c.num_experts_per_tok;
    for (const LayerWeights::Expert& x : L.experts) {
      for (const Tensor* t : {&x.gate, &x.up}) m = std::max(m, be.matmul_scratch_bytes(t->dtype, N, H));
      m = std::max(m, be.matmul_scratch_bytes(x.down.dtype, N, x.down.dim(1)));
    }
    for (const Tensor* t : {&L.shexp_gate, &L.shexp_up, &L.shexp_gate_inp})  // the shared expert on T rows
      if (t->data) m = std::max(m, be.matmul_scratch_bytes(t->dtype, T, H));
    if (L.shexp_down.data) m = std::max(m, be.matmul_scratch_bytes(L.shexp_down.dtype, T, L.shexp_down.dim(1)));
  }
  return m;
}

// The widest gate / up rows per token of any layer: its dense MLP (an encoder's has no gate), k
// routed experts, or its shared expert; and whether some layer has experts / a shared expert.
static int64_t gate_up_per_token(const Weights& w, const loader::ModelConfig& c, bool* moe, bool* shared) {
  int64_t dense = 0;
  *moe = *shared = false;
  for (const LayerWeights& L : w.layers) {
    if (L.up.data) dense = std::max(dense, L.up.dim(0));
    if (L.router.data) *moe = true;
    if (L.shexp_down.data) *shared = true;
  }
  const int64_t k = c.num_experts_per_tok;
  return std::max({dense, *moe ? k * c.moe_intermediate_size : 0, *shared ? c.shared_expert_intermediate_size : 0});
}

// Per-token floats of the MLP workspaces: gate / up of the widest dense or grouped-expert step,
// and for MoE layers the router logits, ids / weights / rows / gather, and the gathered inputs and
// outputs (the E + 1 expert offsets are counted once per step, in workspace_bytes); with a shared
// expert, its gate / up, and one more weight, row and output per token.
static int64_t mlp_floats_per_token(const Weights& w, const loader::ModelConfig& c) {
  bool moe, shared;
  const int64_t gate_up = gate_up_per_token(w, c, &moe, &shared);
  const int64_t k = c.num_experts_per_tok, ks = k + (shared ? 1 : 0), H = c.hidden_size;
  // logits, ids + gather, weights + rows, xs, ys
  return 2 * gate_up + (moe ? c.num_experts + 2 * k + 2 * ks + k * H + ks * H : 0);
}

// The widest q and k/v rows of any attention layer.
static std::pair<int64_t, int64_t> attn_widths(const std::vector<layers::AttentionSpec>& attn) {
  int64_t q = 0, kv = 0;
  for (const layers::AttentionSpec& a : attn) {
    q = std::max(q, a.num_heads * a.head_dim);
    kv = std::max(kv, a.num_kv_heads * a.head_dim);
  }
  return {q, kv};
}

// Per-token floats of the MoE-beside-dense inputs / outputs and the per-layer inputs.
static int64_t aux_floats_per_token(const Weights& w, const loader::ModelConfig& c) {
  bool beside = false;
  for (const LayerWeights& L : w.layers) beside = beside || L.router_norm.data;
  const int64_t P = w.ple_embed.data ? c.hidden_size_per_layer_input : 0;
  return (beside ? 2 * c.hidden_size : 0) + 2 * c.num_hidden_layers * P + 2 * P;
}

int64_t Transformer::gated_width() const {
  int64_t w = spec_->attn_output_gate ? attn_widths(attn_).first : 0;
  if (has_linear_) w += 2 * lin_.conv_dim() + 2 * lin_.num_v_heads * lin_.head_v_dim + 2 * lin_.num_v_heads;
  return w;
}

int64_t Transformer::workspace_bytes(int64_t T, int64_t R) const {
  const loader::ModelConfig& c = config_;
  const int64_t H = c.hidden_size;
  const auto [q_dim, kv_dim] = attn_widths(attn_);
  const int64_t floats = T * (2 * H                        // x_, h_: residual stream, normed / branch
                              + aux_floats_per_token(*weights_, c)  // MoE beside dense, PLE
                              + 2 * q_dim + 2 * kv_dim     // attention q, out; k, v
                              + mlp_floats_per_token(*weights_, c)  // mlp gate, up; MoE buffers
                              + gated_width())             // output gate, DeltaNet buffers
                         + R * H                           // sel_: rows that need logits
                         + std::max<int64_t>(R, 1) * c.vocab_size  // logits_
                         + (c.num_experts > 0 ? c.num_experts + 1 : 0);  // MoE expert offsets
  return floats * int64_t(sizeof(float)) + max_scratch(*weights_, c, T, R);
}

void Transformer::reserve_workspace(int64_t max_num_tokens, int64_t max_num_logits) {
  ws_tokens_ = std::max(ws_tokens_, max_num_tokens);
  ws_logits_ = std::max(ws_logits_, max_num_logits);
  const int64_t T = ws_tokens_, R = ws_logits_;
  const loader::ModelConfig& c = config_;
  const int64_t H = c.hidden_size;
  const auto [q_dim, kv_dim] = attn_widths(attn_);
  x_.reserve(size_t(T * H));
  {
    bool beside = false;
    for (const LayerWeights& L : weights_->layers) beside = beside || L.router_norm.data;
    if (beside) for (Workspace* w : {&moe_in_, &moe_out_}) w->reserve(size_t(T * H));
    if (const int64_t P = weights_->ple_embed.data ? c.hidden_size_per_layer_input : 0; P > 0) {
      for (Workspace* w : {&ple_, &ple_tmp_}) w->reserve(size_t(T * c.num_hidden_layers * P));
      for (Workspace* w : {&ple_l_, &ple_g_}) w->reserve(size_t(T * P));
    }
  }
  h_.reserve(size_t(T * H));
  sel_.reserve(size_t(R * H));
  attn_ws_.q.reserve(size_t(T * q_dim));
  attn_ws_.out.reserve(size_t(T * q_dim));
  attn_ws_.k.reserve(size_t(T * kv_dim));
  attn_ws_.v.reserve(size_t(T * kv_dim));
  bool moe, shared;
  const int64_t gate_up = gate_up_per_token(*weights_, c, &moe, &shared);
  const int64_t k = c.num_experts_per_tok, ks = k + (shared ? 1 : 0);  // ks: routed + shared rows
  mlp_ws_.gate.reserve(size_t(T * gate_up));
  mlp_ws_.up.reserve(size_t(T * gate_up));
  if (moe) {
    moe_ws_.logits.reserve(size_t(T * c.num_experts));
    for (Workspace* w : {&moe_ws_.ids, &moe_ws_.gather}) w->reserve(size_t(T * k));
    for (Workspace* w : {&moe_ws_.weights, &moe_ws_.rows}) w->reserve(size_t(T * ks));
    moe_ws_.offsets.reserve(size_t(c.num_experts + 1));
    moe_ws_.xs.reserve(size_t(T * k * H));
    moe_ws_.ys.reserve(size_t(T * ks * H));
  }
  if (spec_->attn_output_gate) attn_ws_.gate.reserve(size_t(T * q_dim));
  if (has_linear_) {
    const int64_t C = lin_.conv_dim(), vd = lin_.num_v_heads * lin_.head_v_dim;
    lin_ws_.mixed.reserve(size_t(T * C));
    lin_ws_.qkv.reserve(size_t(T * C));
    lin_ws_.z.reserve(size_t(T * vd));
    lin_ws_.core.reserve(size_t(T * vd));
    lin_ws_.a.reserve(size_t(T * lin_.num_v_heads));
    lin_ws_.b.reserve(size_t(T * lin_.num_v_heads));
  }
  if (const size_t need = sizeof(float) * std::max<int64_t>(R, 1) * c.vocab_size; logits_.size() < need)
    logits_ = ops::device_backend(weights_->lm_head.device).allocate(need);
  reserved_scratch_bytes_ = max_scratch(*weights_, c, T, R);
  ops::device_backend(weights_->lm_head.device).matmul_reserve_scratch(reserved_scratch_bytes_);
}

}  // namespace oxyd::model
