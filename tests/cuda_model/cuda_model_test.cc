// Whole models on the GPU (label gpu): backend::cuda's CudaBackend against the CPU path on the tiny
// goldens of tests/data/archs (tests/archs/device_compare.h): every prompt's logits within the
// families' CPU tolerance (1e-3 of the logit range at F32; 3e-2 for GGUF block formats, whose
// batched CUDA matmul runs on BF16 activations), and greedy tokens equal. Skipped, visibly,
// without a CUDA device.
#include <cctype>
#include <string>
#include <utility>

#include <gtest/gtest.h>

#include "../archs/device_compare.h"
#include "backend/cuda/backend.h"

namespace oxyd::model::test {
namespace {

struct Case {
  const char* family;
  const char* file;  // "" = the safetensors directory (F32)
  double tol;
  int greedy_n;
};

class CudaModel : public ::testing::TestWithParam<Case> {};

TEST_P(CudaModel, MatchesTheCpuPath) {
  if (!backend::cuda::register_cuda_backend()) GTEST_SKIP() << "no CUDA device: whole-model GPU test not run";
  const Case& c = GetParam();
  expect_device_matches_cpu(c.family, c.file, Device::CUDA, c.tol, c.greedy_n);
}

// Decode steps replayed as CUDA graphs (model/step_graphs.h) give the eager steps' tokens, and
// do replay: a capture that failed would leave every step eager and replays() at 0. Dense F32
// (cuBLAS) and Q4_K (integer gemv); MoE Q4_K and gpt-oss MXFP4 (grouped experts, no host read).
TEST(CudaStepGraphs, ReplaysGiveTheEagerTokens) {
  if (!backend::cuda::register_cuda_backend()) GTEST_SKIP() << "no CUDA device: step graphs not run";
  for (const auto& [family, file] : {std::pair{"qwen3", ""}, {"qwen3", "model-Q4_K.gguf"},
                                     {"qwen3_moe", "model-Q4_K.gguf"}, {"gpt_oss", "model-MXFP4.gguf"}}) {
    SCOPED_TRACE(std::string(family) + " " + file);
    const std::string path = arch_dir(family) + (file[0] ? std::string("/") + file : "");
    const Golden g = load_golden(family);
    auto m = Transformer::load(path, Device::CUDA);
    ASSERT_TRUE(m->step_graphs_enabled());
    const std::vector<int32_t> with = greedy(*m, g.prompts[0], 16);
    EXPECT_GE(m->step_graphs().replays(), 10);
    m->enable_step_graphs(false);
    EXPECT_EQ(with, greedy(*m, g.prompts[0], 16));
  }
}

// Dense first (the device run's first question), then MoE, Gated DeltaNet, sinks / clamped SwiGLU,
// per-layer inputs, and the quantized GGUF paths (Q4_K, Q8_0, Q4_0, MXFP4 tables and matmuls).
INSTANTIATE_TEST_SUITE_P(
    Tiny, CudaModel,
    ::testing::Values(Case{"llama", "", 1e-3, 16}, Case{"qwen3", "", 1e-3, 16}, Case{"llama", "model-F32.gguf", 1e-3, 16},
                      Case{"qwen3", "model-Q4_K.gguf", 3e-2, 0}, Case{"qwen3", "model-Q8_0.gguf", 3e-2, 0},
                      Case{"llama", "model-Q4_0.gguf", 3e-2, 0}, Case{"qwen3_moe", "", 1e-3, 16},
                      Case{"qwen3_moe", "model-Q4_K.gguf", 3e-2, 0}, Case{"qwen3_5", "", 1e-3, 16},
                      Case{"gpt_oss", "", 1e-3, 16}, Case{"gpt_oss", "model-MXFP4.gguf", 3e-2, 0},
                      Case{"gemma4", "", 1e-3, 16}, Case{"ministral3", "", 1e-3, 16},
                      Case{"olmoe_clip", "", 1e-3, 16}),
    [](const ::testing::TestParamInfo<Case>& i) {
      std::string n = std::string(i.param.family) + "_" + (i.param.file[0] ? i.param.file : "hf");
      for (char& ch : n)
        if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
      return n;
    });

}  // namespace
}  // namespace oxyd::model::test
