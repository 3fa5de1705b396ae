// One accessor per family file in archs/ (each returns a static ArchSpec).
#pragma once

#include "model/arch.h"

namespace oxyd::model::archs {

const ArchSpec& llama();
const ArchSpec& mistral();
const ArchSpec& qwen2();
const ArchSpec& qwen3();
const ArchSpec& gemma();
const ArchSpec& gemma2();
const ArchSpec& gemma3();
const ArchSpec& phi3();
const ArchSpec& granite();

}  // namespace oxyd::model::archs
