// Fused residual add + RMSNorm on the GPU against backend/reference's add then rms_norm (float64)
// on the same inputs: the new residual must equal the reference sum rounded to the storage dtype
// exactly, y must match rms_norm of that rounded sum. F32, BF16 and F16; vector and scalar paths.
#include <gtest/gtest.h>

#include "backend/cuda/rms_norm.h"
#include "backend/reference/elementwise.h"
#include "backend/reference/rms_norm.h"
#include "cuda_test_util.h"

namespace oxyd::backend::cuda {
namespace {

using namespace test;

class CudaAddRmsNorm : public ::testing::TestWithParam<DType> {};

TEST_P(CudaAddRmsNorm, MatchesReferenceAddThenNorm) {
  OXYD_REQUIRE_CUDA();
  const DType dt = GetParam();
  struct Case {
    int64_t rows, n;
    bool weight, y_is_x;
  };
  const Case cases[] = {{1, 4096, true, false}, {7, 2048, true, true}, {33, 64, false, false},
                        {3, 1001, true, false}, {2, 8192, true, true}, {100, 96, true, false}};
  Stream stream;
  for (const Case& c : cases) {
    const std::string what = std::string("add_rms_norm ") + dtype_label(dt) + " [" +
                             std::to_string(c.rows) + ", " + std::to_string(c.n) + "]";
    const size_t count = size_t(c.rows * c.n);
    std::vector<float> x = random_floats(count, uint32_t(c.n + 1), -3, 3);
    std::vector<float> r = random_floats(count, uint32_t(c.n + 2), -3, 3);
    std::vector<float> w = random_floats(size_t(c.n), uint32_t(c.n + 3), 0.5f, 1.5f);
    round_to(dt, x);
    round_to(dt, r);
    std::vector<float> h(count), want(count);
    reference::add(Tensor(DType::F32, x.data(), {c.rows, c.n}), Tensor(DType::F32, r.data(), {c.rows, c.n}),
                   Tensor(DType::F32, h.data(), {c.rows, c.n}));
    round_to(dt, h);
    const Tensor w_host(DType::F32, w.data(), {c.n});
    reference::rms_norm(Tensor(DType::F32, h.data(), {c.rows, c.n}), c.weight ? &w_host : nullptr, 1e-6f,
                        Tensor(DType::F32, want.data(), {c.rows, c.n}));
    DeviceBuffer dx = upload(dt, x), dr = upload(dt, r), dw = upload(DType::F32, w), dy(count * 4);
    const Tensor tx = dx.view(dt, {c.rows, c.n}), tr = dr.view(dt, {c.rows, c.n});
    const Tensor ty = c.y_is_x ? tx : dy.view(dt, {c.rows, c.n});
    const Tensor tw = dw.view(DType::F32, {c.n});
    add_rms_norm(tx, tr, c.weight ? &tw : nullptr, 1e-6f, ty, stream);
    stream.synchronize();
    expect_close(download(dt, dr.data(), count), h, {0, 0}, what + " residual");
    expect_close(download(dt, ty.data, count), want, tolerance_for(dt), what + " y");
  }
}

INSTANTIATE_TEST_SUITE_P(Dtypes, CudaAddRmsNorm, ::testing::Values(DType::F32, DType::BF16, DType::F16),
                         [](const auto& info) { return std::string(dtype_label(info.param)); });

}  // namespace
}  // namespace oxyd::backend::cuda
