// Elementwise ops and activations on the GPU against backend/reference (float64): add/mul with
// same-shape and row-broadcast b, scale, softcap, silu/gelu(erf)/gelu(tanh), glu and glu_fused,
// over F32/BF16/F16, long flat tensors, odd widths (scalar path) and in-place use.
#include <gtest/gtest.h>

#include <functional>

#include "backend/cuda/activation.h"
#include "backend/cuda/elementwise.h"
#include "backend/reference/activation.h"
#include "backend/reference/elementwise.h"
#include "cuda_test_util.h"

namespace oxyd::backend::cuda {
namespace {

using namespace test;

class CudaElementwise : public ::testing::TestWithParam<DType> {};

// Shapes [rows, cols]: a long flat one, a broadcast-friendly one, an odd one.
const std::pair<int64_t, int64_t> kShapes[] = {{1, 1 << 20}, {37, 4096}, {9, 1003}};

std::string label(const char* op, DType dt, int64_t rows, int64_t cols) {
  return std::string(op) + " " + dtype_label(dt) + " [" + std::to_string(rows) + ", " +
         std::to_string(cols) + "]";
}

TEST_P(CudaElementwise, AddMulMatchReference) {
  OXYD_REQUIRE_CUDA();
  const DType dt = GetParam();
  Stream stream;
  using RefFn = void (*)(const Tensor&, const Tensor&, const Tensor&);
  using CudaFn = void (*)(const Tensor&, const Tensor&, const Tensor&, const Stream&);
  const std::tuple<const char*, RefFn, CudaFn> ops[] = {
      {"add", reference::add, add}, {"mul", reference::mul, mul}};
  for (const auto& [rows, cols] : kShapes) {
    std::vector<float> a = random_floats(size_t(rows * cols), uint32_t(cols), -3, 3);
    std::vector<float> b = random_floats(size_t(rows * cols), uint32_t(cols + 1), -3, 3);
    std::vector<float> v = random_floats(size_t(cols), uint32_t(cols + 2), -3, 3);
    round_to(dt, a), round_to(dt, b), round_to(dt, v);
    DeviceBuffer da = upload(dt, a), db = upload(dt, b), dv = upload(dt, v);
    DeviceBuffer dy(a.size() * elem_bytes(dt));
    const Tensor ha(DType::F32, a.data(), {rows, cols}), hb(DType::F32, b.data(), {rows, cols}),
        hv(DType::F32, v.data(), {cols});
    const Tensor ta = da.view(dt, {rows, cols}), tb = db.view(dt, {rows, cols}),
                 tv = dv.view(dt, {cols}), ty = dy.view(dt, {rows, cols});
    for (const auto& [name, ref_fn, cuda_fn] : ops) {
      std::vector<float> want(a.size());
      const Tensor hw(DType::F32, want.data(), {rows, cols});
      ref_fn(ha, hb, hw);
      cuda_fn(ta, tb, ty, stream);
      stream.synchronize();
      expect_close(download(dt, ty.data, a.size()), want, tolerance_for(dt), label(name, dt, rows, cols));
      ref_fn(ha, hv, hw);  // b broadcast over rows
      cuda_fn(ta, tv, ty, stream);
      stream.synchronize();
      expect_close(download(dt, ty.data, a.size()), want, tolerance_for(dt),
                   label(name, dt, rows, cols) + " broadcast");
    }
    // In place: a += b.
    std::vector<float> want(a.size());
    reference::add(ha, hb, Tensor(DType::F32, want.data(), {rows, cols}));
    add(ta, tb, ta, stream);
    stream.synchronize();
    expect_close(download(dt, ta.data, a.size()), want, tolerance_for(dt), label("add in place", dt, rows, cols));
  }
}

TEST_P(CudaElementwise, UnaryOpsMatchReference) {
  OXYD_REQUIRE_CUDA();
  const DType dt = GetParam();
  Stream stream;
  for (const auto& [rows, cols] : kShapes) {
    std::vector<float> x = random_floats(size_t(rows * cols), uint32_t(rows + cols), -8, 8);
    round_to(dt, x);
    DeviceBuffer dx = upload(dt, x), dy(x.size() * elem_bytes(dt));
    const Tensor hx(DType::F32, x.data(), {rows, cols});
    const Tensor tx = dx.view(dt, {rows, cols}), ty = dy.view(dt, {rows, cols});
    std::vector<float> want(x.size());
    const Tensor hw(DType::F32, want.data(), {rows, cols});
    auto check = [&](const std::string& what) {
      stream.synchronize();
      expect_close(download(dt, ty.data, x.size()), want, tolerance_for(dt), label(what.c_str(), dt, rows, cols));
    };
    reference::scale(hx, 0.0883883f, hw);
    scale(tx, 0.0883883f, ty, stream);
    check("scale");
    reference::softcap(hx, 5.0f, hw);
    softcap(tx, 5.0f, ty, stream);
    check("softcap");
    const std::pair<Activation, const char*> acts[] = {
        {Activation::SILU, "silu"}, {Activation::GELU_ERF, "gelu_erf"}, {Activation::GELU_TANH, "gelu_tanh"},
        {Activation::SIGMOID, "sigmoid"}};
    for (const auto& [act, name] : acts) {
      reference::activation(act, hx, hw);
      activation(act, tx, ty, stream);
      check(name);
    }
  }
}

TEST_P(CudaElementwise, GluMatchesReference) {
  OXYD_REQUIRE_CUDA();
  const DType dt = GetParam();
  Stream stream;
  const std::pair<int64_t, int64_t> shapes[] = {{1, 14336}, {17, 2048}, {5, 999}};
  for (const auto& [rows, ff] : shapes) {
    std::vector<float> gu = random_floats(size_t(rows * 2 * ff), uint32_t(ff), -6, 6);
    round_to(dt, gu);
    std::vector<float> gate(size_t(rows * ff)), up(size_t(rows * ff));
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t i = 0; i < ff; ++i) {
        gate[r * ff + i] = gu[r * 2 * ff + i];
        up[r * ff + i] = gu[r * 2 * ff + ff + i];
      }
    DeviceBuffer dgu = upload(dt, gu), dg = upload(dt, gate), du = upload(dt, up);
    DeviceBuffer dy(gate.size() * elem_bytes(dt));
    const Tensor ty = dy.view(dt, {rows, ff});
    std::vector<float> want(gate.size());
    const Tensor hw(DType::F32, want.data(), {rows, ff});
    const std::pair<Activation, const char*> acts[] = {
        {Activation::SILU, "swiglu"}, {Activation::GELU_ERF, "geglu_erf"}, {Activation::GELU_TANH, "geglu_tanh"},
        {Activation::SIGMOID, "sigmoid_gate"}};
    for (const auto& [act, name] : acts) {
      reference::glu(act, Tensor(DType::F32, gate.data(), {rows, ff}),
                     Tensor(DType::F32, up.data(), {rows, ff}), hw);
      glu(act, dg.view(dt, {rows, ff}), du.view(dt, {rows, ff}), ty, stream);
      stream.synchronize();
      expect_close(download(dt, ty.data, gate.size()), want, tolerance_for(dt), label(name, dt, rows, ff));
      std::vector<float> want_fused(gate.size());
      reference::glu_fused(act, Tensor(DType::F32, gu.data(), {rows, 2 * ff}),
                           Tensor(DType::F32, want_fused.data(), {rows, ff}));
      glu_fused(act, dgu.view(dt, {rows, 2 * ff}), ty, stream);
      stream.synchronize();
      expect_close(download(dt, ty.data, gate.size()), want_fused, tolerance_for(dt),
                   label(name, dt, rows, ff) + " fused");
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Dtypes, CudaElementwise, ::testing::Values(DType::F32, DType::BF16, DType::F16),
                         [](const auto& info) { return std::string(test::dtype_label(info.param)); });

}  // namespace
}  // namespace oxyd::backend::cuda
