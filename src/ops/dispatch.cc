// Backend lookup of the op front ends (see dispatch.h).
#include "ops/dispatch.h"

#include <string>

#include "backend/cpu/backend.h"
#include "ops/check.h"

namespace oxyd::ops {

backend::Backend& device_backend(Device d, std::string_view what) {
  backend::cpu::cpu_backend();  // registers the CPU backend on first use
  return backend::find_backend(d, what);
}

backend::Backend& backend_for(std::string_view op, std::initializer_list<const Tensor*> tensors) {
  return backend_for(op, std::span<const Tensor* const>(tensors.begin(), tensors.size()));
}

backend::Backend& backend_for(std::string_view op, std::span<const Tensor* const> tensors) {
  const Tensor* first = nullptr;
  for (const Tensor* t : tensors) {
    if (!t) continue;
    if (!first) first = t;
    else if (t->device != first->device)
      check::fail(op, "tensors are on different devices (" + std::string(backend::device_name(first->device)) +
                          " and " + std::string(backend::device_name(t->device)) + ")");
  }
  return device_backend(first ? first->device : Device::CPU, "ops::" + std::string(op));
}

}  // namespace oxyd::ops
