// `pull`: get one variant of a hub repo into the store. Lists the repo (pinned to the commit the
// listing names), picks the variant (--variant, an interactive table, or the default), uses the
// Hugging Face cache in place when it already holds the files, else downloads each needed file
// with resume + sha256 verification, and records the result in the registry.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "hub/hub_api.h"
#include "hub/progress.h"
#include "hub/variants.h"

namespace oxyd::hub {

struct PullOptions {
  std::string repo;          // "namespace/name"
  std::string models_dir;
  std::string name;          // destination folder under models_dir; "" = the repo id
  std::string variant;       // "" = choose
  std::string revision;      // "" = the default branch
  bool force = false;        // download again even when verified files are present
  bool interactive = false;  // ask with a numbered table (the CLI sets it on a terminal)
  std::string hf_cache_dir;  // "" = do not look in the Hugging Face cache
};

struct PullResult {
  std::vector<std::string> ids;  // local ids of the pulled model
  std::string dir;               // where its files are
  bool from_hf_cache = false;
  int64_t bytes_downloaded = 0;
};

/// Runs a pull; messages go to `out`, prompts read `in`. Throws oxyd::Error on failure.
PullResult pull(HubClient& hub, const PullOptions& opts, Progress& progress, std::istream& in, std::ostream& out);

/// The variant table `pull` shows (and `estimate` reuses): "#  Format  Size  Files", ★ marks
/// the recommended row, ✓ one already in the store.
std::string variant_table(const std::vector<Variant>& variants, int recommended,
                          const std::vector<bool>& present);

/// Rejects hub file paths that could escape the destination ("..", absolute, backslashes).
void check_repo_file_path(const std::string& path);

}  // namespace oxyd::hub
