// Reference paged attention (see attention.h): for each query row, score every visible key in
// float64 straight from the block table, softmax over [scores, sink], weighted sum of values. A
// quantized cache is read as each head vector's reconstruction KvQuantizer::dequantize (the
// original space; no rotated shortcut here).
#include "backend/reference/attention.h"

#include <cmath>
#include <vector>

#include "core/half.h"
#include "core/kv_quant.h"

namespace oxyd::backend::reference {
namespace {

double load(DType dtype, const void* base, int64_t idx) {
  switch (dtype) {
    case DType::F16: return f16_to_f32(static_cast<const uint16_t*>(base)[idx]);
    case DType::BF16: return bf16_to_f32(static_cast<const uint16_t*>(base)[idx]);
    default: return static_cast<const float*>(base)[idx];
  }
}

void store(DType dtype, void* base, int64_t idx, float v) {
  switch (dtype) {
    case DType::F16: static_cast<uint16_t*>(base)[idx] = f32_to_f16(v); break;
    case DType::BF16: static_cast<uint16_t*>(base)[idx] = f32_to_bf16(v); break;
    default: static_cast<float*>(base)[idx] = v; break;
  }
}

// Head vector `vec` (= slot · num_kv_heads + kv head) of a cache as float64.
void read_vector(const Tensor& cache, int quant_bits, int64_t vec, int64_t head_dim, std::vector<double>& out) {
  out.resize(size_t(head_dim));
  if (quant_bits > 0) {
    const KvQuantizer& kq = kv_quantizer(head_dim, quant_bits);
    std::vector<float> x(static_cast<size_t>(head_dim));
    kq.dequantize(static_cast<const uint8_t*>(cache.data) + vec * kq.row_bytes(), x.data());
    for (int64_t d = 0; d < head_dim; ++d) out[size_t(d)] = x[size_t(d)];
    return;
  }
  for (int64_t d = 0; d < head_dim; ++d) out[size_t(d)] = load(cache.dtype, cache.data, vec * head_dim + d);
}

}  // namespace

void paged_attention(const AttentionParams& p) {
  const int64_t num_heads = p.num_heads(), head_dim = p.head_dim();
  const int64_t num_kv_heads = p.num_kv_heads(), block_size = p.block_size();
  const int64_t group = num_heads / num_kv_heads;
  const int32_t* qsl = p.query_start_loc.ptr<int32_t>();
  const int32_t* seq_lens = p.seq_lens.ptr<int32_t>();
  const int32_t* block_table = p.block_table.ptr<int32_t>();
  // Head-vector index of (token t of request r, kv head g) in a cache.
  auto cache_vec = [&](int64_t r, int64_t t, int64_t g) {
    const int64_t block = block_table[r * p.max_blocks_per_req() + t / block_size];
    return (block * block_size + t % block_size) * num_kv_heads + g;
  };
  std::vector<double> kv;
  for (int64_t r = 0; r < p.num_reqs(); ++r) {
    const int64_t seq_len = seq_lens[r], query_len = qsl[r + 1] - qsl[r];
    if (query_len == 0) continue;  // nothing to compute; its seq_len is not validated either
    std::vector<double> scores(seq_len);
    for (int64_t i = 0; i < query_len; ++i) {
      const int64_t token = qsl[r] + i, pos = seq_len - query_len + i;
      const int64_t last = p.causal ? pos : seq_len - 1;  // the last key the query sees
      for (int64_t h = 0; h < num_heads; ++h) {
        const float* q = p.q.ptr<float>() + (token * num_heads + h) * head_dim;
        const int64_t g = h / group;
        double mx = p.has_sinks() ? double(p.sinks.ptr<float>()[h]) : -INFINITY;
        for (int64_t k = 0; k <= last; ++k) {
          const bool visible = p.sliding_window <= 0 || pos - k < p.sliding_window;
          if (!visible) continue;
          read_vector(p.k_cache, kv_format_bits(p.kv_format), cache_vec(r, k, g), head_dim, kv);
          double s = 0;
          for (int64_t d = 0; d < head_dim; ++d) s += double(q[d]) * kv[size_t(d)];
          s *= p.scale;
          if (p.logit_softcap > 0) s = p.logit_softcap * std::tanh(s / p.logit_softcap);
          scores[k] = s;
          mx = std::max(mx, s);
        }
        double denom = p.has_sinks() ? std::exp(double(p.sinks.ptr<float>()[h]) - mx) : 0.0;
        std::vector<double> acc(head_dim, 0.0);
        for (int64_t k = 0; k <= last; ++k) {
          if (p.sliding_window > 0 && pos - k >= p.sliding_window) continue;
          const double w = std::exp(scores[k] - mx);
          denom += w;
          read_vector(p.v_cache, kv_format_bits(p.kv_format), cache_vec(r, k, g), head_dim, kv);
          for (int64_t d = 0; d < head_dim; ++d) acc[d] += w * kv[size_t(d)];
        }
        float* o = p.out.ptr<float>() + (token * num_heads + h) * head_dim;
        for (int64_t d = 0; d < head_dim; ++d) o[d] = float(acc[d] / denom);
      }
    }
  }
}

void reshape_and_cache(const Tensor& key, const Tensor& value, const Tensor& k_cache,
                       const Tensor& v_cache, const Tensor& slot_mapping, KvFormat kv_format) {
  const int kv_quant_bits = kv_format_bits(kv_format);
  const int64_t num_tokens = key.dim(0);
  const int64_t row = key.dim(1) * key.dim(2);  // num_kv_heads · head_dim elements per token
  const int32_t* slots = slot_mapping.ptr<int32_t>();
  if (kv_quant_bits > 0) {
    const int64_t nkv = key.dim(1), hd = key.dim(2);
    const KvQuantizer& kq = kv_quantizer(hd, kv_quant_bits);
    for (int64_t t = 0; t < num_tokens; ++t) {
      if (slots[t] < 0) continue;
      for (int64_t g = 0; g < nkv; ++g) {
        const int64_t src = (t * nkv + g) * hd, dst = (int64_t(slots[t]) * nkv + g) * kq.row_bytes();
        kq.quantize(key.ptr<float>() + src, static_cast<uint8_t*>(k_cache.data) + dst);
        kq.quantize(value.ptr<float>() + src, static_cast<uint8_t*>(v_cache.data) + dst);
      }
    }
    return;
  }
  for (int64_t t = 0; t < num_tokens; ++t) {
    if (slots[t] < 0) continue;
    for (int64_t i = 0; i < row; ++i) {
      store(k_cache.dtype, k_cache.data, slots[t] * row + i, key.ptr<float>()[t * row + i]);
      store(v_cache.dtype, v_cache.data, slots[t] * row + i, value.ptr<float>()[t * row + i]);
    }
  }
}

}  // namespace oxyd::backend::reference
