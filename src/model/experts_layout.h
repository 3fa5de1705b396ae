// Fused expert tensors of a Hugging Face checkpoint in the input-major, gate/up-interleaved layout
// (ArchSpec::hf_experts_input_major; gpt-oss), rewritten at load into the layout the MoE layer
// binds: a stacked [E, 2·I, H] gate_up (per expert: I gate rows, then I up rows) and [E, H, I] down.
// Dequantized checkpoints: gate_up [E, H, 2I] (gate = even columns, up = odd), down [E, I, H].
// MXFP4 checkpoints (ARCHITECTURES §5.4): *_blocks U8 [E, rows, cols/32, 16] + *_scales U8
// [E, rows, cols/32], already output-major; gate_up rows interleaved the same way.
#pragma once

#include <cstdint>

#include "core/tensor.h"

namespace oxyd::model {

/// gate_up [E, H, 2I] → out F32 [E, 2I, H] with [gate | up] rows per expert. Any dtype
/// dequantize_row reads (F32 / F16 / BF16).
void experts_gate_up_from_input_major(const Tensor& gate_up, float* out);
/// down [E, I, H] → out F32 [E, H, I].
void experts_down_from_input_major(const Tensor& down, float* out);
/// bias [E, 2I] interleaved → gate [E, I], up [E, I] (F32).
void experts_bias_split(const Tensor& bias, float* gate, float* up);
/// MXFP4 gate_up_proj_blocks [E, 2I, H/32, 16] + scales [E, 2I, H/32] → GGUF MXFP4 blocks
/// [E, 2I, H/32] with [gate | up] rows per expert (17 bytes a block).
void experts_gate_up_from_mxfp4(const Tensor& blocks, const Tensor& scales, void* out);
/// MXFP4 down_proj_blocks [E, H, I/32, 16] + scales → GGUF MXFP4 blocks [E, H, I/32].
void experts_down_from_mxfp4(const Tensor& blocks, const Tensor& scales, void* out);

}  // namespace oxyd::model
