// Pooling: token states of packed sequences → one vector per sequence, as sentence-transformers'
// models.Pooling computes it (mean over the sequence's tokens, its first token (CLS), or its last
// token) and models.Normalize (x / max(‖x‖₂, 1e-12)). Host memory, F32; no padding (the
// sequences are packed, so every row is a real token).
#pragma once

#include <cstdint>
#include <span>

namespace oxyd::model {

/// hidden [num_tokens, H] row-major; seq_start [num_seqs + 1]; out [num_seqs, H].
/// pooling_type: loader::POOLING_MEAN / POOLING_CLS / POOLING_LAST.
void pool_sequences(const float* hidden, int64_t H, std::span<const int32_t> seq_start, int pooling_type,
                    bool normalize, float* out);

/// x [n] /= max(‖x‖₂, 1e-12) (torch.nn.functional.normalize).
void l2_normalize(float* x, int64_t n);

}  // namespace oxyd::model
