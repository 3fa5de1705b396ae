// The decoder forward pass over ops/ (see transformer.h). Per layer:
//   h = norm(x); q,k,v = h·Wᵀ (+b); [q/k norm]; rope; cache K/V at slot_mapping; paged attention;
//   o = attn·Woᵀ; [post norm]; x += o·residual_multiplier; same shape for the MLP (gated act).
// Load-time choices (rope tables, per-layer windows, scales) are made once in load().
#include "model/transformer.h"

#include <cmath>
#include <filesystem>

#include "core/error.h"
#include "model/arch_registry.h"
#include "ops/activation.h"
#include "ops/attention.h"
#include "ops/elementwise.h"
#include "ops/embedding.h"
#include "ops/matmul.h"
#include "ops/rms_norm.h"
#include "ops/rope.h"
#include "ops/rope_scaling.h"

namespace oxyd::model {
namespace {

namespace fs = std::filesystem;

Tensor f32(std::vector<float>& v, std::initializer_list<int64_t> dims) {
  return Tensor(DType::F32, v.data(), dims);
}
Tensor i32(std::span<const int32_t> s) {
  return Tensor(DType::I32, const_cast<int32_t*>(s.data()), {static_cast<int64_t>(s.size())});
}

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

std::unique_ptr<Transformer> Transformer::load(const std::string& path) {
  std::unique_ptr<Transformer> t(new Transformer());
  std::string weights_path = path;
  if (fs::is_directory(path)) {
    t->config_ = loader::load_hf_config((fs::path(path) / "config.json").string());
  } else if (fs::path(path).extension() == ".gguf") {
    t->config_ = loader::model_config_from_gguf(loader::GgufFile::open(path));
  } else {
    throw Error(ErrorCode::INVALID_ARGUMENT,
                path + ": expected a .gguf file or a directory with config.json and *.safetensors");
  }
  const loader::ModelConfig& c = t->config_;
  t->spec_ = &arch_spec(c.family);
  t->weights_ = Weights::load(weights_path, c, *t->spec_);
  const bool gguf = t->weights_->source() == WeightSource::GGUF;

  const int64_t L = c.num_hidden_layers;
  OXYD_CHECK(static_cast<int64_t>(c.layer_types.size()) == L, "layer_types must have one entry per layer");
  for (int64_t l = 0; l < L; ++l) {
    const std::string& lt = c.layer_types[l];
    if (lt == loader::kLinearAttention)
      throw Error(ErrorCode::UNSUPPORTED, c.source + ": linear_attention layers are not supported yet");
    const bool sliding = lt == loader::kSlidingAttention && c.sliding_window &&
                         !(gguf && t->spec_->gguf_ignores_sliding_window);
    t->sliding_window_.push_back(sliding ? static_cast<int>(*c.sliding_window) : 0);
    // GGUF per-pair factors (llama3 rope_freqs, Phi-3 rope_factors_long) apply to global layers.
    const bool tensor_factors = gguf && t->weights_->rope_factors.data && lt == loader::kFullAttention;
    const loader::RopeParameters& rp = c.rope(lt);
    // longrope: long factors when the context exceeds the original one (llama.cpp's rule; HF
    // switches by current length, the same once a sequence is that long).
    ops::RopeFrequencies fr =
        ops::rope_frequencies(to_scaling(rp, c, tensor_factors), c.head_dim, c.max_position_embeddings);
    RopeTable rt;
    rt.inv_freq = fr.inv_freq;
    rt.attention_factor = fr.attention_factor;
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
  }
  return t;
}

KvCache Transformer::make_kv_cache(int64_t num_blocks, int64_t block_size, DType dtype) const {
  return KvCache(config_.num_hidden_layers, num_blocks, block_size, config_.num_key_value_heads,
                 config_.head_dim, dtype);
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
  (void)cache;
}

Tensor Transformer::forward(const ForwardBatch& b, KvCache& cache) {
  validate(b, cache);
  const loader::ModelConfig& c = config_;
  const ArchSpec& s = *spec_;
  const Weights& w = *weights_;
  const int64_t T = b.num_tokens(), H = c.hidden_size, nh = c.num_attention_heads,
                nkv = c.num_key_value_heads, hd = c.head_dim, I = c.intermediate_size;
  const float resid = static_cast<float>(c.residual_multiplier);
  const float eps = static_cast<float>(c.rms_norm_eps);
  float attn_scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(hd)));
  if (c.attention_multiplier) attn_scale = static_cast<float>(*c.attention_multiplier);
  else if (c.query_pre_attn_scalar) attn_scale = static_cast<float>(1.0 / std::sqrt(*c.query_pre_attn_scalar));

  std::vector<float> x(T * H), h(T * H), q(T * nh * hd), k(T * nkv * hd), v(T * nkv * hd),
      att(T * nh * hd), gate(T * I), up(T * I);
  Tensor X = f32(x, {T, H}), Hn = f32(h, {T, H});
  Tensor Q = f32(q, {T, nh, hd}), K = f32(k, {T, nkv, hd}), Vt = f32(v, {T, nkv, hd});
  Tensor A = f32(att, {T, nh, hd}), G = f32(gate, {T, I}), U = f32(up, {T, I});
  Tensor Q2 = f32(q, {T, nh * hd}), K2 = f32(k, {T, nkv * hd}), V2 = f32(v, {T, nkv * hd});
  Tensor A2 = f32(att, {T, nh * hd});
  Tensor positions = i32(b.positions);

  ops::embedding(w.embed, b.token_ids.data(), T, X);
  float emb_scale = static_cast<float>(c.embedding_multiplier);
  if (s.embed_scale_sqrt_hidden) emb_scale *= std::sqrt(static_cast<float>(H));
  if (emb_scale != 1.0f) ops::scale(X, emb_scale, X);

  backend::AttentionParams ap;
  ap.q = Q;
  ap.out = A;
  ap.query_start_loc = i32(b.query_start_loc);
  ap.seq_lens = i32(b.seq_lens);
  ap.block_table = Tensor(DType::I32, const_cast<int32_t*>(b.block_table.data()),
                          {b.num_reqs(), b.max_blocks_per_req});
  ap.scale = attn_scale;
  ap.logit_softcap = static_cast<float>(c.attn_logit_softcapping.value_or(0.0));

  for (int64_t l = 0; l < c.num_hidden_layers; ++l) {
    const LayerWeights& lw = w.layers[l];
    ops::rms_norm(X, &lw.attn_norm, eps, Hn);
    ops::matmul(Hn, lw.q, Q2);
    ops::matmul(Hn, lw.k, K2);
    ops::matmul(Hn, lw.v, V2);
    if (lw.q_bias.data) ops::add(Q2, lw.q_bias, Q2);
    if (lw.k_bias.data) ops::add(K2, lw.k_bias, K2);
    if (lw.v_bias.data) ops::add(V2, lw.v_bias, V2);
    if (lw.q_norm.data) ops::rms_norm(f32(q, {T * nh, hd}), &lw.q_norm, eps, f32(q, {T * nh, hd}));
    if (lw.k_norm.data) ops::rms_norm(f32(k, {T * nkv, hd}), &lw.k_norm, eps, f32(k, {T * nkv, hd}));
    RopeTable& rt = rope_[l];
    Tensor inv = f32(rt.inv_freq, {static_cast<int64_t>(rt.inv_freq.size())});
    Tensor ff = rt.freq_factors.empty()
                    ? Tensor{}
                    : f32(rt.freq_factors, {static_cast<int64_t>(rt.freq_factors.size())});
    ops::rope(Q, positions, inv, ff.data ? &ff : nullptr, rt.style, rt.attention_factor, Q);
    ops::rope(K, positions, inv, ff.data ? &ff : nullptr, rt.style, rt.attention_factor, K);
    Tensor kc = cache.k(l), vc = cache.v(l);
    ops::reshape_and_cache(K, Vt, kc, vc, i32(b.slot_mapping));
    ap.k_cache = kc;
    ap.v_cache = vc;
    ap.sliding_window = sliding_window_[l];
    ops::paged_attention(ap);
    ops::matmul(A2, lw.o, Hn);
    if (lw.post_attn_norm.data) ops::rms_norm(Hn, &lw.post_attn_norm, eps, Hn);
    if (resid != 1.0f) ops::scale(Hn, resid, Hn);
    ops::add(X, Hn, X);

    ops::rms_norm(X, &lw.ffn_norm, eps, Hn);
    ops::matmul(Hn, lw.gate, G);
    ops::matmul(Hn, lw.up, U);
    ops::glu(s.act, G, U, G);
    ops::matmul(G, lw.down, Hn);
    if (lw.post_ffw_norm.data) ops::rms_norm(Hn, &lw.post_ffw_norm, eps, Hn);
    if (resid != 1.0f) ops::scale(Hn, resid, Hn);
    ops::add(X, Hn, X);
  }

  // Final norm and head only on the rows that need logits.
  const int64_t R = static_cast<int64_t>(b.logits_indices.size()), Vs = c.vocab_size;
  std::vector<float> sel(std::max<int64_t>(R, 1) * H);
  for (int64_t i = 0; i < R; ++i)
    std::copy_n(x.data() + b.logits_indices[i] * H, H, sel.data() + i * H);
  logits_ = Buffer(sizeof(float) * std::max<int64_t>(R, 1) * Vs);
  Tensor out(DType::F32, logits_.data(), {R, Vs});
  if (R == 0) return out;
  Tensor S = f32(sel, {R, H});
  ops::rms_norm(S, &w.final_norm, eps, S);
  ops::matmul(S, w.lm_head, out);
  if (c.logits_scaling != 1.0) ops::scale(out, static_cast<float>(1.0 / c.logits_scaling), out);
  if (c.final_logit_softcapping && *c.final_logit_softcapping > 0)
    ops::softcap(out, static_cast<float>(*c.final_logit_softcapping), out);
  return out;
}

}  // namespace oxyd::model
