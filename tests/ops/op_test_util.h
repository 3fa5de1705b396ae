// Shared helpers of the op tests: owning host tensors, seeded random fills, the per-dtype
// tolerances (written once, here), an all-elements closeness check that reports the worst
// element, and the list of CPU kernel variants this machine can run (each test forces each).
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "backend/cpu/isa.h"
#include "core/half.h"
#include "core/tensor.h"

namespace oxyd::test {

/// Buffer + Tensor view over it.
struct HostTensor {
  Buffer buf;
  Tensor t;
  HostTensor() = default;
  HostTensor(DType dtype, std::initializer_list<int64_t> dims) : HostTensor(Tensor(dtype, nullptr, dims)) {}
  /// Fresh (uninitialized) storage with the dtype and shape of `like`.
  explicit HostTensor(const Tensor& like) : buf(size_t(std::max<int64_t>(like.nbytes(), 1))), t(like) {
    t.data = buf.data();
    t.device = Device::CPU;
  }
  float* f() const { return t.ptr<float>(); }
  int32_t* i() const { return t.ptr<int32_t>(); }
  int64_t n() const { return t.numel(); }
};

inline void fill_uniform(const HostTensor& h, float lo, float hi, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  for (int64_t i = 0; i < h.n(); ++i) h.f()[i] = dist(rng);
}

inline HostTensor copy_of(const HostTensor& h) {
  HostTensor c(h.t);
  std::memcpy(c.buf.data(), h.buf.data(), size_t(h.t.nbytes()));
  return c;
}

/// |got − want| ≤ atol + rtol·|want|, per element.
struct Tolerance {
  double atol, rtol;
};

/// Tolerance of a backend's output against the float64 reference, by the dtype the backend
/// computes and stores activations in. F32: float32 accumulation and the simd.h exp/tanh/erf
/// (≤ ~2e-7 absolute on O(1) values). F16 / BF16: one rounding of the output plus 16-bit
/// intermediates (for the CUDA backend's half-precision paths).
inline Tolerance tolerance(DType compute_dtype) {
  switch (compute_dtype) {
    case DType::F16: return {2e-3, 4e-3};
    case DType::BF16: return {1.6e-2, 3.2e-2};
    default: return {1e-5, 1e-5};
  }
}

inline void expect_close(const float* got, const float* want, int64_t n, Tolerance tol, const std::string& what) {
  int64_t bad = 0, worst = -1;
  double worst_excess = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double err = std::fabs(double(got[i]) - double(want[i]));
    const double lim = tol.atol + tol.rtol * std::fabs(double(want[i]));
    if (!(err <= lim)) {  // also catches NaN
      ++bad;
      if (worst < 0 || !(err - lim <= worst_excess)) worst = i, worst_excess = err - lim;
    }
  }
  EXPECT_EQ(bad, 0) << what << ": " << bad << " of " << n << " elements out of tolerance (atol " << tol.atol
                    << ", rtol " << tol.rtol << "); worst at " << worst << ": got "
                    << (worst >= 0 ? got[worst] : 0.f) << ", want " << (worst >= 0 ? want[worst] : 0.f);
}

/// Every CPU kernel variant this CPU runs, lowest first.
inline std::vector<backend::cpu::Isa> isas_to_test() {
  std::vector<backend::cpu::Isa> v;
  for (int i = 0; i <= int(backend::cpu::detected_isa()); ++i) v.push_back(backend::cpu::Isa(i));
  return v;
}

inline std::string isa_param_name(const testing::TestParamInfo<backend::cpu::Isa>& info) {
  return std::string(backend::cpu::isa_name(info.param));
}

/// Base of the tests parameterized over the CPU variant: forces it for the test's duration.
class IsaTest : public testing::TestWithParam<backend::cpu::Isa> {
 protected:
  void SetUp() override { backend::cpu::set_isa_override(GetParam()); }
  void TearDown() override { backend::cpu::set_isa_override(std::nullopt); }
};

}  // namespace oxyd::test
