// The decoder forward pass (see transformer.h). Per layer:
//   x += residual_multiplier · [post_attn_norm](self_attention(attn_norm(x)))
//   x += residual_multiplier · [post_ffw_norm](gated_mlp or moe_mlp(ffn_norm(x)))
// then final norm and head on the logits rows only. Load-time choices (rope tables, per-layer
// windows, scales) are made once in load(); layers/ holds the blocks.
#include "model/transformer.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <optional>

#include "core/error.h"
#include "model/archs/registry.h"
#include "model/model_config.h"
#include "ops/elementwise.h"
#include "ops/embedding.h"
#include "ops/matmul.h"
#include "ops/activation.h"
#include "ops/dispatch.h"
#include "ops/rms_norm.h"
#include "ops/rope_scaling.h"

namespace oxyd::model {
namespace {

namespace fs = std::filesystem;

Tensor f32(const Workspace& w, std::initializer_list<int64_t> dims) { return w.view(dims); }

ops::RopeScaling to_scaling(const loader::RopeParameters& p, const loader::ModelConfig& c,
                            bool use_tensor_factors) {
  ops::RopeScaling s;
  auto type = ops::rope_type_from_name(p.rope_type);
  if (!type)
    throw Error(ErrorCode::UNSUPPORTED, c.source + ": rope_type '" + p.rope_type + "' is not supported");
  s.rope_type = use_tensor_factors ? ops::RopeType::DEFAULT : *type;
  s.rope_theta = p.rope_theta;
  s.partial_rotary_factor = p.partial_rotary_factor;
  // longrope: HF derives the factor from max_position / original_max_position (Phi-3 configs
  // carry no `factor`; ModelConfig's default 1.0 would switch the attention factor off).
  if (s.rope_type != ops::RopeType::DEFAULT && s.rope_type != ops::RopeType::LONGROPE) s.factor = p.factor;
  s.max_position_embeddings = c.max_position_embeddings;
  s.original_max_position_embeddings = p.original_max_position_embeddings.value_or(0);
  s.low_freq_factor = p.low_freq_factor;
  s.high_freq_factor = p.high_freq_factor;
  s.beta_fast = p.beta_fast;
  s.beta_slow = p.beta_slow;
  s.mscale = p.mscale;
  s.mscale_all_dim = p.mscale_all_dim;
  s.attention_factor = p.attention_factor;
  s.truncate = p.truncate;
  s.short_factor = p.short_factor;
  s.long_factor = p.long_factor;
  return s;
}

}  // namespace

std::unique_ptr<Transformer> Transformer::load(const std::string& path, Device device, bool f32_as_bf16) {
  std::unique_ptr<Transformer> t(new Transformer());
  t->device_ = device;
  if (fs::is_directory(path)) {
    t->config_ = load_hf_config((fs::path(path) / "config.json").string());
  } else if (fs::path(path).extension() == ".gguf") {
    t->config_ = model_config_from_gguf(loader::GgufFile::open(path));
  } else {
    throw Error(ErrorCode::INVALID_ARGUMENT,
                path + ": expected a .gguf file or a directory with config.json and *.safetensors");
  }
  const loader::ModelConfig& c = t->config_;
  t->spec_ = &arch_spec(c.family);
  if (c.clip_qkv && !(*c.clip_qkv > 0))
    throw Error(ErrorCode::INVALID_ARGUMENT, c.source + ": clip_qkv must be > 0");
  const bool linear = std::count(c.layer_types.begin(), c.layer_types.end(), loader::kLinearAttention) > 0;
  if (linear && (c.gguf_arch.empty() ? t->spec_->names.lin_qkv.hf : t->spec_->names.lin_qkv.gguf).empty())
    throw Error(ErrorCode::UNSUPPORTED, c.source + ": linear_attention (Gated DeltaNet) layers are not supported "
                                                   "for this family from this format");
  t->weights_ = Weights::load(path, c, *t->spec_, device, f32_as_bf16);  // still host rows: uploaded at the end
  const Device dev = device;  // the workspaces live where the weights will
  for (Workspace* w : {&t->moe_in_, &t->moe_out_, &t->ple_, &t->ple_tmp_, &t->ple_l_, &t->ple_g_})
    w->set_device(dev);
  for (Workspace* w : {&t->x_, &t->h_, &t->sel_, &t->attn_ws_.q, &t->attn_ws_.k, &t->attn_ws_.v, &t->attn_ws_.out,
                       &t->mlp_ws_.gate, &t->mlp_ws_.up, &t->moe_ws_.logits, &t->moe_ws_.ids, &t->moe_ws_.weights,
                       &t->moe_ws_.rows, &t->moe_ws_.gather, &t->moe_ws_.offsets, &t->moe_ws_.xs, &t->moe_ws_.ys})
    w->set_device(dev);
  t->moe_.route.scoring = t->spec_->router_scoring;
  t->moe_.route.softmax_after_topk = t->spec_->router_softmax_after_topk;
  t->moe_.route.top_k = static_cast<int>(c.num_experts_per_tok);
  t->moe_.route.norm_topk_prob = c.norm_topk_prob;
  t->moe_.act = t->spec_->act;
  // gpt-oss's clamped SwiGLU (ops::glu_oai) where the config carries a limit.
  t->moe_.swiglu_limit = static_cast<float>(c.swiglu_limit);
  t->moe_.swiglu_alpha = static_cast<float>(c.swiglu_alpha);
  for (Workspace* w : {&t->attn_ws_.gate, &t->lin_ws_.mixed, &t->lin_ws_.qkv, &t->lin_ws_.z, &t->lin_ws_.a,
                       &t->lin_ws_.b, &t->lin_ws_.core})
    w->set_device(dev);
  const bool gguf = t->weights_->source() == WeightSource::GGUF;

  float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(c.head_dim)));
  if (t->spec_->attention_scale > 0) scale = t->spec_->attention_scale;
  else if (c.attention_multiplier) scale = static_cast<float>(*c.attention_multiplier);
  else if (c.query_pre_attn_scalar) scale = static_cast<float>(1.0 / std::sqrt(*c.query_pre_attn_scalar));

  const int64_t L = c.num_hidden_layers;
  if (static_cast<int64_t>(c.layer_types.size()) != L)
    throw Error(ErrorCode::INVALID_ARGUMENT, c.source + ": layer_types must have one entry per layer");
  t->rope_.reserve(L);  // attn_[l].rope points into rope_
  for (int64_t l = 0; l < L; ++l) {
    const std::string& lt = c.layer_types[l];
    t->kv_layer_.push_back(l);
    if (lt == loader::kLinearAttention) {
      t->has_linear_ = true;
      t->lin_ = {c.linear_num_key_heads, c.linear_num_value_heads, c.linear_key_head_dim, c.linear_value_head_dim,
                 c.linear_conv_kernel_dim, static_cast<float>(c.rms_norm_eps)};
      t->rope_.emplace_back();  // keeps rope_ / attn_ indexed by layer
      t->attn_.emplace_back();
      continue;
    }
    const bool sliding = lt == loader::kSlidingAttention && c.sliding_window &&
                         !(gguf && t->spec_->gguf_ignores_sliding_window);
    // GGUF per-pair factors (llama3 rope_freqs, Phi-3 rope_factors_long) apply to global layers.
    const bool tensor_factors = gguf && t->weights_->rope_factors.data && lt == loader::kFullAttention;
    const loader::RopeParameters& rp = c.rope(lt);
    const loader::ModelConfig::LayerDims d = c.layer_dims(l);
    t->kv_layer_.back() = d.kv_layer;
    // longrope. GGUF: llama.cpp's rule, one table per context (the rope_factors_long tensor when
    // the context exceeds the original one: llama.cpp picks by n_ctx, not by sequence length).
    // HF weights: transformers' rule, which is what its generate() returns: a sequence of at most
    // original_max_position_embeddings tokens rotates every key with the short factors, a longer one
    // every key with the long factors; Phi3ForCausalLM drops its KV cache and recomputes once a
    // sequence grows past the switch, and the scheduler does the same (rope_switch_len()).
    const ops::RopeScaling scaling = to_scaling(rp, c, tensor_factors);
    ops::RopeFrequencies fr = ops::rope_frequencies(scaling, d.head_dim, c.max_position_embeddings);
    layers::RopeTable rt;
    rt.inv_freq = fr.inv_freq;
    rt.attention_factor = fr.attention_factor;
    if (scaling.rope_type == ops::RopeType::LONGROPE) {
      const int64_t orig = scaling.original_max_position_embeddings > 0 ? scaling.original_max_position_embeddings
                                                                         : c.max_position_embeddings;
      rt.inv_freq = ops::rope_frequencies(scaling, d.head_dim, orig + 1).inv_freq;
      rt.short_inv_freq = ops::rope_frequencies(scaling, d.head_dim, orig).inv_freq;
      if (rt.short_inv_freq != rt.inv_freq) {
        rt.switch_len = orig;
        t->rope_switch_len_ = t->rope_switch_len_ ? std::min(t->rope_switch_len_, orig) : orig;
      } else {
        rt.short_inv_freq.clear();
      }
    }
    if (tensor_factors) {
      const Tensor& f = t->weights_->rope_factors;
      if (f.numel() != static_cast<int64_t>(rt.inv_freq.size()))
        throw Error(ErrorCode::INVALID_ARGUMENT, c.source + ": rope factors tensor has " +
                                                     std::to_string(f.numel()) + " entries, expected " +
                                                     std::to_string(rt.inv_freq.size()));
      rt.freq_factors.assign(f.ptr<float>(), f.ptr<float>() + f.numel());
      if (rp.attention_factor) rt.attention_factor = static_cast<float>(*rp.attention_factor);
    }
    rt.style = gguf && t->spec_->gguf_rope_interleaved ? backend::RopeStyle::INTERLEAVED
                                                       : backend::RopeStyle::NEOX;
    t->rope_.push_back(std::move(rt));
    layers::AttentionSpec as;
    as.num_heads = c.num_attention_heads;
    as.num_kv_heads = d.num_kv_heads;
    as.head_dim = d.head_dim;
    as.v_norm = t->spec_->attn_v_norm;
    as.reuse_kv = d.kv_layer != l;
    as.rms_norm_eps = static_cast<float>(c.rms_norm_eps);
    as.scale = scale;
    as.logit_softcap = static_cast<float>(c.attn_logit_softcapping.value_or(0.0));
    as.sliding_window = sliding ? static_cast<int>(*c.sliding_window) : 0;
    as.qk_norm_full_width = t->spec_->qk_norm_full_width;
    as.clip_qkv = static_cast<float>(c.clip_qkv.value_or(0.0));
    as.rope = t->spec_->encoder ? nullptr : &t->rope_.back();  // encoders: absolute positions
    if (rp.llama_4_scaling_beta && *rp.llama_4_scaling_beta != 0.0) {
      if (!rp.original_max_position_embeddings || *rp.original_max_position_embeddings <= 0)
        throw Error(ErrorCode::INVALID_ARGUMENT,
                    c.source + ": llama_4_scaling_beta needs original_max_position_embeddings (the position "
                               "divisor of the query temperature) in rope_parameters");
      as.temperature_beta = static_cast<float>(*rp.llama_4_scaling_beta);
      as.temperature_floor = *rp.original_max_position_embeddings;
    }
    t->attn_.push_back(as);
  }
  for (int64_t l = 0; l < L; ++l) {
    const LayerWeights& lw = t->weights_->layers[l];
    if (lw.router.data && t->spec_->moe_beside_dense && !lw.gate.data)
      throw Error(ErrorCode::INVALID_ARGUMENT, c.source + ": layer " + std::to_string(l) +
                                                   " has an MoE block but no dense MLP beside it");
  }
  // Last: the tables above read host rows (rope factors).
  if (device != Device::CPU) t->weights_->upload_to(device);
  for (layers::RopeTable& rt : t->rope_) layers::place_rope_table(rt, device);
  bool host_choice = t->has_linear_ || t->rope_switch_len_ > 0;
  for (const layers::RopeTable& rt : t->rope_) host_choice = host_choice || rt.short_inv.data;
  const char* env = std::getenv("OXYD_STEP_GRAPHS");
  t->graphs_allowed_ = device != Device::CPU && !host_choice;
  t->graphs_on_ = t->graphs_allowed_ && !(env && std::string(env) == "0");
  return t;
}

Transformer::~Transformer() {
  if (graphs_.held() > 0) release_step_graphs(graphs_, ops::device_backend(device_));
}

void Transformer::enable_step_graphs(bool on) {
  if (!on && graphs_.held() > 0) release_step_graphs(graphs_, ops::device_backend(device_));
  graphs_on_ = on && graphs_allowed_;
}

KvCache Transformer::make_kv_cache(int64_t num_blocks, int64_t block_size, KvFormat format,
                                   int64_t num_state_slots) const {
  std::vector<KvCache::LayerShape> shapes(static_cast<size_t>(config_.num_hidden_layers));
  for (int64_t l = 0; l < config_.num_hidden_layers; ++l)
    if (config_.layer_types[l] != loader::kLinearAttention && kv_layer_[l] == l)
      shapes[l] = {attn_[l].num_kv_heads, attn_[l].head_dim};
  KvCache cache(shapes, num_blocks, block_size, format, device_);
  for (int64_t l = 0; l < config_.num_hidden_layers; ++l)
    if (config_.layer_types[l] == loader::kLinearAttention)
      cache.add_linear_state(l, num_state_slots, lin_.conv_kernel - 1, lin_.conv_dim(), lin_.num_v_heads,
                             lin_.head_k_dim, lin_.head_v_dim);
  return cache;
}

int64_t Transformer::kv_bytes_per_token(KvFormat format) const {
  int64_t total = 0;
  for (int64_t l = 0; l < config_.num_hidden_layers; ++l)
    if (config_.layer_types[l] != loader::kLinearAttention && kv_layer_[l] == l)
      total += 2 * attn_[l].num_kv_heads * kv_format_row_bytes(format, attn_[l].head_dim);
  return total;
}

void Transformer::validate(const ForwardBatch& b, const KvCache& cache) const {
  const int64_t T = b.num_tokens(), R = b.num_reqs();
  auto bad = [](const std::string& m) { throw Error(ErrorCode::INVALID_ARGUMENT, "ForwardBatch: " + m); };
  if (T == 0) bad("no tokens");
  if (static_cast<int64_t>(b.positions.size()) != T || static_cast<int64_t>(b.slot_mapping.size()) != T)
    bad("positions and slot_mapping must have num_tokens = " + std::to_string(T) + " entries");
  if (static_cast<int64_t>(b.query_start_loc.size()) != R + 1) bad("query_start_loc must have num_reqs + 1 entries");
  if (b.max_blocks_per_req <= 0 || static_cast<int64_t>(b.block_table.size()) != R * b.max_blocks_per_req)
    bad("block_table must be [num_reqs, max_blocks_per_req]");
  for (int32_t i : b.logits_indices)
    if (i < 0 || i >= T) bad("logits index " + std::to_string(i) + " outside [0, num_tokens)");
  for (int32_t p : b.positions)
    if (p < 0) bad("negative position");
  for (int64_t i = 0; i < T; ++i)  // checked here, on the host, whatever device runs the step
    if (b.token_ids[i] < 0 || b.token_ids[i] >= weights_->embed.dim(0))
      bad("token id " + std::to_string(b.token_ids[i]) + " at position " + std::to_string(i) +
          " is outside the vocabulary [0, " + std::to_string(weights_->embed.dim(0)) + ")");
  if (cache.num_blocks() <= 0) bad("empty KV cache");
  if (!b.rope_lens.empty()) {
    if (static_cast<int64_t>(b.rope_lens.size()) != R) bad("rope_lens must be empty or have num_reqs entries");
    for (int64_t r = 0; r < R; ++r)
      if (b.rope_lens[r] < b.seq_lens[r]) bad("rope_lens must be at least seq_lens");
  }
  if (has_linear_) {
    if (static_cast<int64_t>(b.state_slots.size()) != R)
      bad("state_slots must have num_reqs entries for a model with linear_attention layers");
    for (int32_t s : b.state_slots)
      if (s < 0 || s >= cache.num_state_slots()) bad("state slot " + std::to_string(s) + " outside the cache's slots");
  }
  // Block ids, slots and sequence lengths are checked by ops::paged_attention / reshape_and_cache.
}

void Transformer::run_decoder_layers(const layers::BatchMeta& meta, KvCache& cache, bool shared_kv, int64_t T,
                                     const Tensor& state_slots) {
  const loader::ModelConfig& c = config_;
  const Weights& w = *weights_;
  const int64_t H = c.hidden_size;
  const float resid = static_cast<float>(c.residual_multiplier);
  const float eps = static_cast<float>(c.rms_norm_eps);
  Tensor X = f32(x_, {T, H}), Hn = f32(h_, {T, H});
  const int64_t P = w.ple_embed.data ? c.hidden_size_per_layer_input : 0, L = c.num_hidden_layers;
  // The cache layer a layer reads: its own (or the one it shares), or the encoders' one scratch layer.
  auto kv = [&](int64_t l) { return shared_kv ? 0 : kv_layer_[size_t(l)]; };
  for (int64_t l = 0; l < c.num_hidden_layers; ++l) {
    const LayerWeights& lw = w.layers[l];
    ops::rms_norm(X, &lw.attn_norm, eps, Hn);
    if (lw.lin_qkv.data)
      layers::gated_delta_net(lw, lin_, meta.query_start_loc, state_slots, cache.conv_state(l),
                              cache.recurrent_state(l), Hn, lin_ws_, Hn);
    else
      layers::self_attention(lw, attn_[l], meta, cache.k(kv(l)), cache.v(kv(l)), cache.format(), Hn,
                             attn_ws_, Hn);
    if (lw.post_attn_norm.data) ops::rms_norm(Hn, &lw.post_attn_norm, eps, Hn);
    if (resid != 1.0f) ops::scale(Hn, resid, Hn);
    ops::add(X, Hn, X);

    ops::rms_norm(X, &lw.ffn_norm, eps, Hn);
    if (lw.router.data && lw.router_norm.data) {  // MoE block beside the dense MLP
      moe_in_.resize(T * H);
      moe_out_.resize(T * H);
      Tensor Ri = f32(moe_in_, {T, H}), Mo = f32(moe_out_, {T, H});
      layers::gated_mlp(lw, spec_->act, Hn, mlp_ws_, Hn);
      ops::rms_norm(Hn, &lw.post_ffw_norm_1, eps, Hn);
      ops::rms_norm(X, &lw.router_norm, eps, Ri);
      ops::rms_norm(X, &lw.pre_ffw_norm_2, eps, Mo);
      layers::moe_mlp(lw, moe_, Ri, Mo, mlp_ws_, moe_ws_, Mo);
      ops::rms_norm(Mo, &lw.post_ffw_norm_2, eps, Mo);
      ops::add(Hn, Mo, Hn);
    } else if (lw.router.data) {
      layers::moe_mlp(lw, moe_, Hn, mlp_ws_, moe_ws_, Hn);
    } else {
      layers::gated_mlp(lw, spec_->act, Hn, mlp_ws_, Hn);
    }
    if (lw.post_ffw_norm.data) ops::rms_norm(Hn, &lw.post_ffw_norm, eps, Hn);
    if (resid != 1.0f) ops::scale(Hn, resid, Hn);
    ops::add(X, Hn, X);
    if (P > 0) {  // x += post_norm(W_proj(gelu_tanh(W_gate·x) ⊙ ple[:, l]))
      ple_l_.resize(T * P);
      ple_g_.resize(T * P);
      Tensor pl = f32(ple_l_, {T, P}), pg = f32(ple_g_, {T, P});
      const Tensor rows(DType::I32, ple_rows_dev_.ptr<int32_t>() + l * T, {T}, ple_rows_dev_.device);
      ops::embedding(f32(ple_, {T * L, P}), rows, pl);
      ops::matmul(X, lw.ple_gate, pg);
      ops::glu(spec_->act, pg, pl, pg);
      ops::matmul(pg, lw.ple_proj, Hn);
      ops::rms_norm(Hn, &lw.ple_post_norm, eps, Hn);
      ops::add(X, Hn, X);
    }
    if (lw.layer_scale != 1.0f) ops::scale(X, lw.layer_scale, X);
  }
}

Tensor Transformer::forward(const ForwardBatch& b, KvCache& cache) {
  if (spec_->encoder)
    throw Error(ErrorCode::UNSUPPORTED, config_.source + ": this model is an encoder: it embeds text and does not "
                                                     "generate (Transformer::encode)");
  validate(b, cache);
  const int64_t num_logits = static_cast<int64_t>(b.logits_indices.size());
  last_num_logits_ = num_logits;
  if (b.num_tokens() > ws_tokens_ || num_logits > ws_logits_)
    reserve_workspace(std::max(b.num_tokens(), ws_tokens_), std::max(num_logits, ws_logits_));
  ops::device_backend(device_).matmul_reserve_scratch(reserved_scratch_bytes_);  // no-op once held
  const loader::ModelConfig& c = config_;
  const Weights& w = *weights_;
  const int64_t T = b.num_tokens(), H = c.hidden_size;
  const float eps = static_cast<float>(c.rms_norm_eps);
  x_.resize(T * H);
  h_.resize(T * H);
  Tensor X = f32(x_, {T, H});
  const int64_t P = w.ple_embed.data ? c.hidden_size_per_layer_input : 0, L = c.num_hidden_layers;
  const int64_t R = b.num_reqs();
  if (P > 0) {
    ple_rows_.resize(static_cast<size_t>(T * L));
    for (int64_t l = 0; l < L; ++l)
      for (int64_t i = 0; i < T; ++i) ple_rows_[size_t(l * T + i)] = static_cast<int32_t>(i * L + l);
  }
  const Device dev = device_;
  // A decode step may run as a graph (step_graphs.h): its block table at the padded width, also
  // when graphs are off, so that a replay runs exactly the kernels an eager step runs.
  const std::optional<StepGraphKey> gkey = graphs_allowed_ ? decode_step_key(b) : std::nullopt;
  const int64_t W = gkey ? gkey->table_width : b.max_blocks_per_req;
  std::span<const int32_t> table = b.block_table;
  if (W != b.max_blocks_per_req) {
    padded_table_.assign(static_cast<size_t>(R * W), 0);  // entries past a request's blocks are never read
    for (int64_t r = 0; r < R; ++r)
      std::copy_n(b.block_table.begin() + r * b.max_blocks_per_req, b.max_blocks_per_req,
                  padded_table_.begin() + r * W);
    table = padded_table_;
  }
  upload_.begin(dev, 3 * T + 2 * R + 1 + R * W + num_logits + (has_linear_ ? R : 0) + (P > 0 ? T * L : 0));
  layers::BatchMeta meta{upload_.add(b.positions), upload_.add(b.query_start_loc), upload_.add(b.seq_lens),
                         upload_.add(table, {R, W}), upload_.add(b.slot_mapping),
                         b.rope_lens, b.query_start_loc};
  const Tensor token_ids = upload_.add(b.token_ids), logits_rows = upload_.add(b.logits_indices);
  const Tensor state_slots = has_linear_ ? upload_.add(b.state_slots) : Tensor{};
  ple_rows_dev_ = P > 0 ? upload_.add(ple_rows_) : Tensor{};
  upload_.flush();
  const int64_t NL = num_logits, V = c.vocab_size;
  const auto logits_view = [&] {
    Tensor out(DType::F32, logits_.data(), {std::max<int64_t>(NL, 1), V}, dev);
    out.shape[0] = NL;
    return out;
  };
  const auto body = [&]() -> Tensor {
    ops::embedding(w.embed, token_ids, X);  // [T, H]
    float emb_scale = static_cast<float>(c.embedding_multiplier);
    if (spec_->embed_scale_sqrt_hidden) emb_scale *= std::sqrt(static_cast<float>(H));
    if (emb_scale != 1.0f) ops::scale(X, emb_scale, X);
    if (P > 0) {  // per-layer inputs: (norm(h0·W_projᵀ·H^-½) + table[id]·√P)·2^-½, [T, L·P]
      ple_.resize(T * L * P);
      ple_tmp_.resize(T * L * P);
      Tensor ple = f32(ple_, {T, L * P}), tok = f32(ple_tmp_, {T, L * P});
      ops::matmul(X, w.ple_model_proj, ple);
      ops::scale(ple, 1.0f / std::sqrt(static_cast<float>(H)), ple);
      ops::rms_norm(f32(ple_, {T * L, P}), &w.ple_proj_norm, eps, f32(ple_, {T * L, P}));
      ops::embedding(w.ple_embed, token_ids, tok);
      ops::scale(tok, std::sqrt(static_cast<float>(P)), tok);
      ops::add(ple, tok, ple);
      ops::scale(ple, 1.0f / std::sqrt(2.0f), ple);
    }

    if (has_linear_) {
      for (int64_t r = 0; r < b.num_reqs(); ++r)  // a request starting at position 0 starts from zero state
        if (b.query_start_loc[r] < b.query_start_loc[r + 1] && b.positions[b.query_start_loc[r]] == 0)
          cache.zero_state(b.state_slots[r]);
    }
    run_decoder_layers(meta, cache, false, T, state_slots);

    // Final norm and head only on the rows that need logits.
    if (const size_t need = sizeof(float) * std::max<int64_t>(NL, 1) * V; logits_.size() < need)
      logits_ = ops::device_backend(dev).allocate(need);
    Tensor out = logits_view();
    if (NL == 0) return out;
    // The rows are gathered by the weights' backend (the residual stream lives on its device).
    sel_.resize(NL * H);
    Tensor S = f32(sel_, {NL, H});
    ops::embedding(f32(x_, {T, H}), logits_rows, S);
    ops::rms_norm(S, &w.final_norm, eps, S);
    ops::matmul(S, w.lm_head, out);  // [NL, V]
    if (c.logits_scaling != 1.0) ops::scale(out, static_cast<float>(1.0 / c.logits_scaling), out);
    if (c.final_logit_softcapping && *c.final_logit_softcapping > 0)
      ops::softcap(out, static_cast<float>(*c.final_logit_softcapping), out);
    return out;
  };
  if (!gkey || !graphs_on_) return body();
  return run_step_graph(graphs_, ops::device_backend(dev), *gkey, body, logits_view);
}

}  // namespace oxyd::model
