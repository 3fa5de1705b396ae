// Matmul driver: picks the kernel for (ISA, weight dtype), prepares activation rows once (in
// parallel when there are many), then hands chunks of output columns n to the pool's threads.
// Each kernel tiles over m itself so a loaded weight block serves several activation rows.
#include "backend/cpu/matmul.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "backend/cpu/matmul_decode.h"
#include "backend/cpu/matmul_kernels.h"
#include "core/cpu_features.h"
#include "core/error.h"
#include "core/thread_pool.h"

namespace oxyd::backend::cpu {
namespace {

Isa detect_best() {
  Isa best = Isa::SCALAR;
  if (isa_supported(Isa::AVX512)) best = Isa::AVX512;
  else if (isa_supported(Isa::AVX2)) best = Isa::AVX2;
  if (const char* env = std::getenv("OXYD_CPU_ISA")) {
    const std::string s(env);
    Isa cap = best;
    if (s == "scalar") cap = Isa::SCALAR;
    else if (s == "avx2") cap = Isa::AVX2;
    else if (s == "avx512") cap = Isa::AVX512;
    if (int(cap) < int(best)) best = cap;
  }
  return best;
}

Isa g_isa = detect_best();

MatmulKernel kernel_for(Isa isa, DType t, int64_t m) {
  switch (isa) {
    case Isa::AVX512: return avx512_kernel(t, m);
    case Isa::AVX2: return avx2_kernel(t, m);
    default: return scalar_kernel(t, m);
  }
}

// Grows only; lives on the calling (engine) thread so matmul does not allocate per call.
std::vector<uint8_t>& act_scratch() {
  thread_local std::vector<uint8_t> buf;
  return buf;
}

}  // namespace

const char* isa_name(Isa isa) {
  switch (isa) {
    case Isa::AVX512: return "avx512";
    case Isa::AVX2: return "avx2";
    default: return "scalar";
  }
}

bool isa_supported(Isa isa) {
  const CpuFeatures& f = cpu_features();
  switch (isa) {
    case Isa::SCALAR: return true;
    case Isa::AVX2: return f.avx2 && f.fma && f.f16c && f.bmi2;
    case Isa::AVX512:
      return f.avx2 && f.fma && f.f16c && f.bmi2 && f.avx512f && f.avx512bw && f.avx512vl &&
             f.avx512dq && f.avx512vnni && f.avx512bf16 && f.avx512vbmi;
  }
  return false;
}

Isa best_isa() {
  static const Isa best = detect_best();
  return best;
}

Isa active_isa() { return g_isa; }

void set_isa(Isa isa) {
  if (!isa_supported(isa))
    throw_error(ErrorCode::UNSUPPORTED, std::string("this CPU cannot run the ") + isa_name(isa) +
                                            " kernels (has: " + cpu_features().to_string() + ")");
  g_isa = isa;
}

void matmul(const Tensor& x, const Tensor& w, const Tensor& y) {
  const int64_t k = x.cols(), m = x.rows(), n = w.rows();
  OXYD_CHECK(x.dtype == DType::F32 && y.dtype == DType::F32, "matmul: x and y must be F32");
  OXYD_CHECK(w.cols() == k && y.cols() == n && y.rows() == m, "matmul: shape mismatch");
  OXYD_CHECK(decodable(w.dtype), "matmul: unsupported weight dtype");
  if (m == 0 || n == 0) return;
  const MatmulKernel kern = kernel_for(g_isa, w.dtype, m);

  TileArgs base{};
  base.wtype = w.dtype;
  base.k = k;
  base.w = static_cast<const uint8_t*>(w.data);
  base.w_stride = w.row_bytes();
  base.n = n;
  base.m = m;
  base.y = y.ptr<float>();
  base.y_stride = n;
  std::vector<uint8_t>& buf = act_scratch();
  if (kern.prepare_all) {
    const int64_t bytes = kern.act_bytes_all(m, k);
    if (buf.size() < size_t(bytes + 64)) buf.resize(size_t(bytes + 64));
    uint8_t* a = buf.data() + (64 - reinterpret_cast<uintptr_t>(buf.data()) % 64) % 64;
    kern.prepare_all(x.ptr<float>(), m, k, a);
    base.a = a;
    base.a_stride = 0;
  } else if (kern.prepare) {
    const int64_t row_bytes = kern.act_row_bytes(k);
    if (buf.size() < size_t(m * row_bytes + 64)) buf.resize(size_t(m * row_bytes + 64));
    // Kernels use aligned loads on their activation layouts (row_bytes is a multiple of 64).
    uint8_t* a = buf.data() + (64 - reinterpret_cast<uintptr_t>(buf.data()) % 64) % 64;
    const float* xs = x.ptr<float>();
    // Preparing a row costs ~k ops; only split over threads when there is enough of it.
    parallel_for(m, std::max<int64_t>(1, 65536 / std::max<int64_t>(k, 1)), [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) kern.prepare(xs + i * k, k, a + i * row_bytes);
    });
    base.a = a;
    base.a_stride = row_bytes;
  } else {
    base.a = static_cast<const uint8_t*>(x.data);
    base.a_stride = k * int64_t(sizeof(float));
  }
  // Output columns are handed out in chunks from a shared counter, so a thread that the OS
  // delays (the machine is shared) does not hold up the others. A chunk is ≥ 16 weight rows and
  // large enough to keep the hardware prefetchers streaming.
  ThreadPool& pool = ThreadPool::global();
  const int num_threads = pool.num_threads();
  const int64_t min_rows = std::max<int64_t>(16, (256 << 10) / std::max<int64_t>(1, base.w_stride));
  int64_t chunk = std::max<int64_t>(16, n / (int64_t(num_threads) * 8));
  chunk = std::max(chunk, std::min<int64_t>(min_rows, n));
  const int64_t num_chunks = (n + chunk - 1) / chunk;
  auto run_chunk = [&](int64_t c) {
    const int64_t b = c * chunk, e = std::min(n, b + chunk);
    TileArgs t = base;
    t.w = base.w + b * base.w_stride;
    t.n = e - b;
    t.y = base.y + b;
    kern.tile(t);
  };
  if (num_threads == 1 || num_chunks == 1) {
    for (int64_t c = 0; c < num_chunks; ++c) run_chunk(c);
    return;
  }
  std::atomic<int64_t> next{0};
  pool.run([&](int, int) {
    for (int64_t c = next.fetch_add(1, std::memory_order_relaxed); c < num_chunks;
         c = next.fetch_add(1, std::memory_order_relaxed))
      run_chunk(c);
  });
}

}  // namespace oxyd::backend::cpu
