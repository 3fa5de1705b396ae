// Shared helpers for tests/archs: committed goldens (tools/gen_tiny_models.py, transformers in
// float64) and a tiny driver that runs prompts through model::Transformer with a paged cache
// whose block table is deliberately not the identity.
#pragma once

#include <cstdint>
#include <fstream>
#include <numeric>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "model/transformer.h"
#include "ops/elementwise.h"

namespace oxyd::model::test {

inline std::string arch_dir(const std::string& family) {
  return std::string(OXYD_SOURCE_DIR) + "/tests/data/archs/" + family;
}

struct Golden {
  nlohmann::json j;
  std::vector<std::vector<int32_t>> prompts, greedy;
  std::vector<std::vector<float>> logits;  // per prompt [len * vocab]
  std::vector<float> quant_logits;         // [*, vocab]
  int64_t vocab = 0;
  int64_t last_positions = 0;  // > 0: logits.bin holds only the last this many positions per prompt
  /// Rows of prompt p's golden logits: all positions, or the last last_positions.
  int64_t rows(size_t p) const {
    const int64_t n = static_cast<int64_t>(prompts[p].size());
    return last_positions > 0 ? std::min(last_positions, n) : n;
  }
};

inline std::vector<float> read_f32(const std::string& path) {
  std::ifstream f(path, std::ios::binary | std::ios::ate);
  EXPECT_TRUE(f.good()) << path;
  std::vector<float> v(static_cast<size_t>(f.tellg()) / sizeof(float));
  f.seekg(0);
  f.read(reinterpret_cast<char*>(v.data()), static_cast<std::streamsize>(v.size() * sizeof(float)));
  return v;
}

inline Golden load_golden(const std::string& family) {
  Golden g;
  std::ifstream f(arch_dir(family) + "/goldens.json");
  g.j = nlohmann::json::parse(f);
  g.vocab = g.j["vocab_size"];
  for (auto& p : g.j["prompts"]) g.prompts.push_back(p.get<std::vector<int32_t>>());
  for (auto& p : g.j["greedy"]) g.greedy.push_back(p.get<std::vector<int32_t>>());
  g.last_positions = g.j.value("logits_last_positions", 0);
  std::vector<float> all = read_f32(arch_dir(family) + "/logits.bin");
  size_t off = 0;
  for (size_t p = 0; p < g.prompts.size(); ++p) {
    size_t n = static_cast<size_t>(g.rows(p) * g.vocab);
    g.logits.emplace_back(all.begin() + off, all.begin() + off + n);
    off += n;
  }
  EXPECT_EQ(off, all.size());
  if (g.j["gguf"].size() > 0) g.quant_logits = read_f32(arch_dir(family) + "/quant_logits.bin");
  return g;
}

/// One request's sequence in a paged cache: blocks handed out in a scrambled order.
struct Seq {
  std::vector<int32_t> tokens;   // all tokens so far (computed or about to be)
  std::vector<int32_t> blocks;   // its block table
  int64_t num_computed = 0;
  int32_t state_slot = 0;        // recurrent-state slot (models with linear_attention layers)
};

/// Builds and runs one step: request r computes tokens [num_computed, num_computed + n_r).
/// Returns logits for every scheduled token of every request, back to back [Σn_r, vocab].
inline std::vector<float> step(Transformer& m, KvCache& cache, std::vector<Seq*> seqs,
                               const std::vector<int64_t>& n, int64_t block_size) {
  std::vector<int32_t> ids, pos, qsl{0}, lens, table, slots, logits_idx, state_slots;
  int64_t max_blocks = 0;
  for (auto* s : seqs) max_blocks = std::max<int64_t>(max_blocks, static_cast<int64_t>(s->blocks.size()));
  for (size_t r = 0; r < seqs.size(); ++r) {
    Seq& s = *seqs[r];
    OXYD_CHECK(s.num_computed + n[r] <= static_cast<int64_t>(s.tokens.size()) &&
                   s.num_computed + n[r] <= static_cast<int64_t>(s.blocks.size()) * block_size,
               "test step past the sequence's tokens or blocks");
    for (int64_t i = 0; i < n[r]; ++i) {
      int64_t p = s.num_computed + i;
      ids.push_back(s.tokens[p]);
      pos.push_back(static_cast<int32_t>(p));
      slots.push_back(static_cast<int32_t>(s.blocks[p / block_size] * block_size + p % block_size));
      logits_idx.push_back(static_cast<int32_t>(ids.size() - 1));
    }
    qsl.push_back(static_cast<int32_t>(ids.size()));
    state_slots.push_back(s.state_slot);
    lens.push_back(static_cast<int32_t>(s.num_computed + n[r]));
    for (int64_t b = 0; b < max_blocks; ++b)
      table.push_back(b < static_cast<int64_t>(s.blocks.size()) ? s.blocks[b] : 0);
    s.num_computed += n[r];
  }
  ForwardBatch b;
  b.token_ids = ids;
  b.positions = pos;
  b.query_start_loc = qsl;
  b.seq_lens = lens;
  b.block_table = table;
  b.max_blocks_per_req = max_blocks;
  b.slot_mapping = slots;
  b.logits_indices = logits_idx;
  if (m.has_linear_attention()) b.state_slots = state_slots;
  Tensor out = m.forward(b, cache);
  std::vector<float> host(static_cast<size_t>(out.numel()));
  ops::copy_to_host(out, host.data());  // the logits of a model on another device come back here
  return host;
}

/// A sequence with room for max_tokens, taking blocks first_block, first_block + stride, ...
inline Seq make_seq(const std::vector<int32_t>& tokens, int64_t max_tokens, int64_t block_size,
                    int32_t first_block, int32_t stride) {
  Seq s;
  s.tokens = tokens;
  for (int64_t b = 0; b * block_size < max_tokens; ++b) s.blocks.push_back(first_block + stride * static_cast<int32_t>(b));
  return s;
}

inline int32_t argmax(const float* row, int64_t n) {
  return static_cast<int32_t>(std::max_element(row, row + n) - row);
}

constexpr int64_t kBlock = 8;
constexpr int64_t kNumBlocks = 64;
constexpr int64_t kMaxTokens = 80;

// Runs a prompt as one prefill and returns logits for every position [len, vocab].
inline std::vector<float> prefill(Transformer& m, const std::vector<int32_t>& prompt, Seq* keep = nullptr,
                           KvCache* cache_out = nullptr, KvFormat kv_format = KvFormat::F32) {
  KvCache local = m.make_kv_cache(kNumBlocks, kBlock, kv_format);
  KvCache& cache = cache_out ? *cache_out : local;
  Seq s = make_seq(prompt, kMaxTokens, kBlock, /*first_block=*/kNumBlocks - 1, /*stride=*/-3);
  auto out = step(m, cache, {&s}, {static_cast<int64_t>(prompt.size())}, kBlock);
  if (keep) *keep = s;
  return out;
}

// Prefill then greedy decode, one token per step; returns n tokens.
inline std::vector<int32_t> greedy(Transformer& m, const std::vector<int32_t>& prompt, int n) {
  KvCache cache = m.make_kv_cache(kNumBlocks, kBlock);
  Seq s;
  auto lg = prefill(m, prompt, &s, &cache);
  const int64_t V = m.config().vocab_size;
  std::vector<int32_t> out{argmax(lg.data() + (prompt.size() - 1) * V, V)};
  while (static_cast<int>(out.size()) < n) {
    s.tokens.push_back(out.back());
    auto d = step(m, cache, {&s}, {1}, kBlock);
    out.push_back(argmax(d.data(), V));
  }
  return out;
}

}  // namespace oxyd::model::test
