// `rm` for the store, built so it cannot delete anything outside it: the target comes only from
// discovery (never from a user path), every file's real parent directory must lie inside the real
// store root, links are unlinked (never followed), and directories are removed only when empty.
// Models in the Hugging Face cache are refused (they belong to that cache).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "hub/store.h"

namespace oxyd::hub {

struct RemovePlan {
  std::string model_id;
  std::vector<std::string> files;          // unlinked in order
  std::vector<std::string> dirs_if_empty;  // rmdir'ed in order when empty
  int64_t bytes = 0;
};

/// What removing `m` deletes. `all` is every model discovered in the store (to keep files another
/// variant in the same directory still uses). Throws Error(INVALID_ARGUMENT) for HF-cache models
/// and for any path that resolves outside models_dir.
RemovePlan plan_remove(const LocalModel& m, const std::vector<LocalModel>& all, const std::string& models_dir);

/// Executes a plan (re-checking each path) and drops the model's registry entry.
void execute_remove(const RemovePlan& plan, const std::string& models_dir);

}  // namespace oxyd::hub
