// matmul_bench: backend::cpu::matmul per weight format. Batch 1 is memory-bound: it reports GB/s
// of weight bytes read (the weights are flushed from every cache level before each timed call,
// so they come from DRAM) and the fraction of the read bandwidth measured in the same run.
// Batch > 1 is compute-bound: GFLOP/s (2·m·n·k per matmul). Not a test; prints a table.
// Usage: matmul_bench [--formats=Q4_0,Q8_0] [--shapes=4096x14336,151936x1024] [--batches=1,16,64,512]
//                     [--reps=7] [--pool-gib=0] [--no-flush] [--isa=scalar|avx2|avx512] [--no-amx] [--no-panel]
//                     [--pack]
// (shape = n x k; --pool-gib: rotate batch-1 calls through copies of the weights totalling this;
//  --no-flush: keep caches warm, e.g. with a small shape to see the kernels' compute ceiling;
//  --cpu-time: time with the thread's CPU clock, only with OXYD_NUM_THREADS=1: compute speed on a
//  machine shared with other jobs)
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "backend/cpu/backend.h"
#include "backend/cpu/isa.h"
#include "backend/cpu/matmul.h"
#include "backend/cpu/matmul/pack.h"
#include "bench_util.h"
#include "core/dtype.h"
#include "core/half.h"
#include "core/tensor.h"
#include "core/thread_pool.h"

using namespace oxyd;

namespace {

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  size_t b = 0;
  while (b <= s.size()) {
    size_t e = s.find(sep, b);
    if (e == std::string::npos) e = s.size();
    if (e > b) out.push_back(s.substr(b, e - b));
    b = e + 1;
  }
  return out;
}

struct Rng {
  uint64_t s = 0x9E3779B97F4A7C15ull;
  uint64_t next() {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    return s;
  }
  float uniform() { return float(next() >> 40) / float(1 << 24); }  // [0, 1)
};

void set_f16(uint8_t* p, float v) {
  const uint16_t h = f32_to_f16(v);
  std::memcpy(p, &h, 2);
}

// Random weights: random quantized codes, realistic finite scales (no NaN/denormal slow paths).
void fill_weights(DType t, uint8_t* w, int64_t n, int64_t k, Rng& rng) {
  const int64_t bytes = n * dtype_row_bytes(t, k);
  if (t == DType::F32 || t == DType::F16 || t == DType::BF16) {
    for (int64_t i = 0; i < n * k; ++i) {
      const float v = (rng.uniform() - 0.5f) * 0.1f;
      if (t == DType::F32) std::memcpy(w + 4 * i, &v, 4);
      else {
        const uint16_t h = t == DType::F16 ? f32_to_f16(v) : f32_to_bf16(v);
        std::memcpy(w + 2 * i, &h, 2);
      }
    }
    return;
  }
  for (int64_t i = 0; i + 8 <= bytes; i += 8) {
    const uint64_t r = rng.next();
    std::memcpy(w + i, &r, 8);
  }
  const int64_t bb = dtype_block_bytes(t);
  for (uint8_t* b = w; b < w + bytes; b += bb) {
    const float s = 0.001f + 0.01f * rng.uniform();
    switch (t) {
      case DType::Q4_0: case DType::Q5_0: case DType::Q8_0: case DType::IQ4_NL: case DType::IQ4_XS:
        set_f16(b, s); break;
      case DType::Q4_1: case DType::Q5_1: case DType::Q4_K: case DType::Q5_K:
        set_f16(b, s); set_f16(b + 2, s); break;
      case DType::Q2_K: set_f16(b + 80, s); set_f16(b + 82, s); break;
      case DType::Q3_K: set_f16(b + 108, s); break;
      case DType::Q6_K: set_f16(b + 208, s); break;
      case DType::MXFP4: b[0] = uint8_t(120 + (rng.next() & 7)); break;
      default: break;
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::string formats = "F32,F16,BF16,Q4_0,Q4_1,Q5_0,Q5_1,Q8_0,Q2_K,Q3_K,Q4_K,Q5_K,Q6_K,IQ4_NL,IQ4_XS,MXFP4";
  std::string shapes = "4096x14336,151936x1024", batches = "1,16,64,512";
  int reps = 7;
  double pool_gib = 0.0;
  bool flush = true, cpu_time = false, pack = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto val = [&](const char* key) { return a.rfind(key, 0) == 0 ? a.substr(std::strlen(key)) : std::string(); };
    if (!val("--formats=").empty()) formats = val("--formats=");
    else if (!val("--shapes=").empty()) shapes = val("--shapes=");
    else if (!val("--batches=").empty()) batches = val("--batches=");
    else if (!val("--reps=").empty()) reps = std::atoi(val("--reps=").c_str());
    else if (!val("--pool-gib=").empty()) pool_gib = std::atof(val("--pool-gib=").c_str());
    else if (a == "--no-flush") flush = false;
    else if (a == "--no-amx") backend::cpu::set_matmul_amx(false);
    else if (a == "--no-panel") backend::cpu::set_matmul_panel(false);
    else if (a == "--cpu-time") cpu_time = true;
    else if (a == "--pack") pack = true;
    else if (!val("--isa=").empty()) {
      const std::string s = val("--isa=");
      backend::cpu::set_isa_override(s == "scalar" ? backend::cpu::Isa::SCALAR
                            : s == "avx2" ? backend::cpu::Isa::AVX2 : backend::cpu::Isa::AVX512);
    } else {
      std::fprintf(stderr, "unknown argument %s (see the header of bench/matmul_bench.cc)\n", a.c_str());
      return 2;
    }
  }
  const int threads = ThreadPool::global().num_threads();
  if (cpu_time && threads != 1) {
    std::fprintf(stderr, "--cpu-time needs OXYD_NUM_THREADS=1\n");
    return 2;
  }
  auto clock = [&] { return cpu_time ? bench::thread_cpu_s() : bench::now_s(); };
  if (cpu_time) std::printf("timing: CPU time of the (only) thread, bandwidth loops too\n");
  const auto bw0 = bench::measure_bandwidth(int64_t(1) << 30, 5, cpu_time);
  std::printf("isa %s, threads %d, read bandwidth: 1 GiB passes best %.1f GB/s, 32 MiB windows best %.1f "
              "median %.1f GB/s; triad %.1f GB/s\n",
              backend::cpu::isa_name(backend::cpu::active_isa()), threads, bw0.read_gbs.best,
              bw0.read_chunk_gbs.best, bw0.read_chunk_gbs.median, bw0.triad_gbs.best);
  std::printf("batch 1: GB/s of weight bytes (median | best of reps), %%bw = best / best 32 MiB-window read; "
              "batch > 1: GFLOP/s (best)\n");
  std::printf("%-7s %-12s %8s %16s %6s", "format", "n x k", "MB", "b1 GB/s med|best", "%bw");
  const std::vector<std::string> blist = split(batches, ',');
  for (const auto& b : blist)
    if (b != "1") std::printf(" %9s", ("b" + b + " GF/s").c_str());
  std::printf("\n");
  std::fflush(stdout);

  Rng rng;
  const double bw_read = std::max(bw0.read_chunk_gbs.best, bw0.read_gbs.best);
  for (const auto& fname : split(formats, ',')) {
    const auto dt = dtype_from_name(fname);
    if (!dt) {
      std::fprintf(stderr, "unknown format %s\n", fname.c_str());
      return 2;
    }
    for (const auto& sh : split(shapes, ',')) {
      const auto nk = split(sh, 'x');
      const int64_t n = std::atoll(nk[0].c_str()), k = std::atoll(nk[1].c_str());
      const int64_t wbytes = n * dtype_row_bytes(*dt, k);
      const int64_t copies = std::max<int64_t>(2, int64_t(std::ceil(pool_gib * double(1 << 30) / double(wbytes))));
      Buffer pool(size_t(wbytes * copies));
      fill_weights(*dt, pool.data(), n, k, rng);
      for (int64_t c = 1; c < copies; ++c) std::memcpy(pool.data() + c * wbytes, pool.data(), size_t(wbytes));
      // --pack: matmul reads the packed copies instead, where this CPU packs the format.
      const bool packed = pack && backend::cpu::matmul_packs(*dt);
      const int64_t pbytes = packed ? backend::cpu::matmul_packed_bytes(*dt, n, k) : 0;
      Buffer ppool(size_t(pbytes * copies));
      std::vector<backend::PreparedHandle> registered;  // copy c of the rows reads copy c of the packed bytes
      if (packed) {
        const auto layout = backend::cpu::matmul_pack_layout(*dt);
        backend::cpu::matmul_pack(Tensor(*dt, pool.data(), {n, k}), layout, ppool.data());
        for (int64_t c = 1; c < copies; ++c) std::memcpy(ppool.data() + c * pbytes, ppool.data(), size_t(pbytes));
        for (int64_t c = 0; c < copies; ++c)
          registered.push_back(backend::cpu::cpu_backend().register_prepared(
              Tensor(*dt, pool.data() + c * wbytes, {n, k}), ppool.data() + c * pbytes, uint8_t(layout)));
      }
      std::printf("%-7s %-12s %8.1f", fname.c_str(), sh.c_str(), double(wbytes) / 1e6);
      std::fflush(stdout);
      for (const auto& bs : blist) {
        const int64_t m = std::atoll(bs.c_str());
        std::vector<float> x(size_t(m * k)), y(size_t(m * n));
        for (auto& v : x) v = rng.uniform() - 0.5f;
        Tensor tx(DType::F32, x.data(), {m, k}), ty(DType::F32, y.data(), {m, n});
        std::vector<double> rates;
        const double t_start = bench::now_s();
        const int64_t calls = m == 1 ? reps * copies : reps;
        for (int64_t c = 0; c < calls; ++c) {
          const int64_t copy = m == 1 ? c % copies : 0;
          Tensor tw(*dt, pool.data() + copy * wbytes, {n, k});
          if (m == 1 && flush)
            bench::flush_cache(packed ? static_cast<const void*>(ppool.data() + copy * pbytes) : tw.data, packed ? pbytes : wbytes);
          const double t0 = clock();
          backend::cpu::matmul(tx, tw, ty);
          const double dt_s = clock() - t0;
          rates.push_back(m == 1 ? double(wbytes) / dt_s / 1e9 : 2.0 * double(m * n * k) / dt_s / 1e9);
          if (c >= 1 && bench::now_s() - t_start > (m == 1 ? 10.0 : 3.0)) break;  // slow paths: enough samples
        }
        const bench::Stats st = bench::stats(rates);
        if (m == 1) std::printf(" %7.1f | %6.1f %5.0f%%", st.median, st.best, 100.0 * st.best / bw_read);
        else std::printf(" %9.1f", st.best);
        std::fflush(stdout);
      }
      std::printf("\n");
    }
  }
  const auto bw1 = bench::measure_bandwidth(int64_t(1) << 30, 5, cpu_time);
  std::printf("read bandwidth at the end: 32 MiB windows best %.1f median %.1f GB/s (start %.1f / %.1f)\n",
              bw1.read_chunk_gbs.best, bw1.read_chunk_gbs.median, bw0.read_chunk_gbs.best, bw0.read_chunk_gbs.median);
  return 0;
}
