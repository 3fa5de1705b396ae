// Helpers for the CUDA tests: the skip guard, random inputs, host↔device staging through a
// storage dtype (F32, BF16, F16, with the rounding done by core/half.h), and a tolerance
// comparison that names the first bad element. The oracle is always backend/reference run on
// the same (already rounded) inputs in host memory.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "backend/cuda/device.h"
#include "core/half.h"
#include "core/tensor.h"

/// Every GPU test starts with this: it shows as skipped (not passed) where there is no GPU.
#define OXYD_REQUIRE_CUDA()                                          \
  do {                                                               \
    if (!::oxyd::backend::cuda::cuda_available()) GTEST_SKIP() << "no CUDA device"; \
  } while (0)

namespace oxyd::backend::cuda::test {

inline std::vector<float> random_floats(size_t n, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float& f : v) f = dist(rng);
  return v;
}

inline int64_t elem_bytes(DType t) { return t == DType::F32 ? 4 : 2; }

/// Rounds every value to what `t` can hold, in place, so the reference sees the exact inputs.
inline void round_to(DType t, std::vector<float>& v) {
  for (float& f : v) {
    if (t == DType::BF16) f = bf16_to_f32(f32_to_bf16(f));
    else if (t == DType::F16) f = f16_to_f32(f32_to_f16(f));
  }
}

/// Device copy of `v` stored as dtype `t` (values are rounded to t).
inline DeviceBuffer upload(DType t, const std::vector<float>& v) {
  DeviceBuffer buf(v.size() * elem_bytes(t) + 16);  // + slack for deliberately offset views
  if (t == DType::F32) {
    copy_to_device(buf.data(), v.data(), v.size() * 4);
  } else {
    std::vector<uint16_t> bits(v.size());
    for (size_t i = 0; i < v.size(); ++i)
      bits[i] = t == DType::BF16 ? f32_to_bf16(v[i]) : f32_to_f16(v[i]);
    copy_to_device(buf.data(), bits.data(), bits.size() * 2);
  }
  return buf;
}

/// n values of dtype t at device address p, as floats.
inline std::vector<float> download(DType t, const void* p, size_t n) {
  std::vector<float> out(n);
  if (t == DType::F32) {
    copy_to_host(out.data(), p, n * 4);
  } else {
    std::vector<uint16_t> bits(n);
    copy_to_host(bits.data(), p, n * 2);
    for (size_t i = 0; i < n; ++i) out[i] = t == DType::BF16 ? bf16_to_f32(bits[i]) : f16_to_f32(bits[i]);
  }
  return out;
}

/// Tolerance for outputs stored as t: the storage rounding plus fp32-vs-fp64 math.
struct Tolerance {
  double abs, rel;
};
inline Tolerance tolerance_for(DType t, double f32_rel = 2e-5) {
  if (t == DType::BF16) return {1e-6, 1.0 / 128};  // 2 ulp of an 8-bit mantissa
  if (t == DType::F16) return {1e-6, 1.0 / 1024};
  return {1e-6, f32_rel};
}

/// Asserts |got − want| ≤ abs + rel·|want| everywhere; reports the count and the first failure.
inline void expect_close(const std::vector<float>& got, const std::vector<float>& want, Tolerance tol,
                         const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  size_t bad = 0, first = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double g = got[i], w = want[i];
    const bool both_nan = std::isnan(g) && std::isnan(w);
    if (!both_nan && !(std::fabs(g - w) <= tol.abs + tol.rel * std::fabs(w))) {
      if (bad++ == 0) first = i;
    }
  }
  EXPECT_EQ(bad, 0u) << what << ": " << bad << " of " << got.size() << " elements off; first at "
                     << first << ": got " << got[first] << ", want " << want[first];
}

inline const char* dtype_label(DType t) {
  return t == DType::F32 ? "F32" : t == DType::BF16 ? "BF16" : "F16";
}

}  // namespace oxyd::backend::cuda::test
