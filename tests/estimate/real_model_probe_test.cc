// The measuring half of tools/check_estimate_real.py: loads $OXYD_ESTIMATE_MODEL (skipped when
// unset), reserves the step workspace and a KV cache of $OXYD_ESTIMATE_CTX × $OXYD_ESTIMATE_SEQS
// tokens in 16-token blocks of the default KV dtype (hub::EstimateParams) as the server would, prefills every sequence to the full context
// in 1024-token steps (so every KV block, workspace row and weight page is touched), and prints
// one JSON line: the model's accounting and the process's RSS growth (anonymous and file-backed)
// over the load and the prefill, for the script to hold against `oxydllm estimate`.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "hub/estimate.h"
#include "model/transformer.h"

namespace oxyd {
namespace {

int64_t env_int(const char* name, int64_t def) {
  const char* v = std::getenv(name);
  return v && *v ? std::atoll(v) : def;
}

// RssAnon / RssFile of /proc/self/status, bytes.
std::pair<int64_t, int64_t> rss() {
  std::ifstream in("/proc/self/status");
  std::string key;
  int64_t anon = 0, file = 0;
  while (in >> key) {
    int64_t kb = 0;
    if (key == "RssAnon:" && in >> kb) anon = kb * 1024;
    else if (key == "RssFile:" && in >> kb) file = kb * 1024;
  }
  return {anon, file};
}

TEST(RealModelProbe, MemoryInUseAfterFullContext) {
  const char* path = std::getenv("OXYD_ESTIMATE_MODEL");
  if (!path || !*path) GTEST_SKIP() << "set OXYD_ESTIMATE_MODEL (tools/check_estimate_real.py does)";
  const int64_t ctx = env_int("OXYD_ESTIMATE_CTX", 4096), seqs = env_int("OXYD_ESTIMATE_SEQS", 1);
  const int64_t budget = env_int("OXYD_ESTIMATE_BATCH_TOKENS", 1024), bs = 16;
  std::thread th([&] {
    const auto [anon0, file0] = rss();
    auto t = model::Transformer::load(path);
    const int64_t blocks_per_seq = (ctx + bs - 1) / bs;
    model::KvCache cache = t->make_kv_cache(blocks_per_seq * seqs, bs, hub::EstimateParams{}.kv_format);
    t->reserve_workspace(std::min(budget, ctx * seqs), seqs);
    const auto [anon1, file1] = rss();
    std::vector<int32_t> table(blocks_per_seq);
    for (int64_t s = 0; s < seqs; ++s) {
      for (int64_t b = 0; b < blocks_per_seq; ++b) table[b] = int32_t(s * blocks_per_seq + b);
      for (int64_t done = 0; done < ctx; done += budget) {
        const int64_t T = std::min(budget, ctx - done);
        std::vector<int32_t> ids(T), pos(T), slots(T), qsl{0, int32_t(T)}, lens{int32_t(done + T)}, rows{int32_t(T - 1)};
        for (int64_t i = 0; i < T; ++i) {
          ids[i] = int32_t((done + i) * 2654435761u % uint64_t(t->config().vocab_size));
          pos[i] = int32_t(done + i);
          slots[i] = int32_t(table[(done + i) / bs] * bs + (done + i) % bs);
        }
        t->forward(model::ForwardBatch{ids, pos, qsl, lens, table, blocks_per_seq, slots, rows, {}, {}}, cache);
      }
    }
    const auto [anon2, file2] = rss();
    const model::MemoryUsage u = t->memory_usage();
    std::printf("PROBE {\"ctx\": %lld, \"seqs\": %lld, \"weights_mapped\": %lld, \"weights_owned\": %lld, "
                "\"workspace\": %lld, \"workspace_formula\": %lld, \"kv\": %lld, \"rss_anon_load\": %lld, "
                "\"rss_file_load\": %lld, \"rss_anon_total\": %lld, \"rss_file_total\": %lld}\n",
                (long long)ctx, (long long)seqs, (long long)u.weights_mapped, (long long)u.weights_owned,
                (long long)u.workspace, (long long)t->workspace_bytes(std::min(budget, ctx * seqs), seqs),
                (long long)cache.bytes(), (long long)(anon1 - anon0), (long long)(file1 - file0),
                (long long)(anon2 - anon0), (long long)(file2 - file0));
    EXPECT_EQ(u.workspace, t->workspace_bytes(std::min(budget, ctx * seqs), seqs));
  });
  th.join();
}

}  // namespace
}  // namespace oxyd
