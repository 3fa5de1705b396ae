// The CPU backend: backend::Backend forwarding to the backend::cpu functions (matmul.h,
// rms_norm.h, ...), host memory from core::Buffer, weights packed per matmul/pack.h.
#pragma once

#include "backend/backend.h"

namespace oxyd::backend::cpu {

/// The process's CPU backend, registered (register_backend) by the first call. ops/ calls this
/// before looking a backend up, so that a static library's unreferenced initializer is not needed.
Backend& cpu_backend();

}  // namespace oxyd::backend::cpu
