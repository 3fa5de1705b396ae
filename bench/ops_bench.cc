// Non-matmul op throughput on this machine, per CPU kernel variant (scalar / AVX2 / AVX-512,
// forced), on the global thread pool. Memory-bound ops report GB/s of bytes moved and the
// fraction of a STREAM-triad bandwidth measured in the same run; attention prefill reports
// GFLOP/s (4·heads·head_dim per visible query-key pair); decode attention reports GB/s of KV read.
// There is no in-process peer for these ops, so the "ratio" column is against the scalar variant.
// Timings are the best of repeated runs; on a machine shared with compile jobs the threaded
// rows are noisy (a descheduled worker stalls the whole op). Try OXYD_NUM_THREADS=1 too.
// Usage: build/bin/ops_bench [--quick] [--cputime] [name filter, e.g. attn]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <functional>
#include <numeric>
#include <optional>
#include <tuple>
#include <random>
#include <string>
#include <vector>

#include "backend/cpu/gated_delta_net.h"
#include "backend/cpu/isa.h"
#include "core/half.h"
#include "core/kv_format.h"
#include "core/tensor.h"
#include "core/thread_pool.h"
#include "ops/activation.h"
#include "ops/attention.h"
#include "ops/gated_delta_net.h"
#include "ops/rms_norm.h"
#include "ops/rope.h"
#include "ops/softmax.h"

namespace {

using namespace oxyd;
using backend::cpu::Isa;

struct Owned {
  Buffer buf;
  Tensor t;
  Owned(DType dt, std::initializer_list<int64_t> dims) : t(dt, nullptr, dims) {
    buf = Buffer(size_t(t.nbytes()));
    t.data = buf.data();
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> d(-1, 1);
    if (dt == DType::F32) for (int64_t i = 0; i < t.numel(); ++i) t.ptr<float>()[i] = d(rng);
    else if (dt == DType::F16) for (int64_t i = 0; i < t.numel(); ++i) t.ptr<uint16_t>()[i] = f32_to_f16(d(rng));
    else std::memset(buf.data(), 0, buf.size());
  }
};

bool g_cputime = false;  // --cputime: this thread's CPU time (1 thread only), immune to preemption

double now_seconds() {
  if (!g_cputime) return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
}

double time_best(const std::function<void()>& fn, double min_seconds) {
  fn();  // warm-up
  double best = 1e30, total = 0;
  for (int it = 0; it < 1000 && (total < min_seconds || it < 3); ++it) {
    const double t0 = now_seconds();
    fn();
    const double s = now_seconds() - t0;
    best = std::min(best, s), total += s;
  }
  return best;
}

double stream_triad_gbs() {
  const size_t n = size_t(1) << 25;  // 3 arrays × 128 MiB, far beyond the L3
  std::vector<float> a(n, 1.0f), b(n, 2.0f), c(n, 0.0f);
  const double s = time_best([&] {
    parallel_for(int64_t(n), 1 << 16, [&](int64_t lo, int64_t hi) {
      for (int64_t i = lo; i < hi; ++i) c[i] = a[i] + 3.0f * b[i];
    });
  }, 0.5);
  return 3.0 * double(n) * 4 / s / 1e9;
}

struct Row {
  std::string name, unit;
  std::function<void()> fn;
  double amount;  // bytes (GB/s) or flops (GFLOP/s)
};

}  // namespace

int main(int argc, char** argv) {
  bool quick = false;
  std::string filter;  // run only the rows whose name contains this
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--quick") quick = true;
    else if (std::string(argv[i]) == "--cputime") g_cputime = true;
    else filter = argv[i];
  }
  const double min_s = quick ? 0.05 : 0.3;
  if (g_cputime) ThreadPool::set_global_threads(1);
  const int threads = ThreadPool::global().num_threads();
  const double bw = stream_triad_gbs();
  std::printf("threads %d, detected ISA %s, STREAM triad %.1f GB/s\n\n", threads,
              std::string(backend::cpu::isa_name(backend::cpu::detected_isa())).c_str(), bw);

  std::vector<Row> rows;
  // RMSNorm [tokens, 4096]
  // Outputs never alias inputs: repeating an in-place op would drift into denormals.
  static Owned x1(DType::F32, {1, 4096}), w(DType::F32, {4096}), x512(DType::F32, {512, 4096});
  static Owned o1(DType::F32, {1, 4096}), o512(DType::F32, {512, 4096});
  rows.push_back({"rms_norm 1x4096", "GB/s", [] { ops::rms_norm(x1.t, &w.t, 1e-6f, o1.t); }, 3.0 * 4096 * 4});
  rows.push_back({"rms_norm 512x4096", "GB/s", [] { ops::rms_norm(x512.t, &w.t, 1e-6f, o512.t); }, 2.0 * 512 * 4096 * 4});
  // RoPE q [512, 32, 128]
  static Owned q512(DType::F32, {512, 32, 128}), r512(DType::F32, {512, 32, 128}), pos512(DType::I32, {512});
  static Owned freq(DType::F32, {64});
  for (int i = 0; i < 512; ++i) pos512.t.ptr<int32_t>()[i] = i;
  for (int i = 0; i < 64; ++i) freq.t.ptr<float>()[i] = std::pow(10000.0f, -i / 64.0f);
  rows.push_back({"rope neox 512x32x128", "GB/s",
                  [] { ops::rope(q512.t, pos512.t, freq.t, nullptr, ops::RopeStyle::NEOX, 1, r512.t); }, 2.0 * 512 * 32 * 128 * 4});
  // Softmax
  static Owned s32(DType::F32, {32, 4096}), vocab(DType::F32, {1, 151936});
  static Owned so32(DType::F32, {32, 4096}), sovocab(DType::F32, {1, 151936});
  rows.push_back({"softmax 32x4096", "GB/s", [] { ops::softmax(s32.t, so32.t); }, 3.0 * 32 * 4096 * 4});
  rows.push_back({"softmax 1x151936", "GB/s", [] { ops::softmax(vocab.t, sovocab.t); }, 3.0 * 151936 * 4});
  // SwiGLU fused [tokens, 2·14336] → [tokens, 14336]
  static Owned gu1(DType::F32, {1, 2 * 14336}), y1(DType::F32, {1, 14336});
  static Owned gu64(DType::F32, {64, 2 * 14336}), y64(DType::F32, {64, 14336});
  rows.push_back({"swiglu fused 1x14336", "GB/s", [] { ops::glu_fused(ops::Activation::SILU, gu1.t, y1.t); }, 3.0 * 14336 * 4});
  rows.push_back({"swiglu fused 64x14336", "GB/s", [] { ops::glu_fused(ops::Activation::SILU, gu64.t, y64.t); }, 3.0 * 64 * 14336 * 4});
  rows.push_back({"gelu_tanh glu 64x14336", "GB/s", [] { ops::glu_fused(ops::Activation::GELU_TANH, gu64.t, y64.t); }, 3.0 * 64 * 14336 * 4});

  // Attention: 32 heads, 8 kv heads, head_dim 128 unless given, block 16, F16 cache.
  const int64_t bs = 16;
  // fmt: a quantized cache format (--kv-quant) instead of `kv`, its rows written by reshape_and_cache
  // from uniform(-1, 1) keys and values.
  auto make_batch = [&](std::vector<std::pair<int, int>> reqs, int64_t nh = 32, int64_t nkv = 8, int64_t hd = 128,
                        DType kv = DType::F16, std::optional<KvFormat> fmt = std::nullopt) {  // (ctx, query_len)
    struct B {
      Owned q, out, kc, vc, qsl, seq, table;
      ops::AttentionParams p;
      double kv_bytes = 0, flops = 0;
    };
    int64_t tokens = 0, blocks = 0, maxb = 0;
    for (auto [c, l] : reqs) tokens += l, blocks += (c + l + bs - 1) / bs, maxb = std::max<int64_t>(maxb, (c + l + bs - 1) / bs);
    const int64_t row = fmt ? kv_format_row_elems(*fmt, hd) : hd;
    if (fmt) kv = DType::U8;
    auto* b = new B{Owned(DType::F32, {tokens, nh, hd}), Owned(DType::F32, {tokens, nh, hd}),
                    Owned(kv, {blocks, bs, nkv, row}), Owned(kv, {blocks, bs, nkv, row}),
                    Owned(DType::I32, {int64_t(reqs.size()) + 1}), Owned(DType::I32, {int64_t(reqs.size())}),
                    Owned(DType::I32, {int64_t(reqs.size()), maxb}), {}, 0, 0};
    int32_t* qsl = b->qsl.t.ptr<int32_t>();
    int64_t next = 0;
    qsl[0] = 0;
    for (size_t r = 0; r < reqs.size(); ++r) {
      const int seq = reqs[r].first + reqs[r].second;
      b->seq.t.ptr<int32_t>()[r] = seq;
      qsl[r + 1] = qsl[r] + reqs[r].second;
      for (int64_t k = 0; k * bs < seq; ++k) b->table.t.ptr<int32_t>()[r * maxb + k] = int32_t(next++);
      b->kv_bytes += 2.0 * seq * nkv * (fmt ? double(row) : hd * double(dtype_block_bytes(kv)));
      for (int i = 0; i < reqs[r].second; ++i) b->flops += 4.0 * nh * hd * (reqs[r].first + i + 1);
    }
    b->p.q = b->q.t, b->p.out = b->out.t, b->p.k_cache = b->kc.t, b->p.v_cache = b->vc.t;
    b->p.query_start_loc = b->qsl.t, b->p.seq_lens = b->seq.t, b->p.block_table = b->table.t;
    b->p.scale = 1.0f / std::sqrt(float(hd));
    b->p.kv_format = fmt ? *fmt : *kv_format_of_dtype(kv);
    if (fmt) {
      Owned k(DType::F32, {blocks * bs, nkv, hd}), v(DType::F32, {blocks * bs, nkv, hd}), slots(DType::I32, {blocks * bs});
      for (int64_t i = 0; i < blocks * bs; ++i) slots.t.ptr<int32_t>()[i] = int32_t(i);
      ops::reshape_and_cache(k.t, v.t, b->kc.t, b->vc.t, slots.t, *fmt);
    }
    return b;
  };
  auto* dec1 = make_batch({{4095, 1}});
  auto* dec16 = make_batch(std::vector<std::pair<int, int>>(16, {1023, 1}));
  auto* pre = make_batch({{0, 512}});
  auto* pre_f32 = make_batch({{0, 512}}, 32, 8, 128, DType::F32);
  auto* mqa = make_batch({{8191, 1}}, 4, 1, 256);  // Gemma-3-270M-like global layer, split-K
  // A serving step at 16 streams of short chats: Qwen3-0.6B's 16 heads / 8 kv heads, the server's
  // default F32 cache, 64 tokens of context each.
  auto* dec1f = make_batch({{4095, 1}}, 32, 8, 128, DType::F32);
  auto* dec16s = make_batch(std::vector<std::pair<int, int>>(16, {63, 1}), 16, 8, 128, DType::F32);
  auto* pre2k = make_batch({{0, 2048}}, 16, 8, 128, DType::F32);  // a Qwen3-0.6B layer's 2048-token prompt
  auto* pre2kg = make_batch({{0, 2048}}, 4, 1, 256, DType::F32);  // a Gemma-3-270M global layer's prompt

  rows.push_back({"attn decode 1 req seq 4096 (KV)", "GB/s", [=] { ops::paged_attention(dec1->p); }, dec1->kv_bytes});
  // One decode step of one layer per KV-cache format (issue 29: a quantized cache must decode no
  // slower than F16): Gemma-3-270M-like (4 heads, 1 KV head, hd 256) and SmolLM2-135M-like (9 / 3,
  // hd 64) at 2k and 8k keys; Mkey/s = context keys per microsecond, comparable across formats.
  for (auto [name, nh, nkv, hd] : {std::tuple<const char*, int64_t, int64_t, int64_t>{"4q/1kv hd256", 4, 1, 256},
                                   {"9q/3kv hd64", 9, 3, 64}})
    for (int seq : {2048, 8192})
      for (auto [fname, fmt] : {std::pair<const char*, std::optional<KvFormat>>{"F16", std::nullopt},
                                {"Q8", KvFormat::Q8}, {"Q6", KvFormat::Q6}, {"Q5", KvFormat::Q5}}) {
        auto* b = make_batch({{seq - 1, 1}}, nh, nkv, hd, DType::F16, fmt);
        rows.push_back({std::string("kvq decode ") + name + " " + std::to_string(seq / 1024) + "k " + fname, "Mkey/s",
                        [=] { ops::paged_attention(b->p); }, double(seq) * 1e3});
      }
  rows.push_back({"attn decode 16 req seq 1024 (KV)", "GB/s", [=] { ops::paged_attention(dec16->p); }, dec16->kv_bytes});
  rows.push_back({"attn prefill 512 tokens", "GFLOP/s", [=] { ops::paged_attention(pre->p); }, pre->flops});
  rows.push_back({"attn prefill 512 tokens F32", "GFLOP/s", [=] { ops::paged_attention(pre_f32->p); }, pre_f32->flops});
  rows.push_back({"attn prefill 2048 16q/8kv F32", "GFLOP/s", [=] { ops::paged_attention(pre2k->p); }, pre2k->flops});
  rows.push_back({"attn prefill 2048 4q/1kv hd256 F32", "GFLOP/s", [=] { ops::paged_attention(pre2kg->p); }, pre2kg->flops});
  rows.push_back({"attn decode MQA 4q/1kv hd256 seq 8192", "GB/s", [=] { ops::paged_attention(mqa->p); }, mqa->kv_bytes});
  rows.push_back({"attn decode 1 req seq 4096 F32 (KV)", "GB/s", [=] { ops::paged_attention(dec1f->p); }, dec1f->kv_bytes});
  rows.push_back({"attn decode 16 req seq 64 16q/8kv F32", "GB/s", [=] { ops::paged_attention(dec16s->p); }, dec16s->kv_bytes});

  // Gated DeltaNet recurrence at Qwen3.5-0.8B's shapes (16 key = 16 value heads, dk = dv = 128).
  // Decode: 18 requests of one token on 18 state slots stand for one token through the 18 DeltaNet
  // layers (18 MiB of state, beyond the L2: a decode step streams it); GB/s of the state read
  // once and written once. Prefill: 512 tokens of one request in the recurrent form, GFLOP/s of
  // its 6·dk·dv flops per token and head (Sᵀk, Sᵀq, the rank-1 update).
  struct Gdn {
    Owned qkv, g, beta, state, out, qsl, slots;
  };
  auto make_gdn = [](int64_t reqs, int64_t per) {
    const int64_t T = reqs * per, H = 16, D = 128;
    auto* b = new Gdn{Owned(DType::F32, {T, 3 * H * D}), Owned(DType::F32, {T, H}), Owned(DType::F32, {T, H}),
                      Owned(DType::F32, {reqs, H, D, D}), Owned(DType::F32, {T, H, D}),
                      Owned(DType::I32, {reqs + 1}), Owned(DType::I32, {reqs})};
    for (int64_t i = 0; i < T * H; ++i) b->g.t.ptr<float>()[i] = -0.1f, b->beta.t.ptr<float>()[i] = 0.5f;
    std::memset(b->state.buf.data(), 0, b->state.buf.size());
    for (int64_t r = 0; r <= reqs; ++r) b->qsl.t.ptr<int32_t>()[r] = int32_t(r * per);
    for (int64_t r = 0; r < reqs; ++r) b->slots.t.ptr<int32_t>()[r] = int32_t(r);
    return b;
  };
  auto* gdn_dec = make_gdn(18, 1);
  auto* gdn_pre = make_gdn(1, 512);
  auto gdn = [](Gdn* b) {
    ops::gated_delta_rule(b->qkv.t, 16, b->g.t, b->beta.t, b->state.t, b->qsl.t, b->slots.t, b->out.t);
  };
  rows.push_back({"gdn decode 18 layers 16h 128x128", "GB/s", [=] { gdn(gdn_dec); }, 2.0 * 18 * 16 * 128 * 128 * 4});
  rows.push_back({"gdn prefill 512 tokens 16h 128x128", "GFLOP/s", [=] { gdn(gdn_pre); }, 6.0 * 512 * 16 * 128 * 128});
  // The two forms on their own, both in the recurrent form's flops (so the figures compare as speed).
  auto form = [](Gdn* b, bool chunked) {
    (chunked ? backend::cpu::gated_delta_rule_chunked : backend::cpu::gated_delta_rule_recurrent)(
        b->qkv.t, 16, b->g.t, b->beta.t, b->state.t, b->qsl.t, b->slots.t, b->out.t);
  };
  rows.push_back({"gdn prefill 512 recurrent form", "GFLOP/s", [=] { form(gdn_pre, false); }, 6.0 * 512 * 16 * 128 * 128});
  rows.push_back({"gdn prefill 512 chunked form", "GFLOP/s", [=] { form(gdn_pre, true); }, 6.0 * 512 * 16 * 128 * 128});

  std::vector<Isa> isas;
  for (int i = 0; i <= int(backend::cpu::detected_isa()); ++i) isas.push_back(Isa(i));
  std::printf("%-34s %8s", "op", "unit");
  for (Isa isa : isas) std::printf(" %9s", std::string(backend::cpu::isa_name(isa)).c_str());
  std::printf(" %8s %9s\n", "best/sc", "best/BW");
  for (const Row& r : rows) {
    if (!filter.empty() && r.name.find(filter) == std::string::npos) continue;
    std::printf("%-34s %8s", r.name.c_str(), r.unit.c_str());
    double first = 0, best = 0;
    for (Isa isa : isas) {
      backend::cpu::set_isa_override(isa);
      const double v = r.amount / time_best(r.fn, min_s) / 1e9;
      if (isa == Isa::SCALAR) first = v;
      best = std::max(best, v);
      std::printf(" %9.2f", v);
    }
    backend::cpu::set_isa_override(std::nullopt);
    std::printf(" %7.1fx", best / first);
    if (r.unit == "GB/s") std::printf(" %8.0f%%", 100.0 * best / bw);
    std::printf("\n");
  }
  return 0;
}
