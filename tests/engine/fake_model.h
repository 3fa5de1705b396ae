// FakeModel for engine tests: keeps a fake paged KV (token ids at slot_mapping) and derives each
// logits row from the tokens it reads back through the block table, so wrong KV → wrong tokens.
#pragma once

#include <chrono>
#include <random>
#include <thread>

#include "engine/engine_core.h"

namespace oxyd::engine {

class FakeModel : public ModelExecutor {
 public:
  FakeModel(int32_t num_blocks, int32_t block_size) : bs_(block_size), slots_(size_t(num_blocks * block_size), -1) {}
  int32_t vocab_size() const override { return 32; }
  int delay_us = 0;  // per step, so stream readers can keep up in async tests
  void execute(const model::ForwardBatch& b, std::vector<float>& logits) override {
    if (delay_us) std::this_thread::sleep_for(std::chrono::microseconds(delay_us));
    for (int32_t t = 0; t < b.num_tokens(); ++t) slots_[size_t(b.slot_mapping[t])] = b.token_ids[t];
    for (size_t i = 0; i < b.logits_indices.size(); ++i) {
      const int32_t tok = b.logits_indices[i];
      int32_t r = 0;
      while (b.query_start_loc[size_t(r + 1)] <= tok) ++r;
      const int32_t pos = b.positions[size_t(tok)];
      std::vector<int32_t> context;
      for (int32_t q = 0; q <= pos; ++q) {  // "attention" over the whole context, through the KV
        const int32_t bid = b.block_table[size_t(r * b.max_blocks_per_req + q / bs_)];
        context.push_back(slots_[size_t(bid * bs_ + q % bs_)]);
      }
      const auto row = logits_for(context);
      std::copy(row.begin(), row.end(), logits.begin() + long(i * size_t(vocab_size())));
    }
  }
  /// The model itself: logits after seeing exactly `context`.
  static std::vector<float> logits_for(const std::vector<int32_t>& context) {
    uint64_t h = 1469598103934665603ull;
    for (int32_t t : context) h = (h ^ uint64_t(t + 7)) * 1099511628211ull;
    std::mt19937_64 g(h);
    std::normal_distribution<float> nd(0, 2);
    std::vector<float> row(32);
    for (auto& v : row) v = nd(g);
    return row;
  }

 private:
  int32_t bs_;
  std::vector<int32_t> slots_;
};

}  // namespace oxyd::engine
