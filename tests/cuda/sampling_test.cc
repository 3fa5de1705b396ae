// Device sampling against the CPU sampler's warpers (sample/warpers.cc: apply_top_k, apply_top_p,
// apply_min_p with Hugging Face's rules) followed by a float64 draw over the survivors in
// descending order (ties by id) with the same uniform u: the sampled ids must be identical, row
// for row, over vocabularies up to 151936, greedy and every warper alone and combined, and rows
// full of tied logits (top_k keeps ties; the draw walks a tie run by ascending id). Also argmax
// and log_softmax against float64 on the host.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "backend/cuda/sampling.h"
#include "cuda_test_util.h"
#include "sample/sampler.h"

namespace oxyd::backend::cuda {
namespace {

using namespace test;
// `sample` alone names the device function here; the CPU sampler is ::oxyd::sample.
namespace cpu_sample = ::oxyd::sample;
using cpu_sample::Candidate;

struct RowParams {
  float temperature;
  int32_t top_k;
  float top_p, min_p, u;
};

int32_t oracle(const float* x, int64_t n, const RowParams& p) {
  if (p.temperature < 1e-5f) return int32_t(std::max_element(x, x + n) - x);
  std::vector<Candidate> c(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) c[size_t(i)] = {int32_t(i), x[i] / p.temperature};
  if (p.top_k > 0) cpu_sample::apply_top_k(c, p.top_k);
  else cpu_sample::sort_candidates(c);
  cpu_sample::apply_top_p(c, p.top_p);
  cpu_sample::apply_min_p(c, p.min_p);
  cpu_sample::sort_candidates(c);
  double m = c[0].logit, z = 0;
  for (const Candidate& e : c) z += std::exp(double(e.logit) - m);
  const double target = double(p.u) * z;
  double cum = 0;
  for (const Candidate& e : c) {
    cum += std::exp(double(e.logit) - m);
    if (target < cum) return e.id;
  }
  return c.back().id;
}

DeviceBuffer upload_i32(const std::vector<int32_t>& v) {
  DeviceBuffer b(v.size() * 4 + 4);
  copy_to_device(b.data(), v.data(), v.size() * 4);
  return b;
}

// Samples rows × params on the device and compares every id with the oracle.
void check_rows(const std::vector<float>& logits, int64_t n, const std::vector<RowParams>& params,
                const std::string& what) {
  const int64_t rows = int64_t(params.size());
  std::vector<float> t, tp, mp, u;
  std::vector<int32_t> tk;
  for (const RowParams& p : params) {
    t.push_back(p.temperature), tk.push_back(p.top_k), tp.push_back(p.top_p);
    mp.push_back(p.min_p), u.push_back(p.u);
  }
  DeviceBuffer dl = upload(DType::F32, logits), dt = upload(DType::F32, t), dk = upload_i32(tk);
  DeviceBuffer dp = upload(DType::F32, tp), dm = upload(DType::F32, mp), du = upload(DType::F32, u);
  DeviceBuffer dids(size_t(rows) * 4);
  Stream stream;
  sample(dl.view(DType::F32, {rows, n}), dt.view(DType::F32, {rows}), dk.view(DType::I32, {rows}),
         dp.view(DType::F32, {rows}), dm.view(DType::F32, {rows}), du.view(DType::F32, {rows}),
         dids.view(DType::I32, {rows}), stream);
  stream.synchronize();
  std::vector<int32_t> got(static_cast<size_t>(rows));
  copy_to_host(got.data(), dids.data(), got.size() * 4);
  for (int64_t r = 0; r < rows; ++r) {
    const RowParams& p = params[size_t(r)];
    const int32_t want = oracle(logits.data() + r * n, n, p);
    EXPECT_EQ(got[size_t(r)], want) << what << " row " << r << ": t=" << p.temperature
                                    << " top_k=" << p.top_k << " top_p=" << p.top_p
                                    << " min_p=" << p.min_p << " u=" << p.u;
  }
}

std::vector<RowParams> param_grid() {
  const RowParams bases[] = {
      {0.0f, 0, 1.0f, 0.0f, 0},     {1.0f, 0, 1.0f, 0.0f, 0},    {0.7f, 0, 1.0f, 0.0f, 0},
      {1.0f, 40, 1.0f, 0.0f, 0},    {1.0f, 1, 1.0f, 0.0f, 0},    {0.8f, 0, 0.9f, 0.0f, 0},
      {1.0f, 0, 0.0f, 0.0f, 0},     {1.3f, 0, 0.5f, 0.0f, 0},    {1.2f, 0, 1.0f, 0.05f, 0},
      {0.6f, 100, 0.8f, 0.02f, 0},  {1.0f, 300, 0.95f, 0.0f, 0}, {2.0f, 0, 1.0f, 0.3f, 0},
  };
  std::vector<RowParams> out;
  for (const RowParams& b : bases)
    for (float u : {0.0f, 0.123f, 0.5f, 0.8765f, 0.99999f}) {
      RowParams p = b;
      p.u = u;
      out.push_back(p);
    }
  return out;
}

TEST(CudaSampling, MatchesCpuWarpersAndDraw) {
  OXYD_REQUIRE_CUDA();
  const std::vector<RowParams> params = param_grid();
  for (int64_t n : {1000, 32000, 151936}) {
    std::mt19937 rng(static_cast<uint32_t>(n));
    std::normal_distribution<float> dist(0.0f, 3.0f);
    std::vector<float> logits(params.size() * size_t(n));
    for (float& f : logits) f = dist(rng);
    check_rows(logits, n, params, "vocab " + std::to_string(n));
  }
}

TEST(CudaSampling, TiedLogits) {
  OXYD_REQUIRE_CUDA();
  // Logits on a grid of 0.25 in [-4, 4]: hundreds of tokens share each value.
  const int64_t n = 50000;
  std::vector<RowParams> params;
  for (int32_t k : {0, 1, 50, 3000})
    for (float u : {0.0f, 0.3f, 0.61f, 0.97f}) params.push_back({1.0f, k, 1.0f, 0.0f, u});
  for (float u : {0.2f, 0.9f}) params.push_back({0.0f, 0, 1.0f, 0.0f, u});  // greedy: lowest id
  params.push_back({0.9f, 20, 1.0f, 0.1f, 0.45f});
  std::mt19937 rng(5);
  std::uniform_int_distribution<int> dist(-16, 16);
  std::vector<float> logits(params.size() * size_t(n));
  for (float& f : logits) f = 0.25f * float(dist(rng));
  check_rows(logits, n, params, "tied");
}

TEST(CudaSampling, ArgmaxAndLogSoftmax) {
  OXYD_REQUIRE_CUDA();
  const int64_t rows = 5, n = 151936;
  std::vector<float> x = random_floats(size_t(rows * n), 9, -20, 20);
  x[size_t(3 * n + 777)] = 25.0f, x[size_t(3 * n + 100000)] = 25.0f;  // tie: lowest id wins
  DeviceBuffer dx = upload(DType::F32, x), dids(rows * 4), dy(x.size() * 4);
  Stream stream;
  argmax(dx.view(DType::F32, {rows, n}), dids.view(DType::I32, {rows}), stream);
  log_softmax(dx.view(DType::F32, {rows, n}), dy.view(DType::F32, {rows, n}), stream);
  stream.synchronize();
  std::vector<int32_t> ids(rows);
  copy_to_host(ids.data(), dids.data(), rows * 4);
  std::vector<float> want(x.size());
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x.data() + r * n;
    EXPECT_EQ(ids[size_t(r)], int32_t(std::max_element(xr, xr + n) - xr)) << "row " << r;
    double m = xr[0], z = 0;
    for (int64_t i = 0; i < n; ++i) m = std::max(m, double(xr[i]));
    for (int64_t i = 0; i < n; ++i) z += std::exp(double(xr[i]) - m);
    for (int64_t i = 0; i < n; ++i) want[size_t(r * n + i)] = float(double(xr[i]) - m - std::log(z));
  }
  expect_close(download(DType::F32, dy.data(), x.size()), want, {2e-5, 1e-6}, "log_softmax");
}

}  // namespace
}  // namespace oxyd::backend::cuda
