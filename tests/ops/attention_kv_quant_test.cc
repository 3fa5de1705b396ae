// Paged attention over a quantized KV cache (--kv-quant, core/kv_quant.h). The quantized caches
// are written by ops::reshape_and_cache (the CPU path; the reference write must give the same
// bytes); a plain F32 cache is filled with every written head vector's reconstruction
// (KvQuantizer::dequantize, the original space); backend::reference::paged_attention over that
// F32 cache is the oracle for the CPU kernel (each ISA), which reads the codes in the rotated
// space, and for the reference's own quantized read. Shuffled block ids, GQA/MQA, windows,
// soft-caps, sinks, split-K decodes; head_dim 64/128/256 (Walsh–Hadamard) and 80 (sign-only).
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>

#include "backend/cpu/attention.h"
#include "backend/reference/attention.h"
#include "core/kv_quant.h"
#include "op_test_util.h"
#include "ops/attention.h"

namespace oxyd::test {
namespace {

KvFormat qf(int bits) { return *kv_format_of_bits(bits); }

struct QCase {
  std::string name;
  std::vector<std::pair<int, int>> reqs;  // (tokens cached before, query_len)
  int num_heads, num_kv_heads, head_dim, block_size, bits;
  int sliding_window = 0;
  float softcap = 0;
  bool sinks = false;
};

struct QBatch {
  QCase c;
  int64_t num_tokens = 0, num_blocks = 0, max_blocks = 0;
  HostTensor q, kq, vq, kd, vd, qsl, seq_lens, table, sinks, key_all, value_all, slots;

  explicit QBatch(const QCase& cs) : c(cs) {
    const int64_t nr = int64_t(c.reqs.size()), row = int64_t(c.num_kv_heads) * c.head_dim;
    int64_t total_blocks = 0, total = 0;
    for (auto [ctx, ql] : c.reqs) {
      const int64_t nb = (ctx + ql + c.block_size - 1) / c.block_size;
      total_blocks += nb, max_blocks = std::max(max_blocks, nb + 1), num_tokens += ql, total += ctx + ql;
    }
    num_blocks = total_blocks + 2;
    std::mt19937 rng(uint32_t(std::hash<std::string>()(c.name)));
    std::uniform_real_distribution<float> dist(-1, 1);
    std::vector<int32_t> ids(static_cast<size_t>(num_blocks));
    std::iota(ids.begin(), ids.end(), 0);
    std::shuffle(ids.begin(), ids.end(), rng);
    qsl = HostTensor(DType::I32, {nr + 1}), seq_lens = HostTensor(DType::I32, {nr});
    table = HostTensor(DType::I32, {nr, max_blocks});
    std::fill(table.i(), table.i() + table.n(), -1);
    key_all = HostTensor(DType::F32, {total, c.num_kv_heads, c.head_dim}), value_all = HostTensor(key_all.t);
    slots = HostTensor(DType::I32, {total});
    int64_t next = 0, t_all = 0;
    qsl.i()[0] = 0;
    for (int64_t r = 0; r < nr; ++r) {
      const int64_t seq = c.reqs[size_t(r)].first + c.reqs[size_t(r)].second;
      seq_lens.i()[r] = int32_t(seq), qsl.i()[r + 1] = qsl.i()[r] + c.reqs[size_t(r)].second;
      for (int64_t b = 0; b * c.block_size < seq; ++b) table.i()[r * max_blocks + b] = ids[size_t(next++)];
      for (int64_t t = 0; t < seq; ++t, ++t_all) {
        // keys with a per-token offset: real keys are far from zero-mean per vector
        const float off = 0.5f * dist(rng);
        for (int64_t e = 0; e < row; ++e) {
          key_all.f()[t_all * row + e] = dist(rng) + off;
          value_all.f()[t_all * row + e] = dist(rng);
        }
        slots.i()[t_all] = table.i()[r * max_blocks + t / c.block_size] * c.block_size + int32_t(t % c.block_size);
      }
    }
    const int64_t rb = kv_quant_row_bytes(c.head_dim, c.bits);
    kq = HostTensor(DType::U8, {num_blocks, c.block_size, c.num_kv_heads, rb}), vq = HostTensor(kq.t);
    std::memset(kq.buf.data(), 0, kq.buf.size()), std::memset(vq.buf.data(), 0, vq.buf.size());
    kd = HostTensor(DType::F32, {num_blocks, c.block_size, c.num_kv_heads, c.head_dim}), vd = HostTensor(kd.t);
    std::memset(kd.buf.data(), 0xff, kd.buf.size()), std::memset(vd.buf.data(), 0xff, vd.buf.size());
    q = HostTensor(DType::F32, {num_tokens, c.num_heads, c.head_dim});
    for (int64_t i = 0; i < q.n(); ++i) q.f()[i] = 2.0f * dist(rng);
    sinks = HostTensor(DType::F32, {c.num_heads});
    for (int64_t h = 0; h < c.num_heads; ++h) sinks.f()[h] = 3.0f * dist(rng);
  }

  // kd / vd ← the reconstruction of every written head vector of kq / vq.
  void dequantize_written() {
    const KvQuantizer& k = kv_quantizer(c.head_dim, c.bits);
    const int64_t rb = k.row_bytes();
    for (int64_t t = 0; t < slots.n(); ++t)
      for (int64_t g = 0; g < c.num_kv_heads; ++g) {
        const int64_t vec = int64_t(slots.i()[t]) * c.num_kv_heads + g;
        k.dequantize(kq.buf.data() + vec * rb, kd.f() + vec * c.head_dim);
        k.dequantize(vq.buf.data() + vec * rb, vd.f() + vec * c.head_dim);
      }
  }

  backend::AttentionParams params(const HostTensor& kc, const HostTensor& vc, const HostTensor& out, KvFormat fmt) const {
    backend::AttentionParams p;
    p.q = q.t, p.k_cache = kc.t, p.v_cache = vc.t, p.query_start_loc = qsl.t, p.seq_lens = seq_lens.t;
    p.block_table = table.t, p.out = out.t;
    if (c.sinks) p.sinks = sinks.t;
    p.scale = 1.0f / std::sqrt(float(c.head_dim));
    p.sliding_window = c.sliding_window, p.logit_softcap = c.softcap, p.kv_format = fmt;
    return p;
  }
};

std::vector<QCase> qcases() {
  return {
      {"decode_gqa_4bit", {{0, 1}, {17, 1}, {100, 1}}, 8, 2, 128, 16, 4},
      {"prefill_chunked_3bit", {{0, 37}, {50, 20}, {3, 1}}, 4, 4, 64, 16, 3},
      {"window_sign_only_hd80_2bit", {{0, 40}, {30, 1}, {61, 12}}, 6, 2, 80, 5, 2, 8},
      {"softcap_sinks_hd256_3bit", {{0, 19}, {33, 1}}, 8, 4, 256, 16, 3, 0, 30.0f, true},
      {"long_decode_mqa_split_k_2bit", {{2000, 1}}, 8, 1, 64, 16, 2},
      {"long_chunk_window_sinks_4bit", {{1500, 3}}, 4, 1, 128, 32, 4, 600, 0, true},
      {"hd36_scalar_decode_4bit", {{0, 9}, {12, 1}}, 4, 2, 36, 8, 4},  // head_dim % 8: no 8-code groups
      // The modes' widths (issue 29): 5 / 6 bits straddle bytes (6: uniform codes), 8 bits one
      // uniform code a byte.
      {"decode_prefill_gqa_8bit", {{0, 21}, {40, 1}}, 8, 2, 256, 16, 8},
      {"prefill_chunked_6bit", {{0, 37}, {50, 20}, {3, 1}}, 4, 4, 64, 16, 6},
      {"window_sinks_hd128_5bit", {{700, 3}, {10, 1}}, 4, 1, 128, 32, 5, 300, 0, true},
      {"hd72_sign_only_6bit", {{0, 9}, {12, 1}}, 4, 2, 72, 8, 6},
      // AVX-512 decodes 16 codes a step (head_dim % 16), AVX2 8: hd 80 and 96 are not multiples of
      // 64 (the widest step any path took).
      {"decode_prefill_hd80_5bit", {{0, 23}, {40, 1}}, 4, 2, 80, 16, 5},
      {"decode_prefill_hd96_8bit", {{0, 17}, {30, 1}}, 4, 1, 96, 8, 8},
      {"decode_prefill_hd64_5bit", {{0, 70}, {300, 1}}, 6, 2, 64, 16, 5},
  };
}

class AttentionKvQuant : public IsaTest {};

TEST_P(AttentionKvQuant, CpuOverCodesEqualsReferenceOverReconstruction) {
  for (const QCase& c : qcases()) {
    SCOPED_TRACE(c.name);
    QBatch b(c);
    ops::reshape_and_cache(b.key_all.t, b.value_all.t, b.kq.t, b.vq.t, b.slots.t, qf(c.bits));
    HostTensor k2(b.kq.t), v2(b.vq.t);
    std::memset(k2.buf.data(), 0, k2.buf.size()), std::memset(v2.buf.data(), 0, v2.buf.size());
    backend::reference::reshape_and_cache(b.key_all.t, b.value_all.t, k2.t, v2.t, b.slots.t, qf(c.bits));
    EXPECT_EQ(std::memcmp(k2.buf.data(), b.kq.buf.data(), k2.buf.size()), 0) << "K bytes";
    EXPECT_EQ(std::memcmp(v2.buf.data(), b.vq.buf.data(), v2.buf.size()), 0) << "V bytes";
    b.dequantize_written();

    HostTensor want(b.q.t), got(b.q.t), ref_q(b.q.t);
    backend::reference::paged_attention(b.params(b.kd, b.vd, want, KvFormat::F32));
    ops::paged_attention(b.params(b.kq, b.vq, got, qf(c.bits)));
    expect_close(got.f(), want.f(), got.n(), tolerance(DType::F32), "cpu over codes vs reference over reconstruction");
    backend::reference::paged_attention(b.params(b.kq, b.vq, ref_q, qf(c.bits)));
    expect_close(ref_q.f(), want.f(), ref_q.n(), {1e-6, 1e-6}, "reference over codes vs over reconstruction");
  }
}

INSTANTIATE_TEST_SUITE_P(Cpu, AttentionKvQuant, testing::ValuesIn(isas_to_test()), isa_param_name);

TEST(AttentionKvQuant, BadCacheShapesAreErrors) {
  QBatch b(qcases()[0]);
  HostTensor out(b.q.t);
  backend::AttentionParams p = b.params(b.kq, b.vq, out, KvFormat::Q3);  // 4-bit rows read as 3-bit
  EXPECT_THROW(ops::paged_attention(p), Error);
  p = b.params(b.kq, b.vq, out, KvFormat::BF16);  // codes said to be a plain cache
  EXPECT_THROW(ops::paged_attention(p), Error);
  p = b.params(b.kd, b.vd, out, KvFormat::Q4);  // F32 cache said to be quantized
  EXPECT_THROW(ops::paged_attention(p), Error);
  p = b.params(b.kd, b.vd, out, KvFormat::F16);  // F32 cache said to be F16
  EXPECT_THROW(ops::paged_attention(p), Error);
  EXPECT_THROW(ops::reshape_and_cache(b.key_all.t, b.value_all.t, b.kq.t, b.vq.t, b.slots.t, KvFormat::Q2), Error);
}

}  // namespace
}  // namespace oxyd::test
