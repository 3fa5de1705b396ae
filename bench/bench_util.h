// Shared helpers for the bench/ executables: a wall clock, median/best of repeated timings,
// and the memory-bandwidth loops (pure read, STREAM triad) over the global ThreadPool.
// Header-only; benches are plain executables that print tables (docs/performance.md).
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <ctime>
#include <vector>

#include <immintrin.h>

#include "core/thread_pool.h"

namespace oxyd::bench {

inline double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

/// CPU time of the calling thread: with one thread, compute speed unaffected by preemption on a
/// shared machine (not by cache sharing).
inline double thread_cpu_s() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
}

struct Stats {
  double best, median, worst;
};

/// Evicts [p, p + bytes) from every cache level, so the next read comes from DRAM. This host
/// reports a very large shared L3 (lscpu: 480 MiB), so cycling through a pool of copies is not
/// enough to keep weights out of cache; benches flush before each timed call instead.
inline void flush_cache(const void* p, int64_t bytes) {
  const char* c = static_cast<const char*>(p);
  for (int64_t i = 0; i < bytes; i += 64) _mm_clflush(c + i);
  _mm_mfence();
}

/// Of rates (higher is better): best = max, worst = min.
inline Stats stats(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return {v.back(), v[v.size() / 2], v.front()};
}

// XORs 256-byte stretches into 4 independent 32-byte accumulators; the result is returned so
// the loads cannot be dropped.
__attribute__((target("avx2"), noinline)) inline uint64_t read_sum(const uint64_t* p, int64_t n) {
  __m256i s0 = _mm256_setzero_si256(), s1 = s0, s2 = s0, s3 = s0;
  const __m256i* v = reinterpret_cast<const __m256i*>(p);
  int64_t i = 0;
  for (; i + 32 <= n; i += 32, v += 8) {
    s0 = _mm256_xor_si256(s0, _mm256_xor_si256(_mm256_loadu_si256(v), _mm256_loadu_si256(v + 4)));
    s1 = _mm256_xor_si256(s1, _mm256_xor_si256(_mm256_loadu_si256(v + 1), _mm256_loadu_si256(v + 5)));
    s2 = _mm256_xor_si256(s2, _mm256_xor_si256(_mm256_loadu_si256(v + 2), _mm256_loadu_si256(v + 6)));
    s3 = _mm256_xor_si256(s3, _mm256_xor_si256(_mm256_loadu_si256(v + 3), _mm256_loadu_si256(v + 7)));
  }
  s0 = _mm256_xor_si256(_mm256_xor_si256(s0, s1), _mm256_xor_si256(s2, s3));
  uint64_t out[4];
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), s0);
  for (; i < n; ++i) out[0] ^= p[i];
  return out[0] ^ out[1] ^ out[2] ^ out[3];
}

__attribute__((target("avx2,fma"), noinline)) inline void triad(double* a, const double* b, const double* c,
                                                                double s, int64_t n) {
  for (int64_t i = 0; i < n; ++i) a[i] = b[i] + s * c[i];
}

/// Read bandwidth in GB/s (1e9 bytes/s) over `bytes` of memory, best of `reps`, all pool threads.
/// read_chunk_gbs: reads of 32 MiB windows cycling through the buffer (comparable to one matmul
/// call on a 33 MB weight; on a shared machine its best catches the quiet moments a matmul does).
struct Bandwidth {
  Stats read_gbs, triad_gbs, read_chunk_gbs;
};

inline Bandwidth measure_bandwidth(int64_t bytes, int reps) {
  const int64_t n = bytes / 8;
  std::vector<uint64_t> buf(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) buf[size_t(i)] = uint64_t(i) * 0x9E3779B97F4A7C15ull;
  std::vector<double> rt, tt;
  volatile uint64_t sink = 0;
  ThreadPool& pool = ThreadPool::global();
  for (int r = 0; r < reps; ++r) {
    std::vector<uint64_t> part(static_cast<size_t>(pool.num_threads()));
    flush_cache(buf.data(), n * 8);
    const double t0 = now_s();
    pool.run([&](int idx, int num) {
      const int64_t b = n * idx / num / 8 * 8, e = n * (idx + 1) / num / 8 * 8;
      part[size_t(idx)] = read_sum(buf.data() + b, e - b);
    });
    rt.push_back(double(n) * 8 / (now_s() - t0) / 1e9);
    for (uint64_t v : part) sink = sink ^ v;
  }
  std::vector<double> ct;
  const int64_t chunk = (int64_t(32) << 20) / 8, num_chunks = std::max<int64_t>(1, n / chunk);
  for (int r = 0; r < 8 * reps; ++r) {
    const uint64_t* base = buf.data() + (r % num_chunks) * chunk;
    std::vector<uint64_t> part(static_cast<size_t>(pool.num_threads()));
    flush_cache(base, chunk * 8);
    const double t0 = now_s();
    pool.run([&](int idx, int num) {
      const int64_t b = chunk * idx / num / 8 * 8, e = chunk * (idx + 1) / num / 8 * 8;
      part[size_t(idx)] = read_sum(base + b, e - b);
    });
    ct.push_back(double(chunk) * 8 / (now_s() - t0) / 1e9);
    for (uint64_t v : part) sink = sink ^ v;
  }
  // Triad over three arrays of bytes/3 each; STREAM convention counts 24 bytes per element.
  const int64_t m = n / 3;
  double* a = reinterpret_cast<double*>(buf.data());
  double* b = a + m;
  double* c = b + m;
  for (int64_t i = 0; i < 3 * m; ++i) a[i] = 1.0 + double(i % 7);
  for (int r = 0; r < reps; ++r) {
    flush_cache(a, 3 * m * 8);
    const double t0 = now_s();
    pool.run([&](int idx, int num) {
      const int64_t lo = m * idx / num, hi = m * (idx + 1) / num;
      triad(a + lo, b + lo, c + lo, 0.5, hi - lo);
    });
    tt.push_back(double(m) * 24 / (now_s() - t0) / 1e9);
  }
  (void)sink;
  return {stats(rt), stats(tt), stats(ct)};
}

}  // namespace oxyd::bench
