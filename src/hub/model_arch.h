// The architecture string of a local model, as `list` shows it: GGUF `general.architecture`, or
// config.json's `model_type` (from `text_config` for multimodal wrappers). Reads headers only.
#pragma once

#include <string>

#include "hub/store.h"

namespace oxyd::hub {

/// Throws oxyd::Error naming the file when the header or config cannot be read.
std::string model_architecture(const LocalModel& m);

/// `list`'s FORMAT column: "GGUF Q4_K_M" (the quantization named from the tensors,
/// hub/quant_name.h, never from the file name) or "safetensors". Throws like model_architecture.
std::string model_format_label(const LocalModel& m);

}  // namespace oxyd::hub
