// One check shared by the device tests: a model loaded for `device` against the same checkpoint on
// the CPU (the path tests/archs holds to the transformers goldens). Every golden prompt is run as
// one prefill on both and all its logits compared (max |Δ| ≤ tol · the CPU logits' range), then
// `greedy_n` greedy tokens from the first prompt must agree. tests/model/device_seam_test.cc runs
// it on a host-memory stand-in for a device, tests/cuda_model/ on a GPU.
#pragma once

#include <algorithm>
#include <cmath>
#include <string>

#include "archs_util.h"

namespace oxyd::model::test {

inline void expect_device_matches_cpu(const std::string& family, const std::string& file, Device device,
                                      double tol_of_range, int greedy_n) {
  const std::string path = arch_dir(family) + (file.empty() ? "" : "/" + file);
  const Golden g = load_golden(family);
  auto cpu = Transformer::load(path, Device::CPU);
  auto dev = Transformer::load(path, device);
  ASSERT_EQ(dev->device(), device);
  ASSERT_EQ(dev->weights().embed.device, device);
  for (size_t p = 0; p < g.prompts.size(); ++p) {
    const std::vector<float> a = prefill(*cpu, g.prompts[p]), b = prefill(*dev, g.prompts[p]);
    ASSERT_EQ(a.size(), b.size());
    const auto [lo, hi] = std::minmax_element(a.begin(), a.end());
    const double range = double(*hi) - double(*lo);
    double d = 0;
    for (size_t i = 0; i < a.size(); ++i) d = std::max(d, std::abs(double(a[i]) - double(b[i])));
    EXPECT_LE(d, tol_of_range * range) << family << " " << file << " prompt " << p << ": max |Δlogit| " << d
                                       << ", range " << range;
  }
  if (greedy_n > 0) {
    EXPECT_EQ(greedy(*dev, g.prompts[0], greedy_n), greedy(*cpu, g.prompts[0], greedy_n)) << family << " " << file;
  }
}

}  // namespace oxyd::model::test
