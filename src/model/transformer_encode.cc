// Transformer::encode / embed: whole sequences in one pass, no KV cache kept. Attention reuses
// the paged-attention op: each sequence is one request whose keys are its own K/V, written into a
// one-layer scratch cache (encode_cache_) that every layer reuses, with query_len = seq_len, so
// its queries meet its keys in one blocked pass (the prefill tiles). Encoders ask for
// bidirectional attention (AttentionParams::causal = false), decoder embedders for causal.
// Encoder layers (ArchSpec::encoder) are post-LayerNorm: x = LN(x + attn(x)), x = LN(x + mlp(x)).
#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "loader/sentence_transformers.h"
#include "model/pooling.h"
#include "model/transformer.h"
#include "ops/activation.h"
#include "ops/dispatch.h"
#include "ops/elementwise.h"
#include "ops/embedding.h"
#include "ops/matmul.h"
#include "ops/rms_norm.h"

namespace oxyd::model {
namespace {

constexpr int64_t kEncodeBlock = 16;  // tokens per block of the scratch cache

}  // namespace

bool Transformer::can_embed() const {
  const int p = config_.pooling_type;
  return p == loader::POOLING_MEAN || p == loader::POOLING_CLS || p == loader::POOLING_LAST;
}

int64_t Transformer::max_input_tokens() const {
  int64_t m = spec_->encoder ? weights_->pos_embed.dim(0) - config_.position_offset : config_.max_position_embeddings;
  if (config_.max_seq_length > 0) m = m > 0 ? std::min(m, config_.max_seq_length) : config_.max_seq_length;
  return m;
}

void Transformer::run_encoder_layers(const layers::BatchMeta& meta, KvCache& cache, int64_t T) {
  const loader::ModelConfig& c = config_;
  const float eps = static_cast<float>(c.layer_norm_eps);
  Tensor X = x_.view({T, c.hidden_size}), Hn = h_.view({T, c.hidden_size});
  for (int64_t l = 0; l < c.num_hidden_layers; ++l) {
    const LayerWeights& lw = weights_->layers[l];
    layers::self_attention(lw, attn_[l], meta, cache.k(0), cache.v(0), cache.format(), X, attn_ws_, Hn);
    ops::add(X, Hn, X);
    ops::layer_norm(X, &lw.attn_norm, lw.attn_norm_bias.data ? &lw.attn_norm_bias : nullptr, eps, X);
    layers::plain_mlp(lw, spec_->act, X, mlp_ws_, Hn);
    ops::add(X, Hn, X);
    ops::layer_norm(X, &lw.ffn_norm, lw.ffn_norm_bias.data ? &lw.ffn_norm_bias : nullptr, eps, X);
  }
}

Tensor Transformer::encode(const EncodeBatch& b) {
  const loader::ModelConfig& c = config_;
  const Weights& w = *weights_;
  const int64_t T = b.num_tokens(), S = b.num_seqs(), H = c.hidden_size;
  auto bad = [&](const std::string& m) { throw Error(ErrorCode::INVALID_ARGUMENT, "encode: " + m); };
  if (has_linear_)
    throw Error(ErrorCode::UNSUPPORTED, c.source + ": embedding with linear_attention layers is not supported");
  if (S < 1 || T < 1) bad("no sequences");
  if (b.seq_start.front() != 0 || b.seq_start.back() != T) bad("seq_start must run from 0 to num_tokens");
  if (!b.token_type_ids.empty() && static_cast<int64_t>(b.token_type_ids.size()) != T)
    bad("token_type_ids must be empty or have num_tokens entries");
  const int64_t max_len = max_input_tokens();
  int64_t longest = 0, num_blocks = 0;
  for (int64_t s = 0; s < S; ++s) {
    const int64_t n = b.seq_start[s + 1] - b.seq_start[s];
    if (n < 1) bad("sequence " + std::to_string(s) + " is empty");
    if (max_len > 0 && n > max_len)
      bad("sequence " + std::to_string(s) + " has " + std::to_string(n) + " tokens, more than this model's " +
          std::to_string(max_len));
    longest = std::max(longest, n);
    num_blocks += (n + kEncodeBlock - 1) / kEncodeBlock;
  }
  for (int64_t i = 0; i < T; ++i)  // checked here, on the host, whatever device runs the step
    if (b.token_ids[i] < 0 || b.token_ids[i] >= w.embed.dim(0))
      bad("token id " + std::to_string(b.token_ids[i]) + " at position " + std::to_string(i) +
          " is outside the vocabulary [0, " + std::to_string(w.embed.dim(0)) + ")");
  if (!b.token_type_ids.empty()) {
    const int64_t types = w.type_embed.data ? w.type_embed.dim(0) : 1;
    for (int32_t t : b.token_type_ids)
      if (t < 0 || t >= types) bad("token type " + std::to_string(t) + " outside [0, " + std::to_string(types) + ")");
  }

  // Per sequence: one request over its own blocks of the scratch cache.
  const int64_t width = (longest + kEncodeBlock - 1) / kEncodeBlock;
  std::vector<int32_t> positions(T), qsl(S + 1), seq_lens(S), table(S * width), slots(T);
  int32_t first_block = 0;
  for (int64_t s = 0; s < S; ++s) {
    const int32_t begin = b.seq_start[s], n = b.seq_start[s + 1] - begin;
    qsl[s] = begin;
    seq_lens[s] = n;
    for (int64_t j = 0; j < width; ++j)  // unused entries repeat the last block, a valid id
      table[s * width + j] = first_block + static_cast<int32_t>(std::min<int64_t>(j, (n - 1) / kEncodeBlock));
    for (int32_t i = 0; i < n; ++i) {
      positions[begin + i] = i;
      slots[begin + i] = first_block * static_cast<int32_t>(kEncodeBlock) + i;
    }
    first_block += (n + static_cast<int32_t>(kEncodeBlock) - 1) / static_cast<int32_t>(kEncodeBlock);
  }
  qsl[S] = static_cast<int32_t>(T);
  const Device dev = w.embed.device;
  if (!encode_cache_ || encode_cache_->num_blocks() < num_blocks)
    encode_cache_ = std::make_unique<KvCache>(1, num_blocks, kEncodeBlock, c.num_key_value_heads, c.head_dim,
                                              KvFormat::F32, dev);

  if (T > ws_tokens_) reserve_workspace(T, ws_logits_);
  ops::device_backend(dev).matmul_reserve_scratch(reserved_scratch_bytes_);
  x_.resize(T * H);
  h_.resize(T * H);
  Tensor X = x_.view({T, H}), Hn = h_.view({T, H});
  std::vector<int32_t> pos_ids, type_ids;
  if (spec_->encoder) {
    pos_ids.resize(static_cast<size_t>(T));
    for (int64_t t = 0; t < T; ++t) pos_ids[t] = positions[t] + static_cast<int32_t>(c.position_offset);
    if (w.type_embed.data) {
      if (b.token_type_ids.empty()) type_ids.assign(static_cast<size_t>(T), 0);
      else type_ids.assign(b.token_type_ids.begin(), b.token_type_ids.end());
    }
  }
  upload_.begin(dev, 5 * T + 2 * S + 1 + S * width);
  const Tensor token_ids = upload_.add(b.token_ids);
  layers::BatchMeta meta{upload_.add(positions), upload_.add(qsl), upload_.add(seq_lens),
                         upload_.add(table, {S, width}), upload_.add(slots), {}, qsl};
  meta.causal = !spec_->encoder;
  const Tensor pos_t = pos_ids.empty() ? Tensor{} : upload_.add(pos_ids);
  const Tensor type_t = type_ids.empty() ? Tensor{} : upload_.add(type_ids);
  upload_.flush();
  ops::embedding(w.embed, token_ids, X);  // [T, H]
  if (spec_->encoder) {
    ops::embedding(w.pos_embed, pos_t, Hn);
    ops::add(X, Hn, X);
    if (type_t.data) {
      ops::embedding(w.type_embed, type_t, Hn);
      ops::add(X, Hn, X);
    }
    ops::layer_norm(X, &w.embed_norm, w.embed_norm_bias.data ? &w.embed_norm_bias : nullptr,
                    static_cast<float>(c.layer_norm_eps), X);
    run_encoder_layers(meta, *encode_cache_, T);
  } else {
    float emb_scale = static_cast<float>(c.embedding_multiplier);
    if (spec_->embed_scale_sqrt_hidden) emb_scale *= std::sqrt(static_cast<float>(H));
    if (emb_scale != 1.0f) ops::scale(X, emb_scale, X);
    run_decoder_layers(meta, *encode_cache_, true, T, Tensor{});
    ops::rms_norm(X, &w.final_norm, static_cast<float>(c.rms_norm_eps), X);
  }
  return X;
}

void Transformer::set_rank_label_ids(const std::vector<int32_t>& ids) {
  if (config_.rank_label_tokens.empty() || static_cast<int64_t>(ids.size()) != config_.num_labels)
    throw Error(ErrorCode::INVALID_ARGUMENT, config_.source + ": expected " + std::to_string(config_.num_labels) +
                                                 " rank label ids for a decoder reranker, got " +
                                                 std::to_string(ids.size()));
  for (int32_t id : ids)
    if (id < 0 || id >= config_.vocab_size)
      throw Error(ErrorCode::INVALID_ARGUMENT, config_.source + ": rank label id " + std::to_string(id) +
                                                   " is outside the vocabulary");
  rank_label_ids_ = ids;
}

std::vector<float> Transformer::embed(const EncodeBatch& b) {
  if (!can_embed() && !can_rank())
    throw Error(ErrorCode::UNSUPPORTED, config_.source + ": this model has no pooling (no sentence-transformers "
                                                         "Pooling module or GGUF pooling_type): it does not embed");
  const int64_t S = b.num_seqs(), H = config_.hidden_size;
  const backend::StepLock step(ops::device_backend(device_));  // the pass and the copy of its rows
  Tensor X = encode(b);
  const Weights& w = *weights_;
  if (can_rank()) {
    // An encoder: the first token of each sequence → [pooler dense + tanh] → classifier. A decoder
    // reranker: the last token → its label tokens' rows of the head.
    const bool by_tokens = !config_.rank_label_tokens.empty();
    if (by_tokens && rank_label_ids_.empty())
      throw Error(ErrorCode::INVALID_ARGUMENT, config_.source + ": the reranker's label tokens have no ids yet");
    std::vector<int32_t> first(b.seq_start.begin(), b.seq_start.end() - 1);
    if (!spec_->encoder)
      for (int64_t s = 0; s < S; ++s) first[s] = b.seq_start[s + 1] - 1;
    const int64_t labels = config_.num_labels;
    sel_.resize(S * H);
    Tensor F = sel_.view({S, H}), P = h_.view({S, H});
    upload_.begin(X.device, S);
    const Tensor first_t = upload_.add(first);
    upload_.flush();
    ops::embedding(X, first_t, F);
    if (by_tokens) {  // the whole head (it may be packed for matmul), then the label columns
      const int64_t V = config_.vocab_size;
      rank_logits_.set_device(w.embed.device);
      rank_logits_.resize(S * V);
      Tensor Z = rank_logits_.view({S, V});  // [S, vocab]
      ops::matmul(F, w.lm_head, Z);
      const loader::ModelConfig& c = config_;  // as forward() ends its logits
      if (c.logits_scaling != 1.0) ops::scale(Z, static_cast<float>(1.0 / c.logits_scaling), Z);
      if (c.final_logit_softcapping && *c.final_logit_softcapping > 0)
        ops::softcap(Z, static_cast<float>(*c.final_logit_softcapping), Z);
      std::vector<float> z(static_cast<size_t>(S * V)), out(static_cast<size_t>(S * labels));
      ops::copy_to_host(Z, z.data());
      for (int64_t s = 0; s < S; ++s)
        for (int64_t k = 0; k < labels; ++k) out[s * labels + k] = z[s * V + rank_label_ids_[k]];
      return out;
    }
    if (w.cls_dense.data) {
      ops::matmul(F, w.cls_dense, P);
      if (w.cls_dense_bias.data) ops::add(P, w.cls_dense_bias, P);
      ops::softcap(P, 1.0f, P);  // 1·tanh(x / 1)
      F = P;
    }
    Tensor O = x_.view({S, labels});  // X is read into F already
    ops::matmul(F, w.cls_out, O);
    if (w.cls_out_bias.data) ops::add(O, w.cls_out_bias, O);
    std::vector<float> out(static_cast<size_t>(S * labels));
    ops::copy_to_host(O, out.data());
    return out;
  }
  std::vector<float> hidden(static_cast<size_t>(X.numel()));
  ops::copy_to_host(X, hidden.data());
  std::vector<float> out(static_cast<size_t>(S * H));
  pool_sequences(hidden.data(), H, b.seq_start, config_.pooling_type, config_.embedding_normalize, out.data());
  return out;
}

}  // namespace oxyd::model
