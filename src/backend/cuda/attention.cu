// CUDA paged attention (see attention.h). Head widths 64, 128, 256: the GQA kernel below (a CTA
// per token, kv head and key split serves all the group's query heads, one key per lane). Other
// widths: the split kernel, grid (tokens·heads, splits), 4 warps per CTA; the warps take runs of
// 4 consecutive keys of the split in turn, lane l holds head-dim elements l, l + 32, ... of q, k, v
// (coalesced row reads), a warp-shuffle sum gives each score. Combine kernel: one CTA per
// (token, head) merges the splits' partials and the sink.
#include "backend/cuda/attention.h"

#include <cmath>
#include <string>
#include <type_traits>

#include "backend/cuda/cuda_check.cuh"
#include "backend/cuda/kernel_utils.cuh"

namespace oxyd::backend::cuda {
namespace {

constexpr int kAttnWarps = 4;
constexpr int kKeysPerIter = 4;
// Splits: up to kCtasPerSm CTAs per SM (each warp has only its run of 4 keys' K/V rows in
// flight, so many resident warps are what keeps HBM busy at batch 1), each split at least
// kMinSplitKeys keys so the partials stay a small share of the traffic (batch 1, 4096 keys,
// llama3.2-1b: 32 heads x 32 splits of 128 keys = 1024 CTAs, ~31 warps per SM; partials 0.26 MB
// against 8.4 MB of K/V; was 16 splits of 256 keys).
constexpr int kCtasPerSm = 16;
constexpr int kMinSplitKeys = 128;
constexpr int kMaxSplits = 128;

struct AttnArgs {
  const float* q;
  const void* k;
  const void* v;
  const int32_t* qsl;
  const int32_t* seq_lens;
  const int32_t* block_table;
  const float* sinks;  // nullptr: none
  float* part_acc;     // [tokens·heads, splits, head_dim]
  float* part_ml;      // [tokens·heads, splits, 2]: running max, sum of exp
  float* out;
  int num_reqs, num_heads, num_kv_heads, head_dim, block_size, max_blocks, window, splits;
  float scale, softcap;
  int causal;  // 0: every query sees all seq_lens[r] keys (AttentionParams::causal)
};

struct KeyRange {
  int r, j0, j1;  // the token's request; its keys [j0, j1) in this split
};

// Flat query token `token` belongs to request r (qsl[r] ≤ token < qsl[r + 1]; empty requests own
// no token); its visible keys [max(0, pos − window + 1), pos] (all seq_lens[r] keys when not
// causal) are cut into a.splits equal runs, of which this is run `split` (possibly empty).
__device__ __forceinline__ KeyRange key_range(const AttnArgs& a, int token, int split) {
  const int r = owner_of(a.qsl, a.num_reqs, token);
  const int query_len = a.qsl[r + 1] - a.qsl[r];
  const int pos = a.seq_lens[r] - query_len + (token - a.qsl[r]);
  const int start = a.window > 0 ? max(0, pos - a.window + 1) : 0;
  const int end = a.causal ? pos + 1 : a.seq_lens[r];  // exclusive
  const int chunk = (end - start + a.splits - 1) / a.splits;
  const int j0 = start + split * chunk;
  return {r, j0, min(end, j0 + chunk)};
}

template <typename KV, int DPL>
__global__ void __launch_bounds__(kAttnWarps * 32) attn_split_kernel(AttnArgs a) {
  __shared__ float sm_m[kAttnWarps], sm_l[kAttnWarps];
  __shared__ float sm_acc[kAttnWarps][DPL * 32];
  const int th = int(blockIdx.x), split = int(blockIdx.y);
  const int token = th / a.num_heads, h = th % a.num_heads;
  const int lane = int(threadIdx.x & 31), warp = int(threadIdx.x >> 5);
  const KeyRange kr = key_range(a, token, split);
  const int r = kr.r, j0 = kr.j0, j1 = kr.j1;
  const int g = h / (a.num_heads / a.num_kv_heads);
  const KV* kc = static_cast<const KV*>(a.k);
  const KV* vc = static_cast<const KV*>(a.v);
  const int32_t* bt = a.block_table + int64_t(r) * a.max_blocks;

  float qv[DPL], acc[DPL];
  const float* qp = a.q + int64_t(th) * a.head_dim;
#pragma unroll
  for (int i = 0; i < DPL; ++i) {
    const int d = lane + 32 * i;
    qv[i] = d < a.head_dim ? qp[d] : 0.0f;
    acc[i] = 0.0f;
  }
  float m = -INFINITY, l = 0.0f;
  // Warp w takes runs of kKeysPerIter consecutive keys, runs dealt round-robin to the warps; a
  // run's K and V rows are all loaded before the first score is reduced (memory parallelism).
  for (int base = j0 + warp * kKeysPerIter; base < j1; base += kAttnWarps * kKeysPerIter) {
    float kd[kKeysPerIter][DPL], vd[kKeysPerIter][DPL];
#pragma unroll
    for (int u = 0; u < kKeysPerIter; ++u) {
      const int j = base + u;  // the same for every lane: no divergence
      if (j < j1) {
        const int64_t block = bt[j / a.block_size];
        const int64_t off =
            ((block * a.block_size + j % a.block_size) * a.num_kv_heads + g) * a.head_dim;
#pragma unroll
        for (int i = 0; i < DPL; ++i) {
          const int d = lane + 32 * i;
          kd[u][i] = d < a.head_dim ? to_float(kc[off + d]) : 0.0f;
          vd[u][i] = d < a.head_dim ? to_float(vc[off + d]) : 0.0f;
        }
      } else {
#pragma unroll
        for (int i = 0; i < DPL; ++i) kd[u][i] = vd[u][i] = 0.0f;
      }
    }
    float s[kKeysPerIter];
#pragma unroll
    for (int u = 0; u < kKeysPerIter; ++u) {
      float dot = 0.0f;
#pragma unroll
      for (int i = 0; i < DPL; ++i) dot = fmaf(qv[i], kd[u][i], dot);
      s[u] = dot;
    }
#pragma unroll
    for (int u = 0; u < kKeysPerIter; ++u) {
      s[u] = warp_sum(s[u]) * a.scale;
      if (a.softcap > 0.0f) s[u] = a.softcap * tanhf(s[u] / a.softcap);
    }
#pragma unroll
    for (int u = 0; u < kKeysPerIter; ++u) {
      if (base + u >= j1) break;
      const float m_new = fmaxf(m, s[u]);
      const float corr = expf(m - m_new), p = expf(s[u] - m_new);
      l = l * corr + p;
#pragma unroll
      for (int i = 0; i < DPL; ++i) acc[i] = fmaf(acc[i], corr, p * vd[u][i]);
      m = m_new;
    }
  }
  if (lane == 0) sm_m[warp] = m, sm_l[warp] = l;
#pragma unroll
  for (int i = 0; i < DPL; ++i) sm_acc[warp][lane + 32 * i] = acc[i];
  __syncthreads();
  float mx = -INFINITY;
#pragma unroll
  for (int w = 0; w < kAttnWarps; ++w) mx = fmaxf(mx, sm_m[w]);
  float wt[kAttnWarps];
#pragma unroll
  for (int w = 0; w < kAttnWarps; ++w) wt[w] = sm_m[w] == -INFINITY ? 0.0f : expf(sm_m[w] - mx);
  const int64_t part = int64_t(th) * a.splits + split;
  for (int d = int(threadIdx.x); d < a.head_dim; d += kAttnWarps * 32) {
    float o = 0.0f;
#pragma unroll
    for (int w = 0; w < kAttnWarps; ++w) o = fmaf(sm_acc[w][d], wt[w], o);
    a.part_acc[part * a.head_dim + d] = o;
  }
  if (threadIdx.x == 0) {
    float sum = 0.0f;
#pragma unroll
    for (int w = 0; w < kAttnWarps; ++w) sum = fmaf(sm_l[w], wt[w], sum);
    a.part_ml[2 * part] = mx;
    a.part_ml[2 * part + 1] = sum;
  }
}

// GQA kernel (head_dim 64, 128 or 256): one CTA per (query token, kv head, chunk of GM of the
// group's query heads) and key split, so a K/V row is read once for all the query heads that use
// it. Per iteration each warp takes 32 keys: lane j computes key j's scores against the GM query
// heads (its K row in 16-byte loads, q broadcast from shared memory), the warp's online softmax
// updates with one max / sum reduction per head per 32 keys, and the probabilities go through
// shared memory to the PV product, where lane l owns head-dim elements [l·HD/32, (l+1)·HD/32)
// of every head (each V row one coalesced warp-wide load). Partials as attn_split_kernel's.
constexpr int kGqaWarps = 4;

/// N consecutive elements at p (aligned to their size, or to 16 bytes beyond) as floats, in
/// accesses of up to 16 bytes.
template <typename KV, int N> __device__ __forceinline__ void load_kv(const KV* p, float (&out)[N]) {
  constexpr int P = N * int(sizeof(KV)) <= 16 ? N : kVec16<KV>;  // elements per access
  static_assert(N % P == 0 && (P * sizeof(KV)) % 4 == 0, "whole accesses of 4-16 bytes");
#pragma unroll
  for (int c = 0; c < N / P; ++c) {
    const Pack<KV, P> v = reinterpret_cast<const Pack<KV, P>*>(p)[c];
#pragma unroll
    for (int i = 0; i < P; ++i) out[c * P + i] = to_float(v.v[i]);
  }
}

template <typename KV, int HD, int GM>
__global__ void __launch_bounds__(kGqaWarps * 32) attn_gqa_kernel(AttnArgs a, int group, int head_chunks) {
  constexpr int DL = HD / 32;      // head-dim elements per lane in PV
  constexpr int VEC = kVec16<KV>;  // K elements per 16-byte load
  __shared__ __align__(16) float sq[GM][HD];
  __shared__ float sp[kGqaWarps][GM][32];
  __shared__ float sm_m[kGqaWarps][GM], sm_l[kGqaWarps][GM];
  __shared__ float sm_acc[kGqaWarps][GM][HD];
  const int item = int(blockIdx.x), split = int(blockIdx.y);
  const int chunk_i = item % head_chunks, tk = item / head_chunks;
  const int token = tk / a.num_kv_heads, kvh = tk % a.num_kv_heads;
  const int h0 = kvh * group + chunk_i * GM, nh = min(GM, group - chunk_i * GM);
  const int lane = int(threadIdx.x & 31), warp = int(threadIdx.x >> 5);
  const KeyRange kr = key_range(a, token, split);
  const int r = kr.r, j0 = kr.j0, j1 = kr.j1;
  const KV* kc = static_cast<const KV*>(a.k);
  const KV* vc = static_cast<const KV*>(a.v);
  const int32_t* bt = a.block_table + int64_t(r) * a.max_blocks;
  const int bs = a.block_size, nkv = a.num_kv_heads;

  for (int i = int(threadIdx.x); i < GM * HD; i += kGqaWarps * 32) {
    const int g = i / HD;
    sq[g][i % HD] = g < nh ? a.q[(int64_t(token) * a.num_heads + h0 + g) * HD + i % HD] : 0.0f;
  }
  __syncthreads();
  float m[GM], l[GM], acc[GM][DL];
#pragma unroll
  for (int g = 0; g < GM; ++g) {
    m[g] = -INFINITY, l[g] = 0.0f;
#pragma unroll
    for (int i = 0; i < DL; ++i) acc[g][i] = 0.0f;
  }
  for (int base = j0 + warp * 32; base < j1; base += kGqaWarps * 32) {
    const int j = base + lane;
    const bool valid = j < j1;
    const int jj = valid ? j : base;  // base < j1: a real key, loaded and then masked
    const KV* kp = kc + ((int64_t(bt[jj / bs]) * bs + jj % bs) * nkv + kvh) * HD;
    float s[GM];
#pragma unroll
    for (int g = 0; g < GM; ++g) s[g] = 0.0f;
#pragma unroll 4
    for (int c = 0; c < HD / VEC; ++c) {
      float kv[VEC];
      load_kv<KV, VEC>(kp + c * VEC, kv);
#pragma unroll
      for (int g = 0; g < GM; ++g)
#pragma unroll
        for (int i = 0; i < VEC; ++i) s[g] = fmaf(sq[g][c * VEC + i], kv[i], s[g]);
    }
#pragma unroll
    for (int g = 0; g < GM; ++g) {
      float sc = s[g] * a.scale;
      if (a.softcap > 0.0f) sc = a.softcap * tanhf(sc / a.softcap);
      if (!valid) sc = -INFINITY;
      const float m_new = fmaxf(m[g], warp_max(sc));  // finite: lane 0's key is valid
      const float corr = expf(m[g] - m_new);
      const float p = valid ? expf(sc - m_new) : 0.0f;
      l[g] = fmaf(l[g], corr, warp_sum(p));
#pragma unroll
      for (int i = 0; i < DL; ++i) acc[g][i] *= corr;
      m[g] = m_new;
      sp[warp][g][lane] = p;
    }
    __syncwarp();
    const int nkeys = min(32, j1 - base);
#pragma unroll 8
    for (int t = 0; t < nkeys; ++t) {  // unrolled: several V rows in flight
      const int jt = base + t;  // the same for every lane
      float vv[DL];
      load_kv<KV, DL>(vc + ((int64_t(bt[jt / bs]) * bs + jt % bs) * nkv + kvh) * HD + lane * DL, vv);
#pragma unroll
      for (int g = 0; g < GM; ++g) {
        const float pt = sp[warp][g][t];
#pragma unroll
        for (int i = 0; i < DL; ++i) acc[g][i] = fmaf(pt, vv[i], acc[g][i]);
      }
    }
    __syncwarp();
  }
#pragma unroll
  for (int g = 0; g < GM; ++g) {
    if (lane == 0) sm_m[warp][g] = m[g], sm_l[warp][g] = l[g];
#pragma unroll
    for (int i = 0; i < DL; ++i) sm_acc[warp][g][lane * DL + i] = acc[g][i];
  }
  __syncthreads();
  for (int g = 0; g < nh; ++g) {
    float mx = -INFINITY;
#pragma unroll
    for (int w = 0; w < kGqaWarps; ++w) mx = fmaxf(mx, sm_m[w][g]);
    float wt[kGqaWarps];
#pragma unroll
    for (int w = 0; w < kGqaWarps; ++w) wt[w] = sm_m[w][g] == -INFINITY ? 0.0f : expf(sm_m[w][g] - mx);
    const int64_t part = (int64_t(token) * a.num_heads + h0 + g) * a.splits + split;
    for (int d = int(threadIdx.x); d < HD; d += kGqaWarps * 32) {
      float o = 0.0f;
#pragma unroll
      for (int w = 0; w < kGqaWarps; ++w) o = fmaf(sm_acc[w][g][d], wt[w], o);
      a.part_acc[part * HD + d] = o;
    }
    if (threadIdx.x == 0) {
      float sum = 0.0f;
#pragma unroll
      for (int w = 0; w < kGqaWarps; ++w) sum = fmaf(sm_l[w][g], wt[w], sum);
      a.part_ml[2 * part] = mx;
      a.part_ml[2 * part + 1] = sum;
    }
  }
}

__global__ void attn_combine_kernel(AttnArgs a) {
  const int th = int(blockIdx.x), h = th % a.num_heads;
  const float* ml = a.part_ml + int64_t(th) * a.splits * 2;
  float mx = a.sinks ? a.sinks[h] : -INFINITY;
  for (int s = 0; s < a.splits; ++s) mx = fmaxf(mx, ml[2 * s]);
  float sum = a.sinks ? expf(a.sinks[h] - mx) : 0.0f;
  for (int s = 0; s < a.splits; ++s)
    if (ml[2 * s] != -INFINITY) sum = fmaf(ml[2 * s + 1], expf(ml[2 * s] - mx), sum);
  const float inv = 1.0f / sum;
  const float* acc = a.part_acc + int64_t(th) * a.splits * a.head_dim;
  for (int d = int(threadIdx.x); d < a.head_dim; d += blockDim.x) {
    float o = 0.0f;
    for (int s = 0; s < a.splits; ++s)
      if (ml[2 * s] != -INFINITY) o = fmaf(acc[int64_t(s) * a.head_dim + d], expf(ml[2 * s] - mx), o);
    a.out[int64_t(th) * a.head_dim + d] = o * inv;
  }
}

template <typename KV>
__global__ void cache_write_kernel(const float* __restrict__ key, const float* __restrict__ value,
                                   KV* k_cache, KV* v_cache, const int32_t* __restrict__ slots,
                                   int row) {
  const int64_t t = blockIdx.x;
  const int32_t slot = slots[t];
  if (slot < 0) return;
  for (int i = int(threadIdx.x); i < row; i += blockDim.x) {
    k_cache[int64_t(slot) * row + i] = from_float<KV>(key[t * row + i]);
    v_cache[int64_t(slot) * row + i] = from_float<KV>(value[t * row + i]);
  }
}

}  // namespace

void paged_attention(const AttentionParams& p, Workspace& ws, const Stream& stream, int max_splits) {
  const char* op = "paged_attention";
  for (const auto& [t, name] : {std::pair{&p.q, "q"}, {&p.k_cache, "k_cache"}, {&p.v_cache, "v_cache"},
                                {&p.query_start_loc, "query_start_loc"}, {&p.seq_lens, "seq_lens"},
                                {&p.block_table, "block_table"}, {&p.out, "out"}})
    require_device(*t, op, name);
  if (p.has_sinks()) require_device(p.sinks, op, "sinks");
  require_dtype(p.q, DType::F32, op, "q");
  require_dtype(p.out, DType::F32, op, "out");
  require_dtype(p.v_cache, p.k_cache.dtype, op, "v_cache");
  if (kv_format_quantized(p.kv_format))
    throw Error(ErrorCode::UNSUPPORTED, "cuda paged_attention: quantized KV cache (--kv-quant) not supported");
  const int64_t tokens = p.num_tokens(), heads = p.num_heads(), d = p.head_dim();
  if (d > 256 || p.num_kv_heads() <= 0 || heads % p.num_kv_heads() != 0)
    throw Error(ErrorCode::UNSUPPORTED, "cuda paged_attention: head_dim " + std::to_string(d) +
                                            " (≤ 256) / heads " + std::to_string(heads) +
                                            " per kv head not supported");
  if (tokens == 0 || heads == 0) return;
  int64_t max_keys = p.max_blocks_per_req() * p.block_size();
  if (p.sliding_window > 0) max_keys = std::min<int64_t>(max_keys, p.sliding_window);
  const int64_t items = tokens * heads;
  // The GQA kernel for the common head widths: GM query heads per CTA (the group, up to 8 and
  // GM·d ≤ 1024 floats of shared q), head_chunks CTAs per group when it is larger.
  const int64_t group = heads / p.num_kv_heads();
  const bool gqa = d == 64 || d == 128 || d == 256;
  const int64_t gm_cap = std::min<int64_t>(8, 1024 / d);
  int64_t gm = 1;
  while (gm < group && gm < gm_cap) gm *= 2;
  const int64_t head_chunks = (group + gm - 1) / gm;
  const int64_t ctas = gqa ? tokens * p.num_kv_heads() * head_chunks : items;
  int64_t splits = std::min<int64_t>((max_keys + kMinSplitKeys - 1) / kMinSplitKeys,
                                     (int64_t(sm_count()) * kCtasPerSm + ctas - 1) / ctas);
  splits = std::clamp<int64_t>(splits, 1, max_splits > 0 ? max_splits : kMaxSplits);
  const size_t acc_floats = size_t(items * splits * d), ml_floats = size_t(items * splits * 2);
  float* scratch = static_cast<float*>(ws.get((acc_floats + ml_floats) * sizeof(float)));
  AttnArgs a{p.q.ptr<const float>(), p.k_cache.data, p.v_cache.data,
             p.query_start_loc.ptr<const int32_t>(), p.seq_lens.ptr<const int32_t>(),
             p.block_table.ptr<const int32_t>(), p.has_sinks() ? p.sinks.ptr<const float>() : nullptr,
             scratch, scratch + acc_floats, p.out.ptr<float>(), int(p.num_reqs()), int(heads),
             int(p.num_kv_heads()), int(d), int(p.block_size()), int(p.max_blocks_per_req()),
             p.sliding_window, int(splits), p.scale, p.logit_softcap, p.causal ? 1 : 0};
  const dim3 grid{unsigned(items), unsigned(splits)};
  dispatch_float(p.k_cache.dtype, op, [&](auto tag) {
    using KV = decltype(tag);
    if (gqa) {
      const dim3 ggrid{unsigned(ctas), unsigned(splits)};
      const int g = int(group), hc = int(head_chunks);
      auto launch = [&](auto hd_tag, auto gm_tag) {
        constexpr int HD = decltype(hd_tag)::value, GM = decltype(gm_tag)::value;
        if constexpr (GM * HD <= 1024)
          attn_gqa_kernel<KV, HD, GM><<<ggrid, kGqaWarps * 32, 0, stream.handle()>>>(a, g, hc);
      };
      auto by_gm = [&](auto hd_tag) {
        if (gm == 1) launch(hd_tag, std::integral_constant<int, 1>{});
        else if (gm == 2) launch(hd_tag, std::integral_constant<int, 2>{});
        else if (gm == 4) launch(hd_tag, std::integral_constant<int, 4>{});
        else launch(hd_tag, std::integral_constant<int, 8>{});
      };
      if (d == 64) by_gm(std::integral_constant<int, 64>{});
      else if (d == 128) by_gm(std::integral_constant<int, 128>{});
      else by_gm(std::integral_constant<int, 256>{});
    } else if (d <= 64) attn_split_kernel<KV, 2><<<grid, kAttnWarps * 32, 0, stream.handle()>>>(a);
    else if (d <= 128) attn_split_kernel<KV, 4><<<grid, kAttnWarps * 32, 0, stream.handle()>>>(a);
    else attn_split_kernel<KV, 8><<<grid, kAttnWarps * 32, 0, stream.handle()>>>(a);
    OXYD_CUDA_CHECK_LAUNCH();
  });
  attn_combine_kernel<<<unsigned(items), d <= 128 ? 128 : 256, 0, stream.handle()>>>(a);
  OXYD_CUDA_CHECK_LAUNCH();
}

void reshape_and_cache(const Tensor& key, const Tensor& value, const Tensor& k_cache,
                       const Tensor& v_cache, const Tensor& slot_mapping, const Stream& stream) {
  const char* op = "reshape_and_cache";
  require_device(key, op, "key");
  require_device(value, op, "value");
  require_device(k_cache, op, "k_cache");
  require_device(v_cache, op, "v_cache");
  require_device(slot_mapping, op, "slot_mapping");
  require_dtype(key, DType::F32, op, "key");
  require_dtype(value, DType::F32, op, "value");
  require_dtype(v_cache, k_cache.dtype, op, "v_cache");
  const int64_t tokens = key.dim(0), row = key.dim(1) * key.dim(2);
  if (tokens == 0) return;
  dispatch_float(k_cache.dtype, op, [&](auto tag) {
    using KV = decltype(tag);
    cache_write_kernel<KV><<<unsigned(tokens), 256, 0, stream.handle()>>>(
        key.ptr<const float>(), value.ptr<const float>(), k_cache.ptr<KV>(), v_cache.ptr<KV>(),
        slot_mapping.ptr<const int32_t>(), int(row));
    OXYD_CUDA_CHECK_LAUNCH();
  });
}

}  // namespace oxyd::backend::cuda
