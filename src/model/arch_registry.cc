// Family registry: one line per family. Families named by the loader but absent here (MoE,
// gpt-oss, Qwen3.5, Gemma 4, BERT) are reported as unsupported until their issues add them.
#include "model/arch_registry.h"

#include "core/error.h"
#include "model/archs/archs.h"

namespace oxyd::model {
namespace {

struct Entry {
  const char* family;
  const ArchSpec& (*spec)();
};

constexpr Entry kFamilies[] = {
    {"llama", archs::llama},   {"mistral", archs::mistral}, {"qwen2", archs::qwen2},
    {"qwen3", archs::qwen3},   {"gemma", archs::gemma},     {"gemma2", archs::gemma2},
    {"gemma3", archs::gemma3}, {"phi3", archs::phi3},       {"granite", archs::granite},
};

}  // namespace

const ArchSpec& arch_spec(std::string_view family) {
  for (const auto& e : kFamilies)
    if (family == e.family) return e.spec();
  std::string names;
  for (const auto& e : kFamilies) names += std::string(names.empty() ? "" : ", ") + e.family;
  throw Error(ErrorCode::UNSUPPORTED,
              "model family '" + std::string(family) + "' is not supported (supported: " + names + ")");
}

std::vector<std::string> registered_families() {
  std::vector<std::string> out;
  for (const auto& e : kFamilies) out.emplace_back(e.family);
  return out;
}

}  // namespace oxyd::model
