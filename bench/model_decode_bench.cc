// model_decode_bench: single-request prefill and decode timing of a whole model::Transformer, the
// engine-level counterpart of llama-bench's pp / tg tests. It is a server for a driver script
// (bench/model_bench.py), which alternates it with llama.cpp on the same token ids: the model is
// loaded once, then each stdin line is one timed test:
//   prefill N ID0 ID1 ...   fresh cache, one forward of the N ids at positions 0..N-1
//   decode M ID0 ID1 ...    fresh cache, ID0 at position 0 (untimed), then M one-token steps
//                           feeding ID1..IDM at positions 1..M (timed)
//   batch R M ID0 ID1 ...   fresh cache, R sequences each prefilled (untimed) with ID0..ID31,
//                           then M steps of R rows, one decode token per sequence (timed), logits
//                           for every row: the engine's decode step at concurrency R
//   tail C M ID0 ID1 ...    fresh cache, ID0..ID(C-1) prefilled in one step, then M one-token
//                           steps feeding IDC..ID(C+M-1): decode at context C. Prints
//                           'tail C M PREFILL_SECONDS DECODE_SECONDS DECODE_CPU_SECONDS' (the
//                           last: CPU time of the whole process over the steps, which on a loaded
//                           machine with --threads 1 is the figure to compare, not the wall time)
//   retail C M ID0 ID1 ...  the M steps of the last `tail C M` again on the cache it left (no
//                           prefill; the steps overwrite their own slots): 'tail C M 0 DECODE_SECONDS
//                           DECODE_CPU_SECONDS'
// Each prints one line "prefill|decode TOKENS SECONDS" to stdout. Hybrid (Gated DeltaNet) models:
// the one sequence keeps its recurrent state in slot 0, batch row r in slot r (at most the
// cache's Transformer::kDefaultStateSlots rows). Logits are computed for the last
// token of every step (as in generation); nothing is sampled. Not a test: prints timings only.
// Usage: model_decode_bench MODEL [--threads N] [--kv f32|f16|bf16|q4|q3|q2] [--ctx TOKENS] [--amx on|off] [--panel on|off]
//        [--pack on|off]
// (q4/q3/q2: the quantized cache of --kv-quant lossless/balanced/aggressive, core/kv_quant.h;
// --amx off: matmul keeps to the AVX-512 VNNI/FMA kernels, --panel off: batched 32-block matmuls
// keep to the row-dot VNNI kernels, --pack off: 32-block weights stay in their file rows instead
// of matmul/pack.h's 16-row groups; all for before/after comparisons)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "backend/cpu/matmul.h"
#include "backend/cpu/matmul/pack.h"
#include "core/error.h"
#include "core/thread_pool.h"
#include "model/transformer.h"

namespace {

using namespace oxyd;

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double cpu_s() {  // every thread of the process (the pool's workers too)
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
}

struct Runner {
  model::Transformer& m;
  model::KvCache cache;
  std::vector<int32_t> table;
  int64_t num_blocks;

  // Runs toks at positions [start, start + n) with logits for the last one.
  void step(const std::vector<int32_t>& toks, int64_t start) {
    const int64_t n = static_cast<int64_t>(toks.size());
    std::vector<int32_t> pos(n), qsl = {0, static_cast<int32_t>(n)}, lens = {static_cast<int32_t>(start + n)},
                                 last = {static_cast<int32_t>(n - 1)};
    for (int64_t i = 0; i < n; ++i) pos[i] = static_cast<int32_t>(start + i);
    model::ForwardBatch b;
    b.token_ids = toks;
    b.positions = pos;
    b.query_start_loc = qsl;
    b.seq_lens = lens;
    b.block_table = table;
    b.max_blocks_per_req = num_blocks;
    b.slot_mapping = pos;  // one sequence on blocks 0..num_blocks-1 in order
    b.logits_indices = last;
    const int32_t slot0 = 0;  // hybrid models: the one sequence's recurrent state (zeroed at position 0)
    if (m.has_linear_attention()) b.state_slots = {&slot0, 1};
    Tensor out = m.forward(b, cache);
    volatile float sink = out.ptr<float>()[0];
    (void)sink;
  }

  // One step of R sequences, sequence r owning blocks [r*per, (r+1)*per): toks[r] at position pos.
  void batch_step(const std::vector<int32_t>& toks, int64_t pos, int64_t per, int64_t block) {
    const int64_t n = static_cast<int64_t>(toks.size());
    std::vector<int32_t> p(n, static_cast<int32_t>(pos)), qsl(n + 1), lens(n, static_cast<int32_t>(pos + 1)),
        last(n), slots(n), bt(n * per);
    for (int64_t r = 0; r < n; ++r) {
      qsl[r + 1] = static_cast<int32_t>(r + 1);
      last[r] = static_cast<int32_t>(r);
      slots[r] = static_cast<int32_t>(r * per * block + pos);
      for (int64_t j = 0; j < per; ++j) bt[r * per + j] = static_cast<int32_t>(r * per + j);
    }
    model::ForwardBatch b;
    b.token_ids = toks;
    b.positions = p;
    b.query_start_loc = qsl;
    b.seq_lens = lens;
    b.block_table = bt;
    b.max_blocks_per_req = per;
    b.slot_mapping = slots;
    b.logits_indices = last;
    std::vector<int32_t> states(n);  // hybrid models: sequence r's recurrent state in slot r
    for (int64_t r = 0; r < n; ++r) states[r] = static_cast<int32_t>(r);
    if (m.has_linear_attention()) b.state_slots = states;
    Tensor out = m.forward(b, cache);
    volatile float sink = out.ptr<float>()[0];
    (void)sink;
  }
};

int main_impl(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr,
                 "usage: model_decode_bench MODEL [--threads N] [--kv f32|f16|bf16|q4|q3|q2] [--ctx TOKENS]"
                 " [--amx on|off] [--panel on|off] [--pack on|off]\n");
    return 2;
  }
  const std::string path = argv[1];
  int threads = 0;
  int64_t ctx = 2048;
  KvFormat kv = KvFormat::F32;
  for (int i = 2; i + 1 < argc; i += 2) {
    const std::string a = argv[i], v = argv[i + 1];
    if (a == "--threads") threads = std::atoi(v.c_str());
    else if (a == "--ctx") ctx = std::atoll(v.c_str());
    else if (a == "--amx") backend::cpu::set_matmul_amx(v != "off");
    else if (a == "--panel") backend::cpu::set_matmul_panel(v != "off");
    else if (a == "--pack") backend::cpu::set_matmul_pack(v != "off");
    else if (a == "--kv")
      kv = v == "f16" || v == "bf16" || v == "f32" ? parse_kv_format(v, "off") : parse_kv_format("bf16", v);  // q2..q8, modes
    else {
      std::fprintf(stderr, "model_decode_bench: unknown option %s\n", a.c_str());
      return 2;
    }
  }
  if (threads > 0) ThreadPool::set_global_threads(threads);
  const double t0 = now_s();
  std::unique_ptr<model::Transformer> m = model::Transformer::load(path);
  constexpr int64_t kBlock = 16;
  const int64_t num_blocks = (ctx + kBlock - 1) / kBlock;
  Runner r{*m, m->make_kv_cache(num_blocks, kBlock, kv), std::vector<int32_t>(num_blocks), num_blocks};
  for (int64_t b = 0; b < num_blocks; ++b) r.table[b] = static_cast<int32_t>(b);
  std::printf("ready load_s %.3f threads %d vocab %lld\n", now_s() - t0, ThreadPool::global().num_threads(),
              static_cast<long long>(m->config().vocab_size));
  std::fflush(stdout);

  std::string line;
  while (std::getline(std::cin, line)) {
    std::istringstream in(line);
    std::string cmd;
    int64_t n = 0;
    in >> cmd >> n;
    std::vector<int32_t> ids;
    for (int32_t id; in >> id;) ids.push_back(id);
    if (cmd == "batch") {
      const int64_t rows = n;
      int64_t steps = 0;
      if (!ids.empty()) steps = ids.front(), ids.erase(ids.begin());
      const int64_t per = num_blocks / std::max<int64_t>(rows, 1), warm = 32;
      if (m->has_linear_attention() && rows > r.cache.num_state_slots()) {
        std::printf("error batch of %lld rows: the hybrid model's cache has %lld state slots\n",
                    static_cast<long long>(rows), static_cast<long long>(r.cache.num_state_slots()));
        std::fflush(stdout);
        continue;
      }
      if (rows <= 0 || steps <= 0 || static_cast<int64_t>(ids.size()) < warm + steps || (warm + steps) > per * kBlock) {
        std::printf("error bad batch command: %.40s\n", line.c_str());
        std::fflush(stdout);
        continue;
      }
      for (int64_t p = 0; p < warm; ++p) r.batch_step(std::vector<int32_t>(rows, ids[p]), p, per, kBlock);
      const double t = now_s();
      for (int64_t s = 0; s < steps; ++s) r.batch_step(std::vector<int32_t>(rows, ids[warm + s]), warm + s, per, kBlock);
      std::printf("batch %lld %lld %.6f\n", static_cast<long long>(rows), static_cast<long long>(steps), now_s() - t);
      std::fflush(stdout);
      continue;
    }
    if (cmd == "tail" || cmd == "retail") {
      const int64_t c = n;
      int64_t steps = 0;
      if (!ids.empty()) steps = ids.front(), ids.erase(ids.begin());
      if (c <= 0 || steps <= 0 || static_cast<int64_t>(ids.size()) < c + steps || c + steps > ctx) {
        std::printf("error bad tail command (need C + M ids, C + M <= ctx %lld): %.40s\n", static_cast<long long>(ctx),
                    line.c_str());
        std::fflush(stdout);
        continue;
      }
      const double t0 = now_s();
      if (cmd == "tail") r.step(std::vector<int32_t>(ids.begin(), ids.begin() + c), 0);
      const double t = now_s(), cpu = cpu_s();
      for (int64_t i = 0; i < steps; ++i) r.step({ids[c + i]}, c + i);
      const double wall = now_s() - t;
      std::printf("tail %lld %lld %.6f %.6f %.6f\n", static_cast<long long>(c), static_cast<long long>(steps), t - t0,
                  wall, cpu_s() - cpu);
      std::fflush(stdout);
      continue;
    }
    const bool is_prefill = cmd == "prefill", is_decode = cmd == "decode";
    const int64_t need = is_decode ? n + 1 : n;
    if ((!is_prefill && !is_decode) || n <= 0 || static_cast<int64_t>(ids.size()) < need || need > ctx) {
      std::printf("error bad command (need %lld ids, ctx %lld): %.40s\n", static_cast<long long>(need),
                  static_cast<long long>(ctx), line.c_str());
      std::fflush(stdout);
      continue;
    }
    double secs;
    if (is_prefill) {
      std::vector<int32_t> toks(ids.begin(), ids.begin() + n);
      const double t = now_s();
      r.step(toks, 0);
      secs = now_s() - t;
    } else {
      r.step({ids[0]}, 0);
      std::vector<int32_t> one(1);
      const double t = now_s();
      for (int64_t i = 1; i <= n; ++i) {
        one[0] = ids[i];
        r.step(one, i);
      }
      secs = now_s() - t;
    }
    std::printf("%s %lld %.6f\n", cmd.c_str(), static_cast<long long>(n), secs);
    std::fflush(stdout);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return main_impl(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "model_decode_bench: %s\n", e.what());
    return 1;
  }
}
