// libFuzzer target: the hub's model-info JSON (parse_repo_info) and everything pull derives from
// it without I/O: variant grouping, the default choice, and the safe-path check on every file
// name. Any input must give a result or throw oxyd::Error; a variant pull would write must never
// carry a path that escapes the store.
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/error.h"
#include "hub/pull.h"
#include "hub/variants.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    oxyd::hub::RepoInfo info =
        oxyd::hub::parse_repo_info(std::string(reinterpret_cast<const char*>(data), size), "fuzz");
    auto vs = oxyd::hub::list_variants(info);
    int d = oxyd::hub::default_variant(vs);
    if (d >= int(vs.size()) || (d >= 0 && !vs[size_t(d)].problem.empty())) __builtin_trap();
    for (const auto& v : vs)
      for (const auto& f : v.files) {
        try {
          oxyd::hub::check_repo_file_path(f.path);
        } catch (const oxyd::Error&) {
          continue;
        }
        if (f.path.find("..") != std::string::npos && (f.path.find("/../") != std::string::npos ||
                                                       f.path.rfind("../", 0) == 0 || f.path == ".."))
          __builtin_trap();  // accepted a path with a ".." component
        if (!f.path.empty() && f.path[0] == '/') __builtin_trap();
      }
  } catch (const oxyd::Error&) {
  }
  return 0;
}
