#include "hub/registry.h"

#include <sys/stat.h>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "core/json_parse.h"

namespace fs = std::filesystem;

namespace oxyd::hub {

Registry::Registry(std::string models_dir) : models_dir_(std::move(models_dir)) {
  std::ifstream in(path());
  if (!in) return;
  try {
    auto j = read_json_file(path());
    for (const auto& [id, e] : j.at("models").items()) {
      RegistryEntry r;
      r.repo = e.value("repo", "");
      r.revision = e.value("revision", "");
      r.variant = e.value("variant", "");
      r.dir = e.value("dir", "");
      r.pulled_at = e.value("pulled_at", "");
      for (const auto& f : e.value("files", nlohmann::json::array()))
        r.files.push_back({f.at("path"), f.at("size"), f.value("sha256", ""), f.value("mtime_ns", int64_t(0))});
      entries_[id] = std::move(r);
    }
  } catch (const std::exception& e) {
    throw_error(ErrorCode::INVALID_ARGUMENT,
                path() + " is not a valid registry (" + e.what() + "); move it away and rerun");
  }
}

std::string Registry::path() const { return (fs::path(models_dir_) / ".oxydllm_registry.json").string(); }

void Registry::save() const {
  nlohmann::json models = nlohmann::json::object();
  for (const auto& [id, r] : entries_) {
    nlohmann::json files = nlohmann::json::array();
    for (const auto& f : r.files)
      files.push_back({{"path", f.path}, {"size", f.size}, {"sha256", f.sha256}, {"mtime_ns", f.mtime_ns}});
    models[id] = {{"repo", r.repo},   {"revision", r.revision},   {"variant", r.variant},
                  {"dir", r.dir},     {"pulled_at", r.pulled_at}, {"files", files}};
  }
  nlohmann::json j = {{"version", 1}, {"models", models}};
  fs::create_directories(models_dir_);
  const std::string tmp = path() + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << j.dump(2) << "\n";
    if (!out) throw_error(ErrorCode::IO, "cannot write " + tmp);
  }
  std::error_code ec;
  fs::rename(tmp, path(), ec);
  if (ec) throw_error(ErrorCode::IO, "cannot replace " + path() + ": " + ec.message());
}

const RegistryEntry* Registry::find(const std::string& id) const {
  auto it = entries_.find(id);
  return it == entries_.end() ? nullptr : &it->second;
}

int64_t Registry::mtime_ns(const std::string& p) {
  struct stat st {};
  if (::stat(p.c_str(), &st) != 0) return -1;
  return int64_t(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
}

bool Registry::is_verified(const std::string& abs_path, int64_t size, const std::string& sha256) const {
  std::error_code ec;
  auto rel = fs::relative(abs_path, models_dir_, ec);
  if (ec) return false;
  int64_t mt = mtime_ns(abs_path);
  auto on_disk = int64_t(fs::file_size(abs_path, ec));
  if (ec || on_disk != size) return false;
  for (const auto& [id, r] : entries_)
    for (const auto& f : r.files)
      if ((fs::path(r.dir) / f.path) == rel && f.size == size && f.sha256 == sha256 && f.mtime_ns == mt)
        return true;
  return false;
}

}  // namespace oxyd::hub
