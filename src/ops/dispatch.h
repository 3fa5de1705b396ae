// How ops/ reaches a backend (backend/backend.h): after validating its arguments once, an op
// checks that its tensors share one device and calls backend_for(op, tensors).<op>(...).
#pragma once

#include <initializer_list>
#include <span>
#include <string_view>

#include "backend/backend.h"
#include "core/tensor.h"

namespace oxyd::ops {

/// The backend of device d (the CPU one is always there). Throws Error(UNSUPPORTED)
/// "<what>: no backend registered for device <d>" for a device without one.
backend::Backend& device_backend(Device d, std::string_view what = "ops");

/// The backend of the tensors' device (null entries are skipped). Throws Error(INVALID_ARGUMENT)
/// "ops::<op>: tensors are on different devices (CPU and CUDA)" when they are not on one device,
/// Error(UNSUPPORTED) "ops::<op>: no backend registered for device <d>" when it has no backend.
backend::Backend& backend_for(std::string_view op, std::initializer_list<const Tensor*> tensors);
backend::Backend& backend_for(std::string_view op, std::span<const Tensor* const> tensors);

}  // namespace oxyd::ops
