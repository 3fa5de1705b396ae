// Pooling (see pooling.h). Sums in double: a mean over hundreds of tokens stays exact to float.
#include "model/pooling.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/error.h"
#include "loader/sentence_transformers.h"

namespace oxyd::model {

void l2_normalize(float* x, int64_t n) {
  double ss = 0;
  for (int64_t i = 0; i < n; ++i) ss += double(x[i]) * x[i];
  const double inv = 1.0 / std::max(std::sqrt(ss), 1e-12);
  for (int64_t i = 0; i < n; ++i) x[i] = static_cast<float>(x[i] * inv);
}

void pool_sequences(const float* hidden, int64_t H, std::span<const int32_t> seq_start, int pooling_type,
                    bool normalize, float* out) {
  std::vector<double> acc(static_cast<size_t>(H));
  for (size_t s = 0; s + 1 < seq_start.size(); ++s) {
    const int64_t begin = seq_start[s], end = seq_start[s + 1];
    float* o = out + static_cast<int64_t>(s) * H;
    switch (pooling_type) {
      case loader::POOLING_MEAN: {
        std::fill(acc.begin(), acc.end(), 0.0);
        for (int64_t t = begin; t < end; ++t)
          for (int64_t i = 0; i < H; ++i) acc[i] += hidden[t * H + i];
        for (int64_t i = 0; i < H; ++i) o[i] = static_cast<float>(acc[i] / double(end - begin));
        break;
      }
      case loader::POOLING_CLS: std::copy(hidden + begin * H, hidden + (begin + 1) * H, o); break;
      case loader::POOLING_LAST: std::copy(hidden + (end - 1) * H, hidden + end * H, o); break;
      default:
        throw Error(ErrorCode::UNSUPPORTED, "pooling type " + std::to_string(pooling_type) +
                                                " is not supported (mean, cls and last are)");
    }
    if (normalize) l2_normalize(o, H);
  }
}

}  // namespace oxyd::model
