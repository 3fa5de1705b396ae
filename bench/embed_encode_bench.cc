// embed_encode_bench: the in-process embedding pass (Transformer::embed, no server, no tokenizer)
// of an embed / rank model on S random sequences of T tokens, timed as CPU seconds of the whole
// process per pass beside wall seconds, so that a kernel change can be compared A/B on a loaded
// machine (run it with --threads 1 there; wall-clock figures are for a quiet one). The matmul FLOP
// rate it prints counts 2 · (matmul weights) · tokens per pass, attention aside.
// Usage: embed_encode_bench MODEL [--threads N] [--seqs S] [--tokens T] [--reps R] [--pack on|off]
//                           [--dtype auto|bf16]
// (--pack off: F32 and 32-block weights stay in their file rows instead of matmul/pack.h's groups;
//  --dtype bf16: the server's, the layers' F32 weights held as BF16)
// Prints one line per rep, then "median cpu_s wall_s sentences_per_cpu_s gflops_per_cpu_s".
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "backend/cpu/matmul/pack.h"
#include "core/thread_pool.h"
#include "model/transformer.h"

namespace {

using namespace oxyd;

double cpu_s() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
}

double wall_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: embed_encode_bench MODEL [--threads N] [--seqs S] [--tokens T] [--reps R] "
                         "[--pack on|off] [--dtype auto|bf16]\n");
    return 2;
  }
  const std::string path = argv[1];
  int threads = 1;
  int64_t seqs = 64, tokens = 128, reps = 5;
  bool bf16 = false;
  for (int i = 2; i + 1 < argc; i += 2) {
    const std::string a = argv[i], v = argv[i + 1];
    if (a == "--threads") threads = std::atoi(v.c_str());
    else if (a == "--seqs") seqs = std::atoll(v.c_str());
    else if (a == "--tokens") tokens = std::atoll(v.c_str());
    else if (a == "--reps") reps = std::atoll(v.c_str());
    else if (a == "--pack") backend::cpu::set_matmul_pack(v != "off");
    else if (a == "--dtype") bf16 = v == "bf16";
    else {
      std::fprintf(stderr, "embed_encode_bench: unknown option %s\n", a.c_str());
      return 2;
    }
  }
  ThreadPool::set_global_threads(threads);
  std::unique_ptr<model::Transformer> m = model::Transformer::load(path, Device::CPU, bf16);
  const loader::ModelConfig& c = m->config();
  std::mt19937 rng(0);
  std::uniform_int_distribution<int32_t> id(0, int32_t(c.vocab_size) - 1);
  std::vector<int32_t> ids(size_t(seqs * tokens)), start(size_t(seqs + 1));
  for (int32_t& t : ids) t = id(rng);
  for (int64_t s = 0; s <= seqs; ++s) start[size_t(s)] = int32_t(s * tokens);
  model::EncodeBatch b{ids, {}, start};
  const double H = double(c.hidden_size), I = double(c.intermediate_size);
  const double kv = double(c.num_key_value_heads * c.head_dim), q = double(c.num_attention_heads * c.head_dim);
  const double params = double(c.num_hidden_layers) * (H * (q + 2 * kv) + q * H + 2 * H * I);
  const double flops = 2 * params * double(seqs * tokens);
  m->embed(b);  // warm-up: workspaces, scratch cache
  std::vector<double> cpu, wall;
  for (int64_t r = 0; r < reps; ++r) {
    const double c0 = cpu_s(), w0 = wall_s();
    std::vector<float> out = m->embed(b);
    cpu.push_back(cpu_s() - c0), wall.push_back(wall_s() - w0);
    std::printf("rep %lld cpu_s %.4f wall_s %.4f\n", static_cast<long long>(r), cpu.back(), wall.back());
  }
  std::sort(cpu.begin(), cpu.end());
  std::sort(wall.begin(), wall.end());
  const double mc = cpu[cpu.size() / 2], mw = wall[wall.size() / 2];
  std::printf("median cpu_s %.4f wall_s %.4f sentences_per_cpu_s %.2f gflops_per_cpu_s %.1f (threads %d, %lld x %lld)\n",
              mc, mw, double(seqs) / mc, flops / mc * 1e-9, threads, static_cast<long long>(seqs),
              static_cast<long long>(tokens));
  return 0;
}
