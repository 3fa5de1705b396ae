// RMSNorm, LayerNorm and softmax on the GPU against backend/reference (float64) on the same inputs, for
// F32, BF16 and F16 storage; shapes cover the warp-per-row and block-per-row paths, the 16-byte
// and scalar paths (odd widths, offset pointers), in-place use and masked (-inf) logits.
#include <gtest/gtest.h>

#include "backend/cuda/layer_norm.h"
#include "backend/cuda/rms_norm.h"
#include "backend/cuda/softmax.h"
#include "backend/reference/layer_norm.h"
#include "backend/reference/rms_norm.h"
#include "backend/reference/softmax.h"
#include "cuda_test_util.h"

namespace oxyd::backend::cuda {
namespace {

using namespace test;

class CudaNorm : public ::testing::TestWithParam<DType> {};

struct NormCase {
  int64_t rows, n;
  bool weight, in_place;
  int offset;  // elements added to every pointer: 1 forces the scalar path
};

TEST_P(CudaNorm, RmsNormMatchesReference) {
  OXYD_REQUIRE_CUDA();
  const DType dt = GetParam();
  const NormCase cases[] = {
      {1, 4096, true, false, 0},  {7, 128, true, false, 0},   {33, 64, false, false, 0},
      {3, 5120, true, true, 0},   {5, 1001, true, false, 0},  {2, 16384, true, false, 0},
      {4, 256, true, false, 1},   {300, 96, true, true, 0},   {2, 40, true, false, 0},
  };
  Stream stream;
  for (const NormCase& c : cases) {
    const std::string what = std::string("rms_norm ") + dtype_label(dt) + " [" +
                             std::to_string(c.rows) + ", " + std::to_string(c.n) + "]";
    std::vector<float> x = random_floats(size_t(c.rows * c.n), uint32_t(c.rows * 31 + c.n), -3, 3);
    std::vector<float> w = random_floats(size_t(c.n), uint32_t(c.n), 0.5f, 1.5f);
    round_to(dt, x);
    std::vector<float> want(x.size());
    const Tensor w_host(DType::F32, w.data(), {c.n});
    reference::rms_norm(Tensor(DType::F32, x.data(), {c.rows, c.n}), c.weight ? &w_host : nullptr,
                        1e-6f, Tensor(DType::F32, want.data(), {c.rows, c.n}));

    std::vector<float> x_pad(c.offset, 0.0f);
    x_pad.insert(x_pad.end(), x.begin(), x.end());
    std::vector<float> w_pad(c.offset, 0.0f);
    w_pad.insert(w_pad.end(), w.begin(), w.end());
    DeviceBuffer dx = upload(dt, x_pad), dw = upload(DType::F32, w_pad);
    DeviceBuffer dy(x_pad.size() * elem_bytes(dt));
    auto at = [&](const DeviceBuffer& b, DType t) {
      return static_cast<uint8_t*>(b.data()) + c.offset * elem_bytes(t);
    };
    const Tensor tx(dt, at(dx, dt), {c.rows, c.n}, Device::CUDA);
    const Tensor ty(dt, c.in_place ? at(dx, dt) : at(dy, dt), {c.rows, c.n}, Device::CUDA);
    const Tensor tw(DType::F32, at(dw, DType::F32), {c.n}, Device::CUDA);
    rms_norm(tx, c.weight ? &tw : nullptr, 1e-6f, ty, stream);
    stream.synchronize();
    expect_close(download(dt, ty.data, x.size()), want, tolerance_for(dt), what);
  }
}

TEST_P(CudaNorm, LayerNormMatchesReference) {
  OXYD_REQUIRE_CUDA();
  const DType dt = GetParam();
  const NormCase cases[] = {
      {1, 768, true, false, 0},  {9, 384, true, true, 0},   {40, 64, false, false, 0},
      {3, 1001, true, false, 0}, {2, 4096, true, false, 1}, {2, 8192, false, true, 0},
  };
  Stream stream;
  for (const NormCase& c : cases) {
    const std::string what = std::string("layer_norm ") + dtype_label(dt) + " [" +
                             std::to_string(c.rows) + ", " + std::to_string(c.n) + "]";
    // A mean of about 10 per row: the centred variance must not cancel.
    std::vector<float> x = random_floats(size_t(c.rows * c.n), uint32_t(c.rows * 17 + c.n), 7, 13);
    std::vector<float> w = random_floats(size_t(c.n), uint32_t(c.n + 5), 0.5f, 1.5f);
    std::vector<float> b = random_floats(size_t(c.n), uint32_t(c.n + 6), -0.5f, 0.5f);
    round_to(dt, x);
    std::vector<float> want(x.size());
    const Tensor w_host(DType::F32, w.data(), {c.n}), b_host(DType::F32, b.data(), {c.n});
    reference::layer_norm(Tensor(DType::F32, x.data(), {c.rows, c.n}), c.weight ? &w_host : nullptr,
                          c.weight ? &b_host : nullptr, 1e-5f,
                          Tensor(DType::F32, want.data(), {c.rows, c.n}));
    auto padded = [&](const std::vector<float>& v) {
      std::vector<float> p(c.offset, 0.0f);
      p.insert(p.end(), v.begin(), v.end());
      return p;
    };
    DeviceBuffer dx = upload(dt, padded(x)), dw = upload(DType::F32, padded(w)),
                 db = upload(DType::F32, padded(b)), dy(x.size() * elem_bytes(dt) + 16);
    auto at = [&](const DeviceBuffer& buf, DType t) {
      return static_cast<uint8_t*>(buf.data()) + c.offset * elem_bytes(t);
    };
    const Tensor tx(dt, at(dx, dt), {c.rows, c.n}, Device::CUDA);
    const Tensor ty(dt, c.in_place ? at(dx, dt) : at(dy, dt), {c.rows, c.n}, Device::CUDA);
    const Tensor tw(DType::F32, at(dw, DType::F32), {c.n}, Device::CUDA);
    const Tensor tb(DType::F32, at(db, DType::F32), {c.n}, Device::CUDA);
    layer_norm(tx, c.weight ? &tw : nullptr, c.weight ? &tb : nullptr, 1e-5f, ty, stream);
    stream.synchronize();
    // The fp32 row mean (~10) is off by ~1e-6, which shows as absolute error near y = 0.
    Tolerance tol = tolerance_for(dt, 5e-5);
    tol.abs = 5e-6;
    expect_close(download(dt, ty.data, x.size()), want, tol, what);
  }
}

TEST_P(CudaNorm, SoftmaxMatchesReference) {
  OXYD_REQUIRE_CUDA();
  const DType dt = GetParam();
  struct Case {
    int64_t rows, n;
    float scale;
    bool masked, in_place;
    int offset;
  };
  const Case cases[] = {
      {1, 151936, 1.0f, false, false, 0},  // a vocabulary row (sampling)
      {16, 64, 0.125f, true, false, 0},   {3, 1000, 2.0f, false, true, 0},
      {130, 8, 1.0f, true, false, 0},      {2, 4099, 0.5f, true, false, 1},
      {4, 2048, 30.0f, false, false, 0},  // large logits: exercises the max subtraction
  };
  Stream stream;
  for (const Case& c : cases) {
    const std::string what = std::string("softmax ") + dtype_label(dt) + " [" +
                             std::to_string(c.rows) + ", " + std::to_string(c.n) + "]";
    std::vector<float> x = random_floats(size_t(c.rows * c.n), uint32_t(c.n * 7 + c.rows), -4, 4);
    if (c.masked)  // mask a random third of each row, never a whole row
      for (size_t i = 0; i < x.size(); ++i)
        if ((i * 2654435761u >> 7) % 3 == 0 && i % size_t(c.n) != 0) x[i] = -INFINITY;
    round_to(dt, x);
    std::vector<float> want(x.size());
    reference::softmax(Tensor(DType::F32, x.data(), {c.rows, c.n}), c.scale,
                       Tensor(DType::F32, want.data(), {c.rows, c.n}));
    std::vector<float> x_pad(c.offset, 0.0f);
    x_pad.insert(x_pad.end(), x.begin(), x.end());
    DeviceBuffer dx = upload(dt, x_pad), dy(x_pad.size() * elem_bytes(dt));
    uint8_t* px = static_cast<uint8_t*>(dx.data()) + c.offset * elem_bytes(dt);
    uint8_t* py = c.in_place ? px : static_cast<uint8_t*>(dy.data()) + c.offset * elem_bytes(dt);
    softmax(Tensor(dt, px, {c.rows, c.n}, Device::CUDA), c.scale,
            Tensor(dt, py, {c.rows, c.n}, Device::CUDA), stream);
    stream.synchronize();
    expect_close(download(dt, py, x.size()), want, tolerance_for(dt), what);
  }
}

TEST(CudaNormErrors, RejectsHostMemoryAndWrongDtype) {
  OXYD_REQUIRE_CUDA();
  Stream stream;
  std::vector<float> host(64);
  DeviceBuffer d(64 * 4);
  const Tensor on_host(DType::F32, host.data(), {2, 32});
  const Tensor on_dev = d.view(DType::F32, {2, 32});
  EXPECT_THROW(rms_norm(on_host, nullptr, 1e-6f, on_dev, stream), Error);
  EXPECT_THROW(softmax(on_dev, 1.0f, on_host, stream), Error);
  const Tensor as_i32 = d.view(DType::I32, {2, 32});
  EXPECT_THROW(softmax(as_i32, 1.0f, as_i32, stream), Error);
  const Tensor bf16_y = d.view(DType::BF16, {2, 32});
  EXPECT_THROW(rms_norm(on_dev, nullptr, 1e-6f, bf16_y, stream), Error);
}

INSTANTIATE_TEST_SUITE_P(Dtypes, CudaNorm, ::testing::Values(DType::F32, DType::BF16, DType::F16),
                         [](const auto& info) { return std::string(test::dtype_label(info.param)); });

}  // namespace
}  // namespace oxyd::backend::cuda
