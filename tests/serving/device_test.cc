// --device through a real LLMEngine (engine/device_plan.h), on a CPU machine: with HostDevice
// (tests/archs/host_device.h) registered for Device::CUDA and reporting a GPU's memory, `auto` and
// `cuda` serve from "the device" — weights, KV pool, workspaces and every step there — and still
// reproduce the transformers float64 greedy continuations of the tiny goldens; a device too small
// for the model falls back to the CPU on auto (saying why) and fails on cuda; `cpu` never asks it.
#include "../archs/host_device.h"
#include "serving_util.h"

namespace oxyd::engine::test {
namespace {

using model::test::HostDevice;

class EngineDevice : public ::testing::Test {
 protected:
  void SetUp() override { backend::register_backend(dev_); }
  void TearDown() override { backend::unregister_backend(dev_); }
  HostDevice dev_;
};

constexpr int64_t kGiB = int64_t(1) << 30;

TEST_F(EngineDevice, AutoServesFromTheDeviceAndMatchesGoldens) {
  dev_.memory = {kGiB, kGiB};
  for (const char* fam : {"llama", "qwen3_moe", "qwen3_5"}) {
    SCOPED_TRACE(fam);
    const Golden g = load_golden(fam);
    ModelOptions o = tiny_options();
    o.device = DeviceChoice::AUTO;
    auto m = LLMEngine::create(fam, arch_dir(fam), o);
    EXPECT_EQ(m->device(), Device::CUDA) << m->device_reason();
    EXPECT_NE(m->device_reason().find("device cuda"), std::string::npos) << m->device_reason();
    std::vector<GenerationParams> ps;
    for (size_t p = 0; p < g.prompts.size(); ++p) ps.push_back(greedy_params(g.prompts[p], 32));
    const int64_t before = dev_.uploads;
    const auto rs = run_batch(*m, ps);
    for (size_t p = 0; p < g.prompts.size(); ++p) EXPECT_EQ(rs[p].tokens, g.greedy[p]) << "prompt " << p;
    EXPECT_GT(dev_.uploads, before);  // every step's metadata went to the device
  }
}

// Step graphs (model/step_graphs.h) under the real scheduler: every prompt at once, so the decode
// batch shrinks as requests finish and each batch size is warmed up, captured and replayed in
// turn (HostDevice records and replays the ops). The continuations stay the transformers goldens;
// qwen3_moe's captures fail (its expert loop reads the device back) and it runs eagerly.
TEST_F(EngineDevice, StepGraphsUnderTheSchedulerKeepTheGoldens) {
  dev_.memory = {kGiB, kGiB};
  dev_.graphs = true;
  for (const char* fam : {"llama", "qwen3", "gemma4", "qwen3_moe"}) {
    SCOPED_TRACE(fam);
    const Golden g = load_golden(fam);
    ModelOptions o = tiny_options();
    o.device = DeviceChoice::CUDA;
    auto m = LLMEngine::create(fam, arch_dir(fam), o);
    std::vector<GenerationParams> ps;
    for (size_t p = 0; p < g.prompts.size(); ++p) ps.push_back(greedy_params(g.prompts[p], 32));
    const int64_t replays = dev_.graph_replays, failures = dev_.graph_failures;
    const auto rs = run_batch(*m, ps);
    for (size_t p = 0; p < g.prompts.size(); ++p) EXPECT_EQ(rs[p].tokens, g.greedy[p]) << "prompt " << p;
    if (std::string(fam) == "qwen3_moe") {
      EXPECT_EQ(dev_.graph_replays, replays);
      EXPECT_GT(dev_.graph_failures, failures);
    } else {
      EXPECT_GT(dev_.graph_replays - replays, 20);
      EXPECT_EQ(dev_.graph_failures, failures);
    }
  }
}

// Greedy requests with nothing else to compute take their argmax on the device
// (ModelExecutor::run_argmax): only the ids come back, 4 bytes a token, not the logits rows;
// requests that sample (or ask for logprobs) still get their rows.
TEST_F(EngineDevice, GreedyStepsBringBackOnlyTheIds) {
  dev_.memory = {kGiB, kGiB};
  const Golden g = load_golden("llama");
  ModelOptions o = tiny_options();
  o.device = DeviceChoice::CUDA;
  auto m = LLMEngine::create("llama", arch_dir("llama"), o);
  std::vector<GenerationParams> ps;
  for (size_t p = 0; p < g.prompts.size(); ++p) ps.push_back(greedy_params(g.prompts[p], 32));
  int64_t before = dev_.download_bytes;
  const auto rs = run_batch(*m, ps);
  for (size_t p = 0; p < g.prompts.size(); ++p) EXPECT_EQ(rs[p].tokens, g.greedy[p]) << "prompt " << p;
  EXPECT_EQ(dev_.download_bytes - before, int64_t(4 * 32 * ps.size()));
  // With logprobs the rows come back (and the tokens stay the goldens).
  for (GenerationParams& p : ps) p.sampling.logprobs = 1;
  before = dev_.download_bytes;
  const auto lp = run_batch(*m, ps);
  for (size_t p = 0; p < g.prompts.size(); ++p) EXPECT_EQ(lp[p].tokens, g.greedy[p]) << "prompt " << p;
  EXPECT_GT(dev_.download_bytes - before, int64_t(4 * 32 * ps.size()) * 100);  // whole rows (vocab > 100)
}

TEST_F(EngineDevice, TooSmallFallsBackOnAutoAndFailsOnCuda) {
  dev_.memory = {1 << 20, 1 << 20};  // 1 MiB: not even the weights
  ModelOptions o = tiny_options();
  o.device = DeviceChoice::AUTO;
  auto m = LLMEngine::create("llama", arch_dir("llama"), o);
  EXPECT_EQ(m->device(), Device::CPU);
  EXPECT_NE(m->device_reason().find("does not fit"), std::string::npos) << m->device_reason();
  o.device = DeviceChoice::CUDA;
  EXPECT_THROW(LLMEngine::create("llama", arch_dir("llama"), o), Error);
}

TEST_F(EngineDevice, CpuNeverUsesTheDevice) {
  dev_.memory = {kGiB, kGiB};
  ModelOptions o = tiny_options();
  o.device = DeviceChoice::CPU;
  auto m = LLMEngine::create("llama", arch_dir("llama"), o);
  EXPECT_EQ(m->device(), Device::CPU);
  EXPECT_EQ(dev_.uploads, 0);
}

}  // namespace
}  // namespace oxyd::engine::test
