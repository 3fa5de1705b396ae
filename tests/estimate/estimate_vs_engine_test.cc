// `oxydllm estimate` against the memory the engine really holds (issue 7): every tiny model of
// tests/data/archs (its safetensors checkpoint and each GGUF) is loaded, a KV cache for a full
// context × num_sequences is allocated as the server sizes it (whole 16-token blocks, the default
// dtype, and F32 / BF16 on one model each), and one
// full-length prefill of every sequence runs so the lazily grown buffers reach their size. Actual =
// weights read in place + load-time copies + workspace (Transformer::memory_usage) + KvCache bytes;
// hub::estimate_memory's total must be within 5% of it. The workspace formula is also held equal
// to what forward() allocated, and the KV term equal to the cache's bytes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "core/thread_pool.h"
#include "hub/estimate.h"
#include "hub/model_meta.h"
#include "hub/report.h"
#include "model/archs/registry.h"
#include "model/model_config.h"
#include "model/transformer.h"
#include "model/weights.h"
#include "ops/dispatch.h"

namespace fs = std::filesystem;

namespace oxyd {
namespace {

constexpr int64_t kBlockSize = 16;

// The tiny models: each folder's safetensors checkpoint (the folder, or its model.safetensors
// when GGUFs share the folder) and every GGUF. Encoders hold no KV cache and run no decode step:
// their memory is tests/model/embed_test.cc's.
std::vector<std::string> tiny_model_paths() {
  std::vector<std::string> out;
  const fs::path root = fs::path(OXYD_SOURCE_DIR) / "tests/data/archs";
  std::vector<fs::path> dirs;
  for (const auto& d : fs::directory_iterator(root))
    if (d.is_directory() && fs::exists(d.path() / "config.json") &&
        !model::arch_spec(model::load_hf_config((d.path() / "config.json").string()).family).encoder)
      dirs.push_back(d.path());
  std::sort(dirs.begin(), dirs.end());
  for (const auto& d : dirs) {
    if (fs::exists(d / "model.safetensors")) out.push_back(d.string());
    std::vector<std::string> ggufs;
    for (const auto& f : fs::directory_iterator(d))
      if (f.path().extension() == ".gguf") ggufs.push_back(f.path().string());
    std::sort(ggufs.begin(), ggufs.end());
    out.insert(out.end(), ggufs.begin(), ggufs.end());
  }
  return out;
}

struct Measured {
  model::MemoryUsage usage;
  int64_t kv_bytes = 0, state_bytes = 0, workspace_formula = 0, max_position = 0, num_experts = 0;
};

// Loads `path`, allocates ctx × seqs of `kv` KV in whole blocks and prefills every sequence to ctx
// tokens in one step. Runs on a fresh compute pool: the matmul scratch is the pool's (shared by every
// model on it) and only grows, so a model measured after a larger one would count the larger's.
void fresh_pool() { ThreadPool::set_global_threads(ThreadPool::global().num_threads()); }

Measured load_and_fill(const std::string& path, int64_t ctx, int64_t seqs, bool reserve_first,
                       KvFormat kv = hub::EstimateParams{}.kv_format) {
  Measured m;
  std::exception_ptr err;
  fresh_pool();
  std::thread th([&] {
    try {
      auto t = model::Transformer::load(path);
      const int64_t blocks_per_seq = (ctx + kBlockSize - 1) / kBlockSize, T = ctx * seqs;
      // A state slot per seq, and as the server allocates with prefix caching on, its state snapshots.
      model::KvCache cache =
          t->make_kv_cache(blocks_per_seq * seqs, kBlockSize, kv, seqs + hub::num_state_snapshots_for(seqs));
      if (reserve_first) t->reserve_workspace(T, seqs);
      std::vector<int32_t> ids(T), pos(T), slots(T), qsl(seqs + 1), lens(seqs, int32_t(ctx)), table, rows;
      for (int64_t s = 0; s < seqs; ++s) {
        qsl[s + 1] = int32_t((s + 1) * ctx);
        rows.push_back(int32_t((s + 1) * ctx - 1));
        for (int64_t b = 0; b < blocks_per_seq; ++b) table.push_back(int32_t(s * blocks_per_seq + b));
        for (int64_t i = 0; i < ctx; ++i) {
          ids[s * ctx + i] = int32_t((i * 7 + s * 13 + 1) % t->config().vocab_size);
          pos[s * ctx + i] = int32_t(i);
          slots[s * ctx + i] = int32_t(s * blocks_per_seq * kBlockSize + i);
        }
      }
      model::ForwardBatch b{ids, pos, qsl, lens, table, blocks_per_seq, slots, rows, {}, {}};
      std::vector<int32_t> state_slots;
      for (int64_t s = 0; s < seqs; ++s) state_slots.push_back(int32_t(s));
      if (t->has_linear_attention()) b.state_slots = state_slots;
      Tensor logits = t->forward(b, cache);
      if (logits.dim(0) != seqs) throw std::runtime_error("wrong logits rows");
      m.usage = t->memory_usage();
      m.kv_bytes = cache.bytes();
      m.state_bytes = cache.state_bytes();
      m.workspace_formula = t->workspace_bytes(T, seqs);
      m.max_position = t->config().max_position_embeddings;
      m.num_experts = t->config().num_experts;
    } catch (...) {
      err = std::current_exception();
    }
  });
  th.join();
  if (err) std::rethrow_exception(err);
  return m;
}

hub::MemoryEstimate estimate_for(const std::string& path, int64_t ctx, int64_t seqs,
                                 KvFormat kv = hub::EstimateParams{}.kv_format) {
  // A folder that holds GGUFs too is several models to the hub: name the checkpoint by its file.
  std::string hub_path = path;
  if (fs::is_directory(path))
    for (const auto& f : fs::directory_iterator(path))
      if (f.path().extension() == ".gguf") hub_path = path + "/model.safetensors";
  hub::ModelMeta meta = hub::read_local_meta(hub::local_model_for_path(hub_path));
  hub::EstimateParams p;  // the server's defaults: F32 KV, 16-token blocks, 1024-token steps
  p.context_len = ctx;
  p.kv_format = kv;
  p.num_sequences = seqs;
  // matmul scratch: the default, this machine's CPU backend (hub::cpu_matmul_scratch)
  p.packed_extra = [](const loader::ModelConfig& c, const std::vector<loader::GgufTensorInfo>& tensors) {
    return model::packed_weight_extra_bytes(c, tensors);
  };
  return hub::estimate_memory(meta.config, hub::resident_weight_bytes(meta, p), p, meta.tensor_types);
}

std::string rel(const std::string& path) {
  return fs::relative(path, fs::path(OXYD_SOURCE_DIR) / "tests/data/archs").string();
}

TEST(EstimateVsEngine, EveryTinyModelWithin5Percent) {
  const auto paths = tiny_model_paths();
  ASSERT_GE(paths.size(), 35u) << "expected 10 safetensors checkpoints and their GGUFs";
  std::printf("%-26s %4s %4s %10s %10s %10s %10s %10s %10s %7s\n", "model", "ctx", "seqs", "mapped", "owned",
              "workspace", "kv", "actual", "estimate", "diff");
  for (const auto& path : paths) {
    for (int64_t seqs : {1, 2}) {
      SCOPED_TRACE(rel(path) + " × " + std::to_string(seqs) + " seq");
      const int64_t ctx = 128;  // the tiny models' max_position_embeddings (qwen3_rerank's: 256)
      Measured m = load_and_fill(path, ctx, seqs, /*reserve_first=*/false);
      ASSERT_GE(m.max_position, ctx);
      EXPECT_EQ(m.usage.workspace, m.workspace_formula) << "forward() allocated other than workspace_bytes()";
      // An expert's matmul scratch is sized for all T rows of a step (transformer_memory.cc), which a
      // step reaches only when one expert takes every token: where the experts are the only matmuls
      // that need scratch (gpt_oss_mxfp4: F32 attention, MXFP4 experts), routing decides how much
      // of that bound the step uses.
      if (m.num_experts > 0) EXPECT_LE(m.usage.workspace_used, m.usage.workspace);
      else EXPECT_EQ(m.usage.workspace_used, m.usage.workspace) << "the largest step did not use all it allocated";
      hub::MemoryEstimate e = estimate_for(path, ctx, seqs);
      EXPECT_EQ(e.kv_bytes, m.kv_bytes);
      EXPECT_EQ(e.state_bytes, m.state_bytes);  // linear_attention layers: slots per sequence + snapshots
      const int64_t actual = m.usage.total() + m.kv_bytes + m.state_bytes;
      const double diff = double(e.total() - actual) / double(actual);
      std::printf("%-26s %4lld %4lld %10lld %10lld %10lld %10lld %10lld %10lld %+6.2f%%\n", rel(path).c_str(),
                  (long long)ctx, (long long)seqs, (long long)m.usage.weights_mapped, (long long)m.usage.weights_owned,
                  (long long)m.usage.workspace, (long long)m.kv_bytes, (long long)actual, (long long)e.total(),
                  100 * diff);
      // Weights alone: the file bytes plus what the packed copies add (padding to 16 rows, Q4_K's
      // layout on AVX2) against the mapping plus the copies; only 1-D tensors converted to F32
      // (and unused tensors) are apart.
      const int64_t weights = m.usage.weights_mapped + m.usage.weights_owned;
      EXPECT_LE(std::abs(double(e.weight_bytes - weights)), 0.005 * double(weights))
          << "weights: estimate " << e.weight_bytes << " vs loaded " << weights;
      EXPECT_LE(std::abs(diff), 0.05) << "estimate " << e.total() << " vs actual " << actual << " (weights "
                                      << e.weight_bytes << " vs " << m.usage.weights_mapped + m.usage.weights_owned
                                      << ", runtime " << e.runtime_bytes << " vs " << m.usage.workspace << ")";
    }
  }
}

// Each KV format the server offers (--kv-dtype, --kv-quant): the KV term equals the cache the
// engine allocates and the total stays within 5%, on a safetensors checkpoint and a GGUF.
TEST(EstimateVsEngine, EveryKvDtype) {
  for (const char* rel_path : {"gemma3", "qwen3/model-Q4_K.gguf"}) {
    const std::string path = std::string(OXYD_SOURCE_DIR) + "/tests/data/archs/" + rel_path;
    for (KvFormat kv : {KvFormat::F32, KvFormat::F16, KvFormat::BF16}) {
      SCOPED_TRACE(std::string(rel_path) + " " + std::string(kv_format_name(kv)));
      Measured m = load_and_fill(path, 128, 2, /*reserve_first=*/false, kv);
      hub::MemoryEstimate e = estimate_for(path, 128, 2, kv);
      EXPECT_EQ(e.kv_bytes, m.kv_bytes);
      EXPECT_EQ(e.state_bytes, m.state_bytes);  // linear_attention layers: slots per sequence + snapshots
      const int64_t actual = m.usage.total() + m.kv_bytes + m.state_bytes;
      EXPECT_LE(std::abs(double(e.total() - actual) / double(actual)), 0.05);
    }
    for (int bits : {8, 6, 5, 4, 3, 2}) {
      SCOPED_TRACE(std::string(rel_path) + " kv-quant " + std::to_string(bits) + " bits");
      Measured m = load_and_fill(path, 128, 2, /*reserve_first=*/false, *kv_format_of_bits(bits));
      hub::MemoryEstimate e = estimate_for(path, 128, 2, *kv_format_of_bits(bits));
      EXPECT_EQ(e.kv_bytes, m.kv_bytes);
      EXPECT_EQ(e.state_bytes, m.state_bytes);  // linear_attention layers: slots per sequence + snapshots
      const int64_t actual = m.usage.total() + m.kv_bytes + m.state_bytes;
      EXPECT_LE(std::abs(double(e.total() - actual) / double(actual)), 0.05);
    }
  }
}

// Reserving the step budget at load allocates exactly what the largest step then uses: a full
// prefill after reserve_workspace() grows nothing, and steps that grow one after another end at
// the formula's figure for the largest (no vector growth slack).
TEST(EstimateVsEngine, ReservedWorkspaceIsWhatTheLargestStepUses) {
  const std::string path = std::string(OXYD_SOURCE_DIR) + "/tests/data/archs/qwen3/model-Q4_K.gguf";
  Measured reserved = load_and_fill(path, 128, 2, /*reserve_first=*/true);
  EXPECT_EQ(reserved.usage.workspace, reserved.workspace_formula);
  Measured lazy = load_and_fill(path, 128, 2, /*reserve_first=*/false);
  EXPECT_EQ(lazy.usage.workspace, reserved.usage.workspace);

  fresh_pool();
  std::thread th([&] {
    auto t = model::Transformer::load(path);
    model::KvCache cache = t->make_kv_cache(16, kBlockSize, KvFormat::F32);
    for (int64_t T : {5, 40, 90, 128}) {  // each step a longer single sequence
      std::vector<int32_t> ids(T, 3), pos(T), slots(T), qsl{0, int32_t(T)}, lens{int32_t(T)}, table(8), rows{int32_t(T - 1)};
      for (int64_t i = 0; i < T; ++i) pos[i] = slots[i] = int32_t(i);
      for (int i = 0; i < 8; ++i) table[i] = i;
      t->forward(model::ForwardBatch{ids, pos, qsl, lens, table, 8, slots, rows, {}, {}}, cache);
      EXPECT_EQ(t->memory_usage().workspace, t->workspace_bytes(T, 1)) << T << " tokens";
    }
  });
  th.join();
}

// The accounting itself: mapped bytes are the 2-D weights once each (a tied head is the
// embedding), load-time copies are the f32 vectors, and the KV cache is K+V of every layer.
TEST(EstimateVsEngine, AccountingCountsSharedBytesOnce) {
  const std::string dir = std::string(OXYD_SOURCE_DIR) + "/tests/data/archs/qwen2";  // tied, biases
  auto t = model::Transformer::load(dir + "/model-F16.gguf");
  const auto& c = t->config();
  const int64_t H = c.hidden_size, I = c.intermediate_size, hd = c.head_dim;
  const int64_t q = c.num_attention_heads * hd, kv = c.num_key_value_heads * hd;
  int64_t mapped = t->weights().embed.nbytes();
  for (const auto& L : t->weights().layers)
    mapped += L.q.nbytes() + L.k.nbytes() + L.v.nbytes() + L.o.nbytes() + L.gate.nbytes() + L.up.nbytes() + L.down.nbytes();
  EXPECT_EQ(t->weights().lm_head.data, t->weights().embed.data);
  EXPECT_EQ(t->memory_usage().weights_mapped, mapped);
  // F16 matrices: 2 bytes per element of [V,H] + per layer q,k,v,o,gate,up,down.
  EXPECT_EQ(mapped, 2 * (c.vocab_size * H + c.num_hidden_layers * (H * (q + 2 * kv) + q * H + 3 * H * I)));
  // f32 copies: final norm + per layer attn/ffn norms and q/k/v biases.
  EXPECT_EQ(t->memory_usage().weights_owned, 4 * (H + c.num_hidden_layers * (2 * H + q + 2 * kv)));
  model::KvCache cache = t->make_kv_cache(3, kBlockSize, KvFormat::F16);
  EXPECT_EQ(cache.bytes(), 2 * c.num_hidden_layers * 3 * kBlockSize * kv * 2);
}

}  // namespace
}  // namespace oxyd
