// The family registry (registry.cc: one line per family, each defined in archs/<family>.cc).
// Every lookup by family name, HF model_type or GGUF arch string goes through here.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "loader/config_family.h"
#include "model/family.h"

namespace oxyd::model {

/// Every registered family, runnable or not, in registry order.
const std::vector<const Family*>& families();

/// The family named `name`; nullptr if none.
const Family* find_family(std::string_view name);

/// The spec of runnable `family`; Error(UNSUPPORTED) naming the family and the supported ones.
const ArchSpec& arch_spec(std::string_view family);

/// Every runnable family name, in registry order.
std::vector<std::string> registered_families();

/// The config side of every family, for the loader's readers.
const loader::ConfigFamilies& config_families();

}  // namespace oxyd::model
