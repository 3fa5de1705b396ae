// Family: everything the code base knows about one model family, declared in one file
// model/archs/<family>.cc and listed by one line of model/archs/registry.cc: its Hugging Face
// model_type / architectures names and GGUF arch strings, how its config keys map to ModelConfig
// (loader::ConfigFamily: defaults plus hooks for the odd keys), its tensor names and flags
// (ArchSpec), and whether the engine runs it. Code outside model/archs/ never names a family.
#pragma once

#include <string>

#include "loader/config_family.h"
#include "model/arch.h"

namespace oxyd::model {

struct Family {
  /// Names in each format and the config mapping; config.name is the family's name.
  loader::ConfigFamily config;
  /// Whether model::Transformer runs it. A recognised family that is not runnable reads its
  /// config (show, estimate) and is Error(UNSUPPORTED) on load.
  bool runnable = false;
  /// Tensor names and flags (meaningful when runnable); arch.family == config.name.
  ArchSpec arch;

  const std::string& name() const { return config.name; }
};

}  // namespace oxyd::model
