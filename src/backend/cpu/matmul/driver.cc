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

// The prepared activation rows: a buffer of the calling thread (an engine's, one per model served),
// not of the pool, as the model counts it in its own memory use (Transformer::memory_usage, and
// hub's estimate). Grows only, so matmul does not allocate per call. The kernels' working memory
// is the pool threads' (TileArgs::scratch).
std::vector<uint8_t>& act_scratch() {
  thread_local std::vector<uint8_t> buf;
  return buf;
}

// Scratch bytes for one call: the prepared rows plus 64 for aligning their start.
int64_t scratch_bytes(const MatmulKernel& kern, int64_t m, int64_t k) {
  if (kern.prepare_all) return kern.act_bytes_all(m, k) + 64;
  if (kern.prepare) return m * kern.act_row_bytes(k) + 64;
  return 0;
}

}  // namespace

int64_t matmul_scratch_bytes(DType wtype, int64_t m, int64_t k) {
  if (m <= 0 || k <= 0) return 0;
  return scratch_bytes(select_kernel(wtype, m), m, k);
}

int64_t matmul_scratch_held() { return int64_t(act_scratch().capacity()); }
int64_t matmul_scratch_used() { return int64_t(act_scratch().size()); }

void matmul_reserve_scratch(int64_t bytes) {
  if (bytes > 0) act_scratch().reserve(size_t(bytes));
}

void matmul(const Tensor& x, const Tensor& w, const Tensor& y) {
  const int64_t k = x.cols(), m = x.rows(), n = w.rows();
  OXYD_CHECK(x.dtype == DType::F32 && y.dtype == DType::F32, "matmul: x and y must be F32");
  OXYD_CHECK(w.cols() == k && y.cols() == n && y.rows() == m, "matmul: shape mismatch");
  OXYD_CHECK(decodable(w.dtype), "matmul: unsupported weight dtype");
  if (m == 0 || n == 0) return;
  bool packed = false;
  const PreparedWeight* prep = cpu_backend().prepared(w);
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
  std::vector<uint8_t>& buf = act_scratch();
  if (const int64_t need = scratch_bytes(kern, m, k); int64_t(buf.size()) < need) {
    buf.reserve(size_t(need));  // exactly: resize alone may double the capacity
    buf.resize(size_t(need));
  }
  uint8_t* a = buf.data() + (64 - reinterpret_cast<uintptr_t>(buf.data()) % 64) % 64;
  // One turn on the pool for the whole call: its jobs run back to back, and the single-threaded
  // path's tile uses thread 0's scratch, while other callers (other models' engines) wait.
  ThreadPool& pool = ThreadPool::global();
  const auto turn = pool.take_turn();
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

}  // namespace oxyd::backend::cpu
