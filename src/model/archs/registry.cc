// The family registry: one line per family below. A family is defined in archs/<family>.cc as
// `const Family& <family>()`; adding one is that file plus one X(<family>) line here
// (docs/adding-a-model.md). The order is the order of lookups and of the names in errors.
#include "model/archs/registry.h"

#include "core/error.h"

#define OXYD_FAMILIES(X) \
  X(llama)               \
  X(mistral)             \
  X(ministral3)          \
  X(qwen2)               \
  X(qwen3)               \
  X(qwen3_moe)           \
  X(qwen3_5)             \
  X(qwen3_5_moe)         \
  X(gemma)               \
  X(gemma2)              \
  X(gemma3)              \
  X(gemma4)              \
  X(phi3)                \
  X(granite)             \
  X(olmoe)               \
  X(gpt_oss)             \
  X(bert)

namespace oxyd::model {
namespace archs {
#define OXYD_DECLARE_FAMILY(f) const Family& f();
OXYD_FAMILIES(OXYD_DECLARE_FAMILY)
#undef OXYD_DECLARE_FAMILY
}  // namespace archs

const std::vector<const Family*>& families() {
#define OXYD_LIST_FAMILY(f) &archs::f(),
  static const std::vector<const Family*> all{OXYD_FAMILIES(OXYD_LIST_FAMILY)};
#undef OXYD_LIST_FAMILY
  return all;
}

const Family* find_family(std::string_view name) {
  for (const Family* f : families())
    if (f->name() == name) return f;
  return nullptr;
}

const ArchSpec& arch_spec(std::string_view family) {
  const Family* f = find_family(family);
  if (f && f->runnable) return f->arch;
  std::string names;
  for (const std::string& n : registered_families()) names += (names.empty() ? "" : ", ") + n;
  throw Error(ErrorCode::UNSUPPORTED,
              "model family '" + std::string(family) + "' is not supported (supported: " + names + ")");
}

std::vector<std::string> registered_families() {
  std::vector<std::string> out;
  for (const Family* f : families())
    if (f->runnable) out.push_back(f->name());
  return out;
}

const loader::ConfigFamilies& config_families() {
  static const loader::ConfigFamilies all = [] {
    loader::ConfigFamilies out;
    for (const Family* f : families()) out.push_back(&f->config);
    return out;
  }();
  return all;
}

}  // namespace oxyd::model
