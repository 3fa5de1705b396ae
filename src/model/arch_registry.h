// The list of model families (the only one in the code base): ModelConfig::family → ArchSpec.
// Adding a family = one archs/<family>.cc, one line in arch_registry.cc, one test line.
#pragma once

#include <string_view>
#include <vector>

#include "model/arch.h"

namespace oxyd::model {

/// The spec of `family`; Error(UNSUPPORTED) naming the family and the supported ones.
const ArchSpec& arch_spec(std::string_view family);

/// Every registered family name.
std::vector<std::string> registered_families();

}  // namespace oxyd::model
