// Two models served side by side share the CPU backend's ThreadPool: their forward passes, each on
// a thread of its own, take turns on it job by job (no global lock around a forward). Each must
// give exactly what it gives alone: prefill logits and greedy tokens, bit for bit.
#include <thread>

#include "archs_util.h"

namespace oxyd::model::test {
namespace {

struct Outputs {
  std::vector<float> logits;
  std::vector<int32_t> tokens;
  bool operator==(const Outputs&) const = default;
};

Outputs run_model(Transformer& m, const std::vector<int32_t>& prompt) {
  return {prefill(m, prompt), greedy(m, prompt, 12)};
}

TEST(ConcurrentModels, TwoModelsOnTwoThreadsGiveWhatEachGivesAlone) {
  // Different families and weight formats, so their matmuls take different kernels and scratch.
  auto a = Transformer::load(arch_dir("llama") + "/model-Q8_0.gguf");
  auto b = Transformer::load(arch_dir("gemma3") + "/model-Q4_0.gguf");
  // Prompts of 60 tokens (each golden prompt thrice): prefill matmuls and attention big enough
  // to be split over the pool's threads.
  auto longer = [](const std::vector<int32_t>& p) {
    std::vector<int32_t> out;
    for (int i = 0; i < 3; ++i) out.insert(out.end(), p.begin(), p.end());
    return out;
  };
  const std::vector<int32_t> prompt_a = longer(load_golden("llama").prompts.at(0));
  const std::vector<int32_t> prompt_b = longer(load_golden("gemma3").prompts.at(0));
  const Outputs alone_a = run_model(*a, prompt_a), alone_b = run_model(*b, prompt_b);
  ASSERT_FALSE(alone_a.logits.empty());
  ASSERT_FALSE(alone_b.logits.empty());

  constexpr int kReps = 20;
  std::vector<Outputs> got_a(kReps), got_b(kReps);
  std::thread ta([&] {
    for (auto& r : got_a) r = run_model(*a, prompt_a);
  });
  std::thread tb([&] {
    for (auto& r : got_b) r = run_model(*b, prompt_b);
  });
  ta.join();
  tb.join();
  for (int i = 0; i < kReps; ++i) {
    EXPECT_TRUE(got_a[i] == alone_a) << "llama, run " << i;
    EXPECT_TRUE(got_b[i] == alone_b) << "gemma3, run " << i;
  }
}

}  // namespace
}  // namespace oxyd::model::test
