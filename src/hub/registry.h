// The store's registry, `<models_dir>/.oxydllm_registry.json` (oxydLLM's file name): for each
// pulled model its repo, pinned revision, variant and the verified files (size, sha256, mtime),
// so a re-pull can trust an unchanged verified file without hashing it again. Written atomically
// (temp file + rename). Discovery never depends on it: a store without it still lists.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace oxyd::hub {

struct RegistryFile {
  std::string path;    // relative to the model dir
  int64_t size = 0;
  std::string sha256;  // "" for plain git files
  int64_t mtime_ns = 0;
};

struct RegistryEntry {
  std::string repo, revision, variant, dir;  // dir relative to models_dir
  std::vector<RegistryFile> files;
  std::string pulled_at;                     // ISO 8601 UTC
};

class Registry {
 public:
  /// Loads `<models_dir>/.oxydllm_registry.json`; an absent file is an empty registry, an
  /// unreadable one is reported (Error(INVALID_ARGUMENT) naming the file).
  explicit Registry(std::string models_dir);
  void save() const;

  std::map<std::string, RegistryEntry>& entries() { return entries_; }
  const RegistryEntry* find(const std::string& id) const;
  /// A file recorded as verified with this sha256 whose size and mtime are unchanged on disk.
  bool is_verified(const std::string& abs_path, int64_t size, const std::string& sha256) const;

  static int64_t mtime_ns(const std::string& path);  // -1 if missing
  std::string path() const;

 private:
  std::string models_dir_;
  std::map<std::string, RegistryEntry> entries_;
};

}  // namespace oxyd::hub
