// RoPE on the GPU against backend/reference (angles in float64): NEOX and interleaved pairing,
// full and partial rotary, per-pair frequency factors, attention_factor, positions up to 131071
// (where a float32 angle would be 1e-2 rad off), in place and out of place, F32/BF16/F16.
#include <gtest/gtest.h>

#include <cmath>

#include "backend/cuda/rope.h"
#include "backend/reference/rope.h"
#include "cuda_test_util.h"

namespace oxyd::backend::cuda {
namespace {

using namespace test;

struct RopeCase {
  int64_t num_tokens, num_heads, head_dim, rot_dim;
  RopeStyle style;
  bool freq_factors, in_place;
  float attention_factor;
  int32_t max_pos;
};

class CudaRope : public ::testing::TestWithParam<DType> {};

TEST_P(CudaRope, MatchesReference) {
  OXYD_REQUIRE_CUDA();
  const DType dt = GetParam();
  const RopeCase cases[] = {
      {5, 4, 128, 128, RopeStyle::NEOX, false, false, 1.0f, 4096},
      {5, 4, 128, 128, RopeStyle::INTERLEAVED, false, false, 1.0f, 4096},
      {1, 32, 128, 128, RopeStyle::NEOX, false, true, 1.0f, 131071},  // decode, long context
      {7, 3, 256, 64, RopeStyle::NEOX, false, false, 1.0f, 262143},   // Qwen3.5 partial rotary
      {6, 2, 80, 40, RopeStyle::INTERLEAVED, true, false, 1.0f, 8192},
      {9, 8, 96, 96, RopeStyle::NEOX, true, true, 1.2079f, 65535},    // yarn-like factor
      {64, 2, 64, 32, RopeStyle::NEOX, false, false, 1.0f, 100},
  };
  Stream stream;
  for (const RopeCase& c : cases) {
    const std::string what = std::string("rope ") + dtype_label(dt) + " tokens " +
                             std::to_string(c.num_tokens) + " heads " + std::to_string(c.num_heads) +
                             " head_dim " + std::to_string(c.head_dim) + " rot " +
                             std::to_string(c.rot_dim) +
                             (c.style == RopeStyle::NEOX ? " neox" : " interleaved");
    const int64_t n = c.num_tokens * c.num_heads * c.head_dim, half = c.rot_dim / 2;
    std::vector<float> x = random_floats(size_t(n), uint32_t(n + c.rot_dim), -2, 2);
    round_to(dt, x);
    std::vector<int32_t> pos(c.num_tokens);
    for (int64_t t = 0; t < c.num_tokens; ++t)
      pos[t] = t == 0 ? c.max_pos : int32_t((t * 2654435761u) % uint32_t(c.max_pos + 1));
    std::vector<float> inv_freq(half), factors(half);
    for (int64_t i = 0; i < half; ++i) {
      inv_freq[i] = float(std::pow(1e6, -2.0 * double(i) / double(c.rot_dim)));
      factors[i] = 1.0f + float(i % 5);
    }
    std::vector<float> want(x.size());
    const Tensor ff_host(DType::F32, factors.data(), {half});
    reference::rope(Tensor(DType::F32, x.data(), {c.num_tokens, c.num_heads, c.head_dim}),
                    Tensor(DType::I32, pos.data(), {c.num_tokens}),
                    Tensor(DType::F32, inv_freq.data(), {half}), c.freq_factors ? &ff_host : nullptr,
                    c.style, c.attention_factor,
                    Tensor(DType::F32, want.data(), {c.num_tokens, c.num_heads, c.head_dim}));

    DeviceBuffer dx = upload(dt, x), dy(x.size() * elem_bytes(dt));
    DeviceBuffer dpos(pos.size() * 4), dfreq = upload(DType::F32, inv_freq),
                 dff = upload(DType::F32, factors);
    copy_to_device(dpos.data(), pos.data(), pos.size() * 4);
    const Tensor tx = dx.view(dt, {c.num_tokens, c.num_heads, c.head_dim});
    const Tensor ty = c.in_place ? tx : dy.view(dt, {c.num_tokens, c.num_heads, c.head_dim});
    const Tensor tff = dff.view(DType::F32, {half});
    rope(tx, dpos.view(DType::I32, {c.num_tokens}), dfreq.view(DType::F32, {half}),
         c.freq_factors ? &tff : nullptr, c.style, c.attention_factor, ty, stream);
    stream.synchronize();
    // F32: cos/sin of a float angle (±1.2e-7) times |x| ≤ 2, plus two roundings.
    const Tolerance tol = dt == DType::F32 ? Tolerance{2e-6, 2e-5} : tolerance_for(dt);
    expect_close(download(dt, ty.data, x.size()), want, tol, what);
  }
}

INSTANTIATE_TEST_SUITE_P(Dtypes, CudaRope, ::testing::Values(DType::F32, DType::BF16, DType::F16),
                         [](const auto& info) { return std::string(test::dtype_label(info.param)); });

}  // namespace
}  // namespace oxyd::backend::cuda
