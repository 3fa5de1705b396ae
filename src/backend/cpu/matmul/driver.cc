// Matmul driver: asks select.cc for the kernel of the weight, prepares activation rows once (in
// parallel when there are many), then hands chunks of output columns n to the pool's threads.
// Each kernel tiles over m itself so a loaded weight block serves several activation rows.
#include "backend/cpu/matmul.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <vector>

#include "backend/cpu/backend.h"
#include "backend/cpu/matmul/decode.h"
#include "backend/cpu/matmul/kernel.h"
#include "backend/cpu/matmul/pack.h"
#include "backend/cpu/matmul/select.h"
#include "core/error.h"
#include "core/thread_pool.h"

namespace oxyd::backend::cpu {
namespace {

// The prepared activation rows live in thread 0's kMatmulActSlot (scratch_slots.h), used under the
// pool's turn for the whole call: one buffer that only grows, shared by every model the pool serves
// (each counts it in its memory use: Transformer::memory_usage, hub's estimate). The kernels'
// working memory is each pool thread's tile slots (TileArgs::scratch).
uint8_t* act_scratch(ThreadPool& pool, int64_t bytes) {
  return bytes > 0 ? pool.scratch(0).get(kMatmulActSlot, size_t(bytes)) : nullptr;
}

// Scratch bytes for one call: the prepared rows (a slot starts 64-byte aligned).
int64_t scratch_bytes(const MatmulKernel& kern, int64_t m, int64_t k) {
  if (kern.prepare_all) return kern.act_bytes_all(m, k);
  if (kern.prepare) return m * kern.act_row_bytes(k);
  return 0;
}

}  // namespace

int64_t matmul_scratch_bytes(DType wtype, int64_t m, int64_t k) {
  if (m <= 0 || k <= 0) return 0;
  return scratch_bytes(select_kernel(wtype, m), m, k);
}

int64_t matmul_scratch_held() {
  ThreadPool& pool = ThreadPool::global();
  const auto turn = pool.take_turn();
  return int64_t(pool.scratch(0).held(kMatmulActSlot));
}

int64_t matmul_scratch_used() {
  ThreadPool& pool = ThreadPool::global();
  const auto turn = pool.take_turn();
  return int64_t(pool.scratch(0).used(kMatmulActSlot));
}

void matmul_reserve_scratch(int64_t bytes) {
  if (bytes <= 0) return;
  ThreadPool& pool = ThreadPool::global();
  const auto turn = pool.take_turn();
  pool.scratch(0).reserve(kMatmulActSlot, size_t(bytes));
}

namespace {
// A weight packed in place at load (Backend::prepare_in_place) whose layout's kernel does not run
// here: the ISA was lowered after load (tests, benches). Its rows exist only in the copy.
bool rows_gone(const PreparedWeight* prep) { return prep && prep->in_place && !packed_copy_runs(prep); }

// matmul on rows unpacked from such a copy for this call: slow, but the row kernels' result.
void matmul_unpacked(const Tensor& x, const Tensor& w, const PreparedWeight& prep, const Tensor& y) {
  const int64_t n = w.rows(), k = w.cols(), rb = w.row_bytes();
  Buffer rows(size_t(n * rb));
  for (int64_t r = 0; r < n; ++r)
    matmul_unpack_row(w.dtype, PackLayout(prep.layout), prep.bytes, k, r, rows.data() + r * rb);
  matmul(x, Tensor(w.dtype, rows.data(), {n, k}, w.device), y);
}
}  // namespace

void matmul(const Tensor& x, const Tensor& w, const Tensor& y) {
  const int64_t k = x.cols(), m = x.rows(), n = w.rows();
  OXYD_CHECK(x.dtype == DType::F32 && y.dtype == DType::F32, "matmul: x and y must be F32");
  OXYD_CHECK(w.cols() == k && y.cols() == n && y.rows() == m, "matmul: shape mismatch");
  OXYD_CHECK(decodable(w.dtype), "matmul: unsupported weight dtype");
  if (m == 0 || n == 0) return;
  bool packed = false;
  const PreparedWeight* prep = cpu_backend().prepared(w);
  if (rows_gone(prep)) return matmul_unpacked(x, w, *prep, y);
  const MatmulKernel kern = select_kernel(w, prep, m, packed);

  TileArgs base{};
  base.wtype = w.dtype;
  base.k = k;
  base.w = packed ? prep->bytes : static_cast<const uint8_t*>(w.data);
  // A packed copy's 16-row groups are matmul_packed_bytes(t, 16, k) apart: 1/16 of that per row
  // (the original row bytes, except for Q4_K's layout).
  base.w_stride = packed ? matmul_packed_bytes(w.dtype, 16, k) / 16 : w.row_bytes();
  base.n = n;
  base.m = m;
  base.y = y.ptr<float>();
  base.y_stride = n;
  // One turn on the pool for the whole call: its jobs run back to back, and the activation rows and
  // the single-threaded path's tile use thread 0's scratch, while other callers (other models'
  // engines) wait.
  ThreadPool& pool = ThreadPool::global();
  const auto turn = pool.take_turn();
  uint8_t* a = act_scratch(pool, scratch_bytes(kern, m, k));  // 64-byte aligned
  // Output columns are handed out in chunks from a shared counter, so a thread that the OS
  // delays (the machine is shared) does not hold up the others. The chunks shrink as the work runs
  // out (guided scheduling): a claim takes a 2·threads-th of what is left, so the threads end
  // within a small chunk of each other, where fixed chunks left one thread on a 1/16 of a
  // 262144-row head while the other waited (thread-pool spin in a Gemma 3 270M 16-row decode
  // profile 3.5% → 2.2%). A chunk is at most a 8·threads-th of the weight, at least 16 weight rows;
  // at 1-3 activation rows (bandwidth-bound) also ≥ 256 KiB of weights, to keep the hardware
  // prefetchers streaming. From 4 rows compute dominates and that floor would leave the threads
  // unbalanced: a 640-row Q5_0 weight made one 608-row chunk and one 32-row chunk.
  const int num_threads = pool.num_threads();
  const int64_t min_rows = m >= 4 ? 16 : std::max<int64_t>(16, (256 << 10) / std::max<int64_t>(1, base.w_stride));
  auto panels = [](int64_t rows) { return (rows + 15) / 16 * 16; };  // whole 16-row panels (AMX, packed)
  const int64_t chunk_min = panels(std::min<int64_t>(min_rows, n));
  const int64_t chunk = std::max(panels(std::max<int64_t>(16, n / (int64_t(num_threads) * 8))), chunk_min);
  const bool parallel = num_threads > 1 && n > chunk_min;

  const float* xs = x.ptr<float>();
  const int64_t row_bytes = kern.prepare ? kern.act_row_bytes(k) : 0;
  auto prepare_rows = [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) kern.prepare(xs + i * k, k, a + i * row_bytes);
  };
  // Row-wise preparation of a parallel matmul happens inside its one pool job (each thread a share
  // of the rows, then a barrier): a decode step's 16 rows are too few for a job of their own and
  // were quantized by the calling thread alone while the others waited.
  const bool fused_prepare = kern.prepare && !kern.prepare_all && parallel;
  if (kern.prepare_all) {
    pool.run([&](int idx, int num) { kern.prepare_all(xs, m, k, a, idx, num); });
    base.a = a;
    base.a_stride = 0;
  } else if (kern.prepare) {
    // Kernels use aligned loads on their activation layouts (row_bytes is a multiple of 64).
    // Preparing a row costs ~k ops; a separate split only when there is enough of it.
    if (!fused_prepare) parallel_for(m, std::max<int64_t>(1, 65536 / std::max<int64_t>(k, 1)), prepare_rows);
    base.a = a;
    base.a_stride = row_bytes;
  } else {
    base.a = static_cast<const uint8_t*>(x.data);
    base.a_stride = k * int64_t(sizeof(float));
  }
  auto run_rows = [&](int64_t b, int64_t e, int idx) {
    TileArgs t = base;
    t.scratch = &pool.scratch(idx);
    t.w = base.w + b * base.w_stride;
    t.n = e - b;
    t.y = base.y + b;
    kern.tile(t);
  };
  if (!parallel) {
    run_rows(0, n, 0);
    return;
  }
  std::atomic<int64_t> next{0};
  std::atomic<int> prepared{0};
  pool.run([&](int idx, int num) {
    if (fused_prepare) {
      prepare_rows(m * idx / num, m * (idx + 1) / num);
      prepared.fetch_add(1, std::memory_order_acq_rel);
      for (int spins = 0; prepared.load(std::memory_order_acquire) < num; ++spins) ThreadPool::spin_pause(spins);
    }
    for (int64_t b = next.load(std::memory_order_relaxed); b < n;) {
      const int64_t size = std::clamp(panels((n - b) / (2 * int64_t(num))), chunk_min, chunk);
      if (next.compare_exchange_weak(b, b + size, std::memory_order_relaxed)) {
        run_rows(b, std::min(n, b + size), idx);
        b = next.load(std::memory_order_relaxed);
      }
    }
  });
}

namespace {

// One (list, group) pair of a grouped matmul: its kernel, weight rows and output block.
struct GroupJob {
  MatmulKernel kern;
  DType wtype;
  const uint8_t* w;
  int64_t w_stride, n, row0, m, chunk;
  float* y;
  int64_t y_stride;
};

// Whether every job prepares activation rows the same way (then x is prepared once for all).
bool same_preparation(const std::vector<GroupJob>& jobs) {
  for (const GroupJob& j : jobs)
    if (j.kern.prepare_all || j.kern.prepare != jobs[0].kern.prepare || j.kern.act_row_bytes != jobs[0].kern.act_row_bytes)
      return false;
  return true;
}

}  // namespace

void matmul_grouped(const Tensor& x, const int64_t* offsets, int64_t num_groups, const MatmulGroupList* lists,
                    int num_lists) {
  const int64_t k = x.cols(), N = x.rows();
  OXYD_CHECK(x.dtype == DType::F32, "matmul_grouped: x must be F32");
  OXYD_CHECK(offsets[0] >= 0 && offsets[num_groups] <= N, "matmul_grouped: offsets outside x");
  ThreadPool& pool = ThreadPool::global();
  const int num_threads = pool.num_threads();
  auto panels = [](int64_t rows) { return (rows + 15) / 16 * 16; };
  std::vector<GroupJob> jobs;
  bool any_rows_gone = false;
  for (int l = 0; l < num_lists; ++l) {
    const Tensor& y = lists[l].y;
    OXYD_CHECK(y.dtype == DType::F32 && y.rows() == N, "matmul_grouped: y must be F32 [N, n]");
    for (int64_t g = 0; g < num_groups; ++g) {
      const int64_t row0 = offsets[g], m = offsets[g + 1] - row0;
      OXYD_CHECK(m >= 0, "matmul_grouped: offsets must not decrease");
      if (m == 0) continue;
      const Tensor& w = *lists[l].w[g];
      OXYD_CHECK(w.cols() == k && w.rows() == y.cols() && decodable(w.dtype), "matmul_grouped: bad weight");
      bool packed = false;
      const PreparedWeight* prep = cpu_backend().prepared(w);
      if (rows_gone(prep)) any_rows_gone = true;
      GroupJob j{};
      j.kern = select_kernel(w, prep, m, packed);
      j.wtype = w.dtype;
      j.w = packed ? prep->bytes : static_cast<const uint8_t*>(w.data);
      j.w_stride = packed ? matmul_packed_bytes(w.dtype, 16, k) / 16 : w.row_bytes();
      j.n = w.rows();
      j.row0 = row0;
      j.m = m;
      j.y = y.ptr<float>() + row0 * y.cols();
      j.y_stride = y.cols();
      // Column chunks as matmul() sizes them (see there), fixed per job: the jobs themselves
      // balance the threads.
      const int64_t min_rows = m >= 4 ? 16 : std::max<int64_t>(16, (256 << 10) / std::max<int64_t>(1, j.w_stride));
      const int64_t chunk_min = panels(std::min<int64_t>(min_rows, j.n));
      const int64_t chunk_max = std::max(panels(std::max<int64_t>(16, j.n / (int64_t(num_threads) * 8))), chunk_min);
      j.chunk = std::clamp(panels(j.n / (2 * int64_t(num_threads))), chunk_min, chunk_max);
      jobs.push_back(j);
    }
  }
  if (jobs.empty()) return;
  // mixed kernels (or AMX's whole-batch layout, or a weight to unpack first): one call per job
  if (any_rows_gone || !same_preparation(jobs)) {
    for (int l = 0; l < num_lists; ++l)
      for (int64_t g = 0; g < num_groups; ++g) {
        const int64_t row0 = offsets[g], m = offsets[g + 1] - row0;
        if (m == 0) continue;
        const Tensor& y = lists[l].y;
        matmul(Tensor(DType::F32, x.ptr<float>() + row0 * k, {m, k}, x.device), *lists[l].w[g],
               Tensor(DType::F32, y.ptr<float>() + row0 * y.cols(), {m, y.cols()}, y.device));
      }
    return;
  }
  const MatmulKernel& kern = jobs[0].kern;
  const int64_t row_bytes = kern.prepare ? kern.act_row_bytes(k) : 0;
  const auto turn = pool.take_turn();
  uint8_t* a = act_scratch(pool, scratch_bytes(kern, N, k));
  const float* xs = x.ptr<float>();
  std::vector<int64_t> first_item(jobs.size() + 1, 0);
  for (size_t i = 0; i < jobs.size(); ++i) first_item[i + 1] = first_item[i] + (jobs[i].n + jobs[i].chunk - 1) / jobs[i].chunk;
  const int64_t num_items = first_item.back();

  auto run_item = [&](size_t ji, int64_t item, int idx) {  // the tile of one item
    const GroupJob& j = jobs[ji];
    const int64_t b = (item - first_item[ji]) * j.chunk, e = std::min(j.n, b + j.chunk);
    TileArgs t{};
    t.wtype = j.wtype;
    t.k = k;
    t.w = j.w + b * j.w_stride;
    t.w_stride = j.w_stride;
    t.n = e - b;
    t.a = kern.prepare ? a + j.row0 * row_bytes : reinterpret_cast<const uint8_t*>(xs + j.row0 * k);
    t.a_stride = kern.prepare ? row_bytes : k * int64_t(sizeof(float));
    t.m = j.m;
    t.y = j.y + b;
    t.y_stride = j.y_stride;
    t.scratch = &pool.scratch(idx);
    return t;
  };
  if (num_threads == 1 || num_items == 1) {
    for (int64_t i = 0; kern.prepare && i < N; ++i) kern.prepare(xs + i * k, k, a + i * row_bytes);
    for (size_t ji = 0; ji < jobs.size(); ++ji)
      for (int64_t it = first_item[ji]; it < first_item[ji + 1]; ++it) {
        jobs[ji].kern.tile(run_item(ji, it, 0));
      }
    return;
  }
  std::atomic<int64_t> next{0};
  std::atomic<int> prepared{0};
  pool.run([&](int idx, int num) {
    if (kern.prepare) {
      for (int64_t i = N * idx / num; i < N * (idx + 1) / num; ++i) kern.prepare(xs + i * k, k, a + i * row_bytes);
      prepared.fetch_add(1, std::memory_order_acq_rel);
      for (int spins = 0; prepared.load(std::memory_order_acquire) < num; ++spins) ThreadPool::spin_pause(spins);
    }
    size_t ji = 0;  // items are claimed in ascending order: the job cursor only moves forward
    for (int64_t it = next.fetch_add(1, std::memory_order_relaxed); it < num_items;
         it = next.fetch_add(1, std::memory_order_relaxed)) {
      while (first_item[ji + 1] <= it) ++ji;
      jobs[ji].kern.tile(run_item(ji, it, idx));
    }
  });
}

}  // namespace oxyd::backend::cpu
