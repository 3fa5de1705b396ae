// The model's device plumbing (docs/architecture.md §2), proven on a CPU machine: HostDevice is a
// backend registered for Device::CUDA whose memory is host memory and whose ops are the CPU
// backend's. Transformer::load(path, Device::CUDA) then runs everything a GPU run does outside
// the kernels — weights and RoPE tables uploaded through copy_from_host, every step's metadata
// uploaded, every op's tensors on the device (ops/ rejects a mix), MoE's host reads and the
// logits going through copy_to_host — and must give the CPU path's logits and greedy tokens.
// What it cannot see: a host read of device memory (here both are host memory).
#include <gtest/gtest.h>

#include "../archs/device_compare.h"
#include "../archs/host_device.h"

namespace oxyd::model::test {
namespace {

class DeviceSeam : public ::testing::Test {
 protected:
  void SetUp() override { backend::register_backend(dev_); }
  void TearDown() override { backend::unregister_backend(dev_); }
  HostDevice dev_;
};

// Dense (llama, qwen3: q/k norms), MoE (qwen3_moe: routing, grouping, the host reads of the
// grouped rows), gpt-oss (sinks, clamped SwiGLU, expert biases), Gated DeltaNet (qwen3_5: state
// slots), per-layer inputs and shared KV (gemma4), a query temperature (ministral3), clip_qkv
// (olmoe_clip), and quantized GGUF tables and matmuls (Q4_K, Q8_0).
TEST_F(DeviceSeam, EveryFamilyMatchesTheCpuPath) {
  // tol: × the logit range. The same CPU kernels run both sides, so 1e-5 (measured: within it),
  // except Q4_K: the CPU path packs it and its packed kernel rounds the activations to 8 bits,
  // the unpacked rows a device gets are read by another kernel (measured 0.51-0.63 of a range of
  // 28-31, 2.0%): the families' quantized tolerance, 3e-2. F32 weights in whole 16-row groups are
  // packed on the CPU path too (matmul/float_packed_avx512.cc, one FMA chain per output) and read
  // by the row-dot kernel from the device's rows: gemma4, whose per-layer inputs amplify it most,
  // measured 2.7e-5 of the range, so 1e-4 there.
  struct Case {
    const char* family;
    const char* file;
    double tol;
  };
  for (const Case& c : {Case{"llama", "", 1e-5}, Case{"qwen3", "", 1e-5}, Case{"qwen3_moe", "", 1e-5},
                        Case{"gpt_oss", "", 1e-5}, Case{"qwen3_5", "", 1e-5}, Case{"gemma4", "", 1e-4},
                        Case{"ministral3", "", 1e-5}, Case{"olmoe_clip", "", 1e-5}, Case{"llama", "model-F32.gguf", 1e-5},
                        Case{"qwen3", "model-Q4_K.gguf", 3e-2}, Case{"qwen3_moe", "model-Q8_0.gguf", 1e-5}}) {
    SCOPED_TRACE(std::string(c.family) + " " + c.file);
    const int64_t before = dev_.uploads;
    expect_device_matches_cpu(c.family, c.file, Device::CUDA, c.tol, 8);
    EXPECT_GT(dev_.uploads, before + 8);  // weights at load, then one metadata upload per step at least
  }
}

// Decode steps as step graphs (model/step_graphs.h) on HostDevice's emulation: the ops recorded
// at a capture run again at each replay on that step's uploaded ids, positions and block table,
// so greedy decoding, alone and two sequences at once, must give the eager steps' tokens exactly.
TEST_F(DeviceSeam, DecodeStepGraphsReplayWhatEagerStepsRun) {
  dev_.graphs = true;
  for (const char* family : {"llama", "qwen3", "gemma4", "ministral3"}) {
    SCOPED_TRACE(family);
    const Golden g = load_golden(family);
    auto m = Transformer::load(arch_dir(family), Device::CUDA);
    ASSERT_TRUE(m->step_graphs_enabled());
    const int64_t replays = dev_.graph_replays;
    const std::vector<int32_t> with = greedy(*m, g.prompts[0], 12);
    // 11 decode steps of one key: one eager, one captured (and replayed), nine replays.
    EXPECT_EQ(dev_.graph_replays - replays, 10);
    EXPECT_EQ(m->step_graphs().replays(), 9);

    // Two sequences decoding together, then the same steps eagerly.
    auto two = [&](Transformer& t, int n) {
      KvCache cache = t.make_kv_cache(kNumBlocks, kBlock);
      Seq a = make_seq(g.prompts[0], kMaxTokens, kBlock, kNumBlocks - 1, -3);
      Seq b = make_seq(g.prompts.back(), kMaxTokens, kBlock, kNumBlocks - 2, -3);
      const int64_t V = t.config().vocab_size;
      step(t, cache, {&a}, {int64_t(a.tokens.size())}, kBlock);
      step(t, cache, {&b}, {int64_t(b.tokens.size())}, kBlock);
      std::vector<int32_t> out;
      for (int i = 0; i < n; ++i) {
        a.tokens.push_back(int32_t(7 + i));
        b.tokens.push_back(int32_t(11 + 2 * i));
        const std::vector<float> lg = step(t, cache, {&a, &b}, {1, 1}, kBlock);
        out.push_back(argmax(lg.data(), V));
        out.push_back(argmax(lg.data() + V, V));
      }
      return out;
    };
    const std::vector<int32_t> batched = two(*m, 6);
    m->enable_step_graphs(false);
    EXPECT_FALSE(m->step_graphs_enabled());
    EXPECT_EQ(with, greedy(*m, g.prompts[0], 12));
    EXPECT_EQ(batched, two(*m, 6));
  }
  // Steps that choose on host data (Gated DeltaNet's state zeroing) stay eager.
  EXPECT_FALSE(Transformer::load(arch_dir("qwen3_5"), Device::CUDA)->step_graphs_enabled());
}

// A step whose ops read the device back (the default MoE expert loop reads the grouping) fails
// its capture: that key runs eagerly from then on, with the eager tokens.
TEST_F(DeviceSeam, AStepThatReadsTheDeviceBackRunsEagerly) {
  dev_.graphs = true;
  for (const char* family : {"qwen3_moe", "gpt_oss"}) {
    SCOPED_TRACE(family);
    const Golden g = load_golden(family);
    auto m = Transformer::load(arch_dir(family), Device::CUDA);
    ASSERT_TRUE(m->step_graphs_enabled());
    const int64_t failures = dev_.graph_failures;
    const std::vector<int32_t> with = greedy(*m, g.prompts[0], 8);
    EXPECT_EQ(dev_.graph_failures, failures + 1);
    EXPECT_EQ(m->step_graphs().replays(), 0);
    m->enable_step_graphs(false);
    EXPECT_EQ(with, greedy(*m, g.prompts[0], 8));
  }
}

// A free of device memory between steps (a cache dropped here) may leave a graph naming freed
// memory: every graph is dropped and the next steps warm up and capture again.
TEST_F(DeviceSeam, AFreeDropsTheStepGraphs) {
  dev_.graphs = true;
  const Golden g = load_golden("qwen3");
  auto m = Transformer::load(arch_dir("qwen3"), Device::CUDA);
  const std::vector<int32_t> first = greedy(*m, g.prompts[0], 6);
  const int64_t captures = dev_.graph_captures;
  EXPECT_EQ(first, greedy(*m, g.prompts[0], 6));  // greedy() frees its caches: new epoch, new capture
  EXPECT_EQ(dev_.graph_captures, captures + 1);
  EXPECT_EQ(dev_.graph_failures, 0);
}

TEST_F(DeviceSeam, WeightsAndCacheLiveOnTheDevice) {
  auto m = Transformer::load(arch_dir("qwen3_moe"), Device::CUDA);
  const Weights& w = m->weights();
  EXPECT_EQ(w.lm_head.device, Device::CUDA);
  EXPECT_EQ(w.final_norm.device, Device::CUDA);
  EXPECT_EQ(w.layers[0].experts[0].gate.device, Device::CUDA);
  KvCache cache = m->make_kv_cache(4, 8);
  EXPECT_EQ(cache.k(0).device, Device::CUDA);
}

}  // namespace
}  // namespace oxyd::model::test
