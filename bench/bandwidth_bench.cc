// bandwidth_bench: this machine's memory bandwidth with the global ThreadPool's threads
// (OXYD_NUM_THREADS, default all cores): a pure read loop and a STREAM-like triad over ≥ 1 GiB,
// and reads of 32 MiB windows of it (one matmul call's worth of weights).
// Usage: bandwidth_bench [GiB=1] [reps=10]. Prints best / median / worst in GB/s (1e9 B/s).
#include <cstdio>
#include <cstdlib>

#include "bench_util.h"

int main(int argc, char** argv) {
  const double gib = argc > 1 ? std::atof(argv[1]) : 1.0;
  const int reps = argc > 2 ? std::atoi(argv[2]) : 10;
  const int64_t bytes = int64_t(gib * (1ll << 30));
  const auto bw = oxyd::bench::measure_bandwidth(bytes, reps);
  std::printf("threads %d, %.2f GiB, %d reps\n", oxyd::ThreadPool::global().num_threads(), gib, reps);
  std::printf("%-8s %8s %8s %8s  (GB/s)\n", "loop", "best", "median", "worst");
  std::printf("%-8s %8.1f %8.1f %8.1f\n", "read", bw.read_gbs.best, bw.read_gbs.median, bw.read_gbs.worst);
  std::printf("%-8s %8.1f %8.1f %8.1f\n", "triad", bw.triad_gbs.best, bw.triad_gbs.median, bw.triad_gbs.worst);
  std::printf("%-8s %8.1f %8.1f %8.1f  (32 MiB windows, %d reps)\n", "read32M", bw.read_chunk_gbs.best,
              bw.read_chunk_gbs.median, bw.read_chunk_gbs.worst, 8 * reps);
  return 0;
}
