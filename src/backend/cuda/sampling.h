// Token sampling on the device, so only the sampled ids cross PCIe. One CTA per logits row.
// sample() follows sample/sampler.h's order and Hugging Face's rules on the warpers (penalties
// and logit bias are the host's job before this): temperature < 1e-5 is greedy (argmax, lowest
// id on ties); otherwise c = logit / temperature, top_k keeps every c ≥ the k-th largest (ties
// kept, as HF), top_p keeps the smallest prefix of the descending order whose mass before each
// kept token is < top_p (mass over the top_k survivors), min_p keeps exp(c − max) ≥ min_p, and the
// draw takes the first token of the descending order (ties by ascending id) whose cumulative mass
// exceeds u · (total mass), with the row's own uniform u in [0, 1). Each cut is found by a radix
// select over the order-preserving 32-bit keys of c (4 passes of 8 bits, mass histograms summed
// in float64), never by sorting the vocabulary. One deviation from the CPU sampler: a top_p cut
// that falls inside a run of exactly equal logits keeps the whole run.
#pragma once

#include "backend/cuda/device.h"
#include "core/tensor.h"

namespace oxyd::backend::cuda {

/// logits [rows, vocab] F32; temperature, top_p, min_p, uniform [rows] F32; top_k [rows] I32
/// (≤ 0: off); ids [rows] I32 (output). top_p ≥ 1 and min_p ≤ 0 are off.
void sample(const Tensor& logits, const Tensor& temperature, const Tensor& top_k,
            const Tensor& top_p, const Tensor& min_p, const Tensor& uniform, const Tensor& ids,
            const Stream& stream);

/// ids [rows] I32 = argmax of the first `cols` (0: all) of each logits row [rows, vocab] F32
/// (lowest id on ties; NaN never the largest; 0 for a row without a number).
void argmax(const Tensor& logits, const Tensor& ids, const Stream& stream, int64_t cols = 0);

/// y = x − max − log Σ exp(x − max) per row; x, y [rows, vocab] F32; y may alias x.
void log_softmax(const Tensor& x, const Tensor& y, const Stream& stream);

}  // namespace oxyd::backend::cuda
