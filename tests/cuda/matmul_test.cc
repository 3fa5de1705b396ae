// CUDA weight decode, gemv, cuBLAS gemm and the batched matmul against core's dequantize_row and
// backend/reference's matmul (float64) on the same weights: random floats quantized on the host
// with core's quantize_row into each GGUF block format, then uploaded byte for byte.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "backend/cuda/gemm.h"
#include "backend/cuda/matmul.h"
#include "backend/cuda/qdot.cuh"
#include "backend/reference/matmul.h"
#include "core/quant.h"
#include "cuda_test_util.h"

namespace oxyd::backend::cuda {
namespace {

using namespace test;

const DType kWeightTypes[] = {DType::Q8_0, DType::Q4_0, DType::Q4_K, DType::Q5_K,
                              DType::Q6_K, DType::MXFP4, DType::F16, DType::BF16};

// A [n, k] weight of dtype t: random floats encoded by core's quantize_row, row by row.
std::vector<uint8_t> make_weight(DType t, int64_t n, int64_t k, uint32_t seed) {
  const std::vector<float> f = random_floats(size_t(n * k), seed);
  const int64_t rb = dtype_row_bytes(t, k);
  std::vector<uint8_t> bytes(size_t(n * rb));
  for (int64_t r = 0; r < n; ++r) quantize_row(t, f.data() + r * k, bytes.data() + r * rb, k);
  return bytes;
}

std::vector<float> dequantized(DType t, const std::vector<uint8_t>& w, int64_t n, int64_t k) {
  std::vector<float> out(size_t(n * k));
  const int64_t rb = dtype_row_bytes(t, k);
  for (int64_t r = 0; r < n; ++r) dequantize_row(t, w.data() + r * rb, out.data() + r * k, k);
  return out;
}

DeviceBuffer upload_bytes(const std::vector<uint8_t>& b) {
  DeviceBuffer d(b.size());
  copy_to_device(d.data(), b.data(), b.size());
  return d;
}

// |got − want| ≤ rel·Σ|x·w| + 1e-6 per output: fp32 accumulation against float64.
void expect_matmul_close(const std::vector<float>& got, const std::vector<float>& want,
                         const std::vector<float>& x, const std::vector<float>& wf, int64_t m,
                         int64_t n, int64_t k, double rel, const std::string& what) {
  ASSERT_EQ(got.size(), size_t(m * n));
  size_t bad = 0, first = 0;
  double first_tol = 0;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double mag = 0;
      for (int64_t c = 0; c < k; ++c) mag += std::fabs(double(x[i * k + c]) * wf[j * k + c]);
      const double tol = rel * mag + 1e-6;
      const size_t idx = size_t(i * n + j);
      if (!(std::fabs(double(got[idx]) - want[idx]) <= tol) && bad++ == 0) first = idx, first_tol = tol;
    }
  EXPECT_EQ(bad, 0u) << what << ": " << bad << " of " << got.size() << " outputs off; first at "
                     << first << ": got " << got[first] << ", want " << want[first] << " (tol "
                     << first_tol << ")";
}

std::string name_of(DType t) { return std::string(dtype_traits(t).name); }

// x̂: x [rows of k] quantized to int8 blocks of 32 and back, by qdot.cuh's functions.
std::vector<float> quantized_x(const std::vector<float>& x) {
  std::vector<float> out(x.size());
  for (size_t b = 0; b < x.size() / 32; ++b) {
    float amax = 0;
    for (int i = 0; i < 32; ++i) amax = std::max(amax, std::fabs(x[b * 32 + i]));
    const qdot::XScale sc = qdot::x_scale(amax);
    for (int i = 0; i < 32; ++i) out[b * 32 + i] = sc.d * float(qdot::x_round(x[b * 32 + i], sc.id));
  }
  return out;
}

TEST(CudaMatmul, DequantizeIsBitIdenticalToCore) {
  OXYD_REQUIRE_CUDA();
  Stream stream;
  const int64_t n = 19, k = 1024;
  for (DType t : kWeightTypes) {
    const std::vector<uint8_t> w = make_weight(t, n, k, 7 + uint32_t(t));
    const std::vector<float> want = dequantized(t, w, n, k);
    DeviceBuffer dw = upload_bytes(w), out(size_t(n * k) * 4);
    const Tensor tw(t, dw.data(), {n, k}, Device::CUDA);
    dequantize(tw, out.view(DType::F32, {n, k}), stream);
    stream.synchronize();
    std::vector<float> got(size_t(n * k));
    copy_to_host(got.data(), out.data(), got.size() * 4);
    size_t bad = 0, first = 0;
    for (size_t i = 0; i < got.size(); ++i)
      if (std::memcmp(&got[i], &want[i], 4) != 0 && bad++ == 0) first = i;
    EXPECT_EQ(bad, 0u) << name_of(t) << ": " << bad << " values differ; first at " << first
                       << ": got " << got[first] << ", want " << want[first];
    // BF16 output: the F32 value rounded to nearest even.
    dequantize(tw, out.view(DType::BF16, {n, k}), stream);
    stream.synchronize();
    const std::vector<float> got16 = download(DType::BF16, out.data(), size_t(n * k));
    std::vector<float> want16 = want;
    round_to(DType::BF16, want16);
    expect_close(got16, want16, {0, 0}, name_of(t) + " → BF16");
  }
}

TEST(CudaMatmul, QuantizedActivationsAreTheHostFunctions) {
  OXYD_REQUIRE_CUDA();
  Stream stream;
  const int64_t m = 3, k = 4096;
  std::vector<float> x = random_floats(size_t(m * k), 5, -3, 3);
  for (int64_t i = 0; i < 32; ++i) x[size_t(k + i)] = 0.0f;  // an all-zero block
  DeviceBuffer dx = upload(DType::F32, x), dq(quantized_x_bytes(m, k));
  quantize_activations(dx.view(DType::F32, {m, k}), dq.data(), stream);
  stream.synchronize();
  std::vector<int8_t> q(quantized_x_bytes(m, k));
  copy_to_host(q.data(), dq.data(), q.size());
  std::vector<float> d(size_t(m * k / 32));
  std::memcpy(d.data(), q.data() + quantized_x_offset(m, k), d.size() * 4);
  size_t bad = 0;
  for (size_t b = 0; b < d.size(); ++b) {
    float amax = 0;
    for (int i = 0; i < 32; ++i) amax = std::max(amax, std::fabs(x[b * 32 + i]));
    const qdot::XScale sc = qdot::x_scale(amax);
    bad += std::memcmp(&sc.d, &d[b], 4) != 0;
    for (int i = 0; i < 32; ++i) bad += q[b * 32 + i] != qdot::x_round(x[b * 32 + i], sc.id);
  }
  EXPECT_EQ(bad, 0u) << "device activation quantization differs from qdot.cuh's host result";
}

TEST(CudaMatmul, GemvMatchesReference) {
  OXYD_REQUIRE_CUDA();
  Stream stream;
  Workspace ws;
  struct Case {
    int64_t m, n, k;
  };
  // n not a multiple of the 4 / 8 rows a gemv block owns, k not a multiple of the 1024 elements
  // a block's 128 threads take per step, Q6_K super-blocks at every even offset mod 8 (k=1536).
  const Case cases[] = {{1, 256, 2048}, {2, 67, 512}, {3, 33, 256}, {4, 128, 4096},
                        {5, 1, 768},    {8, 200, 1024}, {7, 5, 256}, {1, 131, 1536},
                        {6, 9, 1536}};
  for (DType t : kWeightTypes) {
    for (const Case& c : cases) {
      const std::string what = "gemv " + name_of(t) + " m=" + std::to_string(c.m) +
                               " n=" + std::to_string(c.n) + " k=" + std::to_string(c.k);
      const std::vector<uint8_t> w = make_weight(t, c.n, c.k, uint32_t(c.n * 3 + c.k));
      const std::vector<float> wf = dequantized(t, w, c.n, c.k);
      const std::vector<float> x0 = random_floats(size_t(c.m * c.k), uint32_t(c.m + c.k), -2, 2);
      // The integer formats multiply x quantized to int8 (qdot.cuh): the oracle takes that x̂.
      std::vector<float> x = qdot::dispatch(t, [](auto) {}) ? quantized_x(x0) : x0;
      std::vector<float> want(size_t(c.m * c.n));
      std::vector<uint8_t> w_host = w;
      reference::matmul(Tensor(DType::F32, x.data(), {c.m, c.k}),
                        Tensor(t, w_host.data(), {c.n, c.k}),
                        Tensor(DType::F32, want.data(), {c.m, c.n}));
      DeviceBuffer dw = upload_bytes(w), dx = upload(DType::F32, x0), dy(size_t(c.m * c.n) * 4);
      gemv(dx.view(DType::F32, {c.m, c.k}), Tensor(t, dw.data(), {c.n, c.k}, Device::CUDA),
           dy.view(DType::F32, {c.m, c.n}), ws, stream);
      stream.synchronize();
      expect_matmul_close(download(DType::F32, dy.data(), want.size()), want, x, wf, c.m, c.n, c.k,
                          1e-5, what);
    }
  }
}

// cuBLAS is loaded at its first use, not linked (gemm.cu). Every machine that builds these tests
// has the toolkit, so there it must load, GPU or not.
TEST(CudaMatmul, CublasLoadsWithoutAGpu) {
  const std::string why = Gemm::unavailable_reason();
  if (why == Gemm::kNotBuilt) GTEST_SKIP() << why;
  EXPECT_TRUE(Gemm::available()) << why;
}

TEST(CudaMatmul, CublasGemmMatchesReference) {
  OXYD_REQUIRE_CUDA();
  if (!Gemm::available()) GTEST_SKIP() << Gemm::unavailable_reason();
  Gemm g;
  Stream stream;
  struct Case {
    int64_t m, n, k;
  };
  const Case cases[] = {{1, 64, 256}, {16, 96, 512}, {37, 130, 1000}, {128, 256, 2048}};
  for (DType t : {DType::F16, DType::BF16}) {
    for (DType yt : {DType::F32, t}) {
      for (const Case& c : cases) {
        const std::string what = "gemm " + name_of(t) + "→" + name_of(yt) + " m=" +
                                 std::to_string(c.m) + " n=" + std::to_string(c.n) +
                                 " k=" + std::to_string(c.k);
        std::vector<float> x = random_floats(size_t(c.m * c.k), uint32_t(c.m * 5 + c.k));
        std::vector<float> w = random_floats(size_t(c.n * c.k), uint32_t(c.n * 11 + c.k));
        round_to(t, x);
        round_to(t, w);
        std::vector<float> want(size_t(c.m * c.n));
        reference::matmul(Tensor(DType::F32, x.data(), {c.m, c.k}),
                          Tensor(DType::F32, w.data(), {c.n, c.k}),
                          Tensor(DType::F32, want.data(), {c.m, c.n}));
        DeviceBuffer dx = upload(t, x), dw = upload(t, w), dy(size_t(c.m * c.n) * 4);
        g.gemm(dx.view(t, {c.m, c.k}), dw.view(t, {c.n, c.k}), dy.view(yt, {c.m, c.n}), stream);
        stream.synchronize();
        std::vector<float> got = download(yt, dy.data(), want.size());
        if (yt == DType::F32) {
          expect_matmul_close(got, want, x, w, c.m, c.n, c.k, 1e-5, what);
        } else {  // the F32 result rounded once more to the 16-bit output
          std::vector<float> want_t = want;
          round_to(yt, want_t);
          Tolerance tol = tolerance_for(yt);
          tol.abs = 1e-3;
          expect_close(got, want_t, tol, what);
        }
      }
    }
  }
}

TEST(CudaMatmul, BatchedMatmulMatchesReference) {
  OXYD_REQUIRE_CUDA();
  if (!Gemm::available()) GTEST_SKIP() << Gemm::unavailable_reason();
  Gemm g;
  g.set_chunk_bytes(64 * 1024);  // several dequantized chunks per weight
  Stream stream;
  struct Case {
    int64_t m, n, k;
  };
  // 9 rows: the integer gemv 8 rows at a time; 33, 64, 100 and 20: qgemm (K split over CTAs,
  // two row tiles, a K step past k's end); 300: dequantize + cuBLAS. F16/BF16: cuBLAS throughout.
  const Case cases[] = {{9, 100, 512}, {33, 257, 1024}, {64, 64, 256}, {100, 70, 768}, {20, 50, 96}, {300, 40, 512}};
  for (DType t : kWeightTypes) {
    for (const Case& c : cases) {
      if (c.k % dtype_block_elems(t) != 0) continue;
      const std::string what = "matmul " + name_of(t) + " m=" + std::to_string(c.m) +
                               " n=" + std::to_string(c.n) + " k=" + std::to_string(c.k);
      const std::vector<uint8_t> w = make_weight(t, c.n, c.k, uint32_t(c.n + c.k * 7));
      std::vector<float> x = random_floats(size_t(c.m * c.k), uint32_t(c.m * 13 + c.k), -2, 2);
      std::vector<float> xr = x, wf = dequantized(t, w, c.n, c.k);
      if (gemv_is_integer(t) && c.m <= kChunkedGemvRows) {
        xr = quantized_x(x);  // the integer gemv, 8 rows at a time: x quantized to int8
      } else {  // what the tensor cores see: x and the decoded weight in the 16-bit type
        const DType half = t == DType::F16 ? DType::F16 : DType::BF16;
        round_to(half, xr);
        round_to(half, wf);
      }
      std::vector<float> want(size_t(c.m * c.n));
      reference::matmul(Tensor(DType::F32, xr.data(), {c.m, c.k}),
                        Tensor(DType::F32, wf.data(), {c.n, c.k}),
                        Tensor(DType::F32, want.data(), {c.m, c.n}));
      DeviceBuffer dw = upload_bytes(w), dx = upload(DType::F32, x), dy(size_t(c.m * c.n) * 4);
      g.matmul(dx.view(DType::F32, {c.m, c.k}), Tensor(t, dw.data(), {c.n, c.k}, Device::CUDA),
               dy.view(DType::F32, {c.m, c.n}), stream);
      stream.synchronize();
      expect_matmul_close(download(DType::F32, dy.data(), want.size()), want, xr, wf, c.m, c.n,
                          c.k, 1e-5, what);
    }
  }
}

TEST(CudaMatmul, RejectsBadInput) {
  OXYD_REQUIRE_CUDA();
  Stream stream;
  Workspace ws;
  DeviceBuffer b(1 << 16);
  // k not a multiple of the Q4_K super-block.
  EXPECT_THROW(gemv(b.view(DType::F32, {1, 128}), Tensor(DType::Q4_K, b.data(), {4, 128}, Device::CUDA),
                    b.view(DType::F32, {1, 4}), ws, stream),
               Error);
  // Unsupported weight dtype.
  EXPECT_THROW(gemv(b.view(DType::F32, {1, 256}), Tensor(DType::Q2_K, b.data(), {4, 256}, Device::CUDA),
                    b.view(DType::F32, {1, 4}), ws, stream),
               Error);
  // Host memory.
  std::vector<float> host(256);
  EXPECT_THROW(gemv(Tensor(DType::F32, host.data(), {1, 256}), b.view(DType::F16, {4, 256}),
                    b.view(DType::F32, {1, 4}), ws, stream),
               Error);
}

}  // namespace
}  // namespace oxyd::backend::cuda
