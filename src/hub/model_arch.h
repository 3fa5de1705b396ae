// The architecture string of a local model, as `list` shows it: GGUF `general.architecture`, or
// config.json's `model_type` (from `text_config` for multimodal wrappers). Reads headers only.
#pragma once

#include <string>

#include "hub/store.h"

namespace oxyd::hub {

/// Throws oxyd::Error naming the file when the header or config cannot be read.
std::string model_architecture(const LocalModel& m);

}  // namespace oxyd::hub
