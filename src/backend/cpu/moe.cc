// CPU MoE routing / combine (see moe.h).
#include "backend/cpu/moe.h"

#include "backend/cpu/dispatch.h"
#include "backend/reference/moe.h"
#include "core/thread_pool.h"

namespace oxyd::backend::cpu {

void moe_route(const Tensor& logits, const RouterParams& p, const Tensor& ids, const Tensor& weights) {
  reference::moe_route(logits, p, ids, weights);
}

void moe_combine(const Tensor& expert_out, const Tensor& rows, const Tensor& weights, const Tensor& y) {
  const int64_t H = y.dim(1), k = rows.dim(1);
  const float* src = expert_out.ptr<float>();
  parallel_for(y.dim(0), row_grain(H * k), [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) {
      float* out = y.ptr<float>() + t * H;
      const int32_t* r = rows.ptr<int32_t>() + t * k;
      const float* w = weights.ptr<float>() + t * k;
      for (int64_t i = 0; i < H; ++i) out[i] = w[0] * src[int64_t(r[0]) * H + i];
      for (int64_t j = 1; j < k; ++j) {
        const float* e = src + int64_t(r[j]) * H;
        const float wj = w[j];
        for (int64_t i = 0; i < H; ++i) out[i] += wj * e[i];
      }
    }
  });
}

}  // namespace oxyd::backend::cpu
