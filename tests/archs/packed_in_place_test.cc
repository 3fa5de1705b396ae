// Weights the loader rewrites into buffers of its own (gpt-oss's HF MXFP4 experts as GGUF MXFP4
// blocks; FP8 / AWQ / GPTQ linears repacked as Q8_0 / Q4_1) are packed over those rows at load
// (Backend::prepare_in_place): the model holds one copy and the packed kernels read it. If the
// matmul ISA is lowered after load (tests, benches), the rows are unpacked from the copy per call:
// the result is then the row kernels' on the original rows, bit for bit.
#include <algorithm>
#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "archs_util.h"
#include "backend/backend.h"
#include "backend/cpu/isa.h"
#include "backend/cpu/matmul/pack.h"
#include "ops/dispatch.h"

namespace oxyd::model::test {
namespace {

// Every 2-D weight of the model's layers, experts included.
std::vector<const Tensor*> layer_weights(const Weights& w) {
  std::vector<const Tensor*> out;
  for (const LayerWeights& L : w.layers) {
    for (const Tensor* t : {&L.q, &L.k, &L.v, &L.o, &L.gate, &L.up, &L.down})
      if (t->data) out.push_back(t);
    for (const LayerWeights::Expert& x : L.experts)
      for (const Tensor* t : {&x.gate, &x.up, &x.down})
        if (t->data) out.push_back(t);
  }
  return out;
}

struct PackOff {
  PackOff() { backend::cpu::set_matmul_pack(false); }
  ~PackOff() { backend::cpu::set_matmul_pack(true); }
};

class PackedInPlace : public ::testing::TestWithParam<std::string> {};

TEST_P(PackedInPlace, OneCopyAndTheRowKernelsResultWhenTheIsaIsLowered) {
  const std::string fam = GetParam();
  Golden g = load_golden(fam);
  auto m = Transformer::load(arch_dir(fam));
  int in_place = 0, rewritten = 0;
  DType dtype = DType::F32;
  for (const Tensor* t : layer_weights(m->weights())) {
    if (t->dtype != DType::MXFP4 && t->dtype != DType::Q8_0 && t->dtype != DType::Q4_1) continue;
    ++rewritten, dtype = t->dtype;
    const backend::PreparedWeight* p = ops::device_backend(Device::CPU).prepared(*t);
    if (p && p->in_place) {
      ++in_place;
      EXPECT_EQ(p->bytes, t->data) << fam << ": the copy is not over the rows";
    }
  }
  ASSERT_GT(rewritten, 0) << fam << " has no rewritten weights";
  if (!backend::cpu::matmul_packs(dtype)) GTEST_SKIP() << "this CPU's matmul does not pack " << dtype_name(dtype);
  EXPECT_EQ(in_place, rewritten) << fam << ": every rewritten weight of these shapes packs in place";

  std::unique_ptr<Transformer> rows;
  {
    PackOff off;
    rows = Transformer::load(arch_dir(fam));
  }
  // Owned bytes: the unpacked model's, plus the packed copies of file-mapped weights (their file
  // pages released), one 64-byte-aligned slice each; nothing for the weights packed in place.
  const backend::Backend& cpu = ops::device_backend(Device::CPU);
  std::vector<const Tensor*> all = layer_weights(m->weights());
  all.push_back(&m->weights().lm_head);
  std::set<const void*> seen;
  int64_t copies = 0;
  for (const Tensor* t : all) {
    const backend::PreparedWeight* p = t->data ? cpu.prepared(*t) : nullptr;
    if (p && !p->in_place && seen.insert(t->data).second) copies += (cpu.packed_bytes(*t) + 63) / 64 * 64;
  }
  EXPECT_EQ(m->weights().owned_bytes(), rows->weights().owned_bytes() + copies) << fam << ": a second copy is held";

  const auto& prompt = g.prompts[1];
  const double range = g.j["logit_range"][1];
  const auto packed = prefill(*m, prompt), plain = prefill(*rows, prompt);
  double d = 0;
  for (size_t i = 0; i < packed.size(); ++i) d = std::max(d, std::fabs(double(packed[i]) - double(plain[i])));
  std::printf("[ PACKED  ] %s: packed vs row kernels max |Δlogit| %.3g (%.2g of the range)\n", fam.c_str(), d, d / range);
  EXPECT_LE(d, 3e-2 * range) << fam;  // both round activations to 8 bits, in different orders

  // Only an ISA below the one the weights were packed for is a lowering (on an AVX2-only CPU,
  // AVX2 is what packed them, and its packed kernels keep serving).
  for (auto isa : {backend::cpu::Isa::SCALAR, backend::cpu::Isa::AVX2}) {
    if (!backend::cpu::isa_supported(isa) || int(isa) >= int(backend::cpu::detected_isa())) continue;
    backend::cpu::ScopedIsa lower(isa);
    const auto a = prefill(*m, prompt), b = prefill(*rows, prompt);
    ASSERT_EQ(a.size(), b.size());
    EXPECT_TRUE(std::equal(a.begin(), a.end(), b.begin()))
        << fam << " at " << backend::cpu::isa_name(isa) << ": the unpacked rows differ from the originals";
  }
}

INSTANTIATE_TEST_SUITE_P(HfRewritten, PackedInPlace,
                         ::testing::Values("gpt_oss_mxfp4", "qwen3_fp8", "qwen3_awq", "qwen3_gptq_act",
                                           "qwen3_moe_awq_stacked"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace oxyd::model::test
