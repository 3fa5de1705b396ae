#include "hub/pull.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>

#include "core/error.h"
#include "core/json_parse.h"
#include "hub/download.h"
#include "hub/registry.h"
#include "hub/content_hash.h"
#include "hub/store.h"

namespace fs = std::filesystem;

namespace oxyd::hub {
namespace {

// Held for the whole pull; the kernel drops it when the process dies (even on SIGKILL).
class DirLock {
 public:
  explicit DirLock(const fs::path& dir) {
    std::string p = (dir / ".oxydllm.lock").string();
    fd_ = ::open(p.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0) throw_error(ErrorCode::IO, "cannot create " + p);
    if (::flock(fd_, LOCK_EX | LOCK_NB) != 0)
      throw_error(ErrorCode::IO, "another `oxydllm pull` is writing " + dir.string() + "; wait for it to finish");
  }
  ~DirLock() { ::close(fd_); }

 private:
  int fd_ = -1;
};

std::string now_iso8601() {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

// True when `p` holds exactly the hub's file: same size, and the same sha256 (LFS) or git blob
// id (plain files) when the hub gives one. HF-cache snapshots link to blobs named by their
// sha256 (LFS) or git blob id, which is checked without hashing.
bool matches(const fs::path& p, const RepoFile& f, const Registry* reg) {
  std::error_code ec;
  if (!fs::is_regular_file(p, ec)) return false;
  if (f.size >= 0 && int64_t(fs::file_size(p, ec)) != f.size) return false;
  if (f.sha256.empty()) {
    if (f.git_oid.empty()) return true;
    if (fs::is_symlink(p, ec) && fs::read_symlink(p, ec).filename() == f.git_oid) return true;
    return hash_file(p.string(), HashKind::GIT_BLOB_SHA1) == f.git_oid;
  }
  if (fs::is_symlink(p, ec) && fs::read_symlink(p, ec).filename() == f.sha256) return true;
  if (reg && reg->is_verified(p.string(), f.size, f.sha256)) return true;
  return sha256_file(p.string()) == f.sha256;
}

int choose_variant(const std::vector<Variant>& vs, const PullOptions& opts, const fs::path& dest,
                   std::istream& in, std::ostream& out) {
  if (!opts.variant.empty()) {
    int i = find_variant(vs, opts.variant);
    if (i < 0) {
      std::string names;
      for (const auto& v : vs) names += (names.empty() ? "" : ", ") + v.label;
      throw_error(ErrorCode::NOT_FOUND, "variant '" + opts.variant + "' is not in " + opts.repo + "; it has: " + names);
    }
    return i;
  }
  int def = default_variant(vs);
  if (def < 0) throw_error(ErrorCode::NOT_FOUND, opts.repo + " has no complete variant to pull");
  if (!opts.interactive || vs.size() == 1) {
    if (vs.size() > 1)
      out << "choosing " << vs[size_t(def)].label << " (the default; pass --variant to pick another)\n";
    return def;
  }
  std::vector<bool> present;
  for (const auto& v : vs) {
    bool all = true;
    for (const auto& f : v.files) all = all && fs::exists(dest / f.path);
    present.push_back(all);
  }
  out << variant_table(vs, def, present);
  for (;;) {
    out << "Choose a variant [" << def + 1 << "]: " << std::flush;
    std::string line;
    if (!std::getline(in, line)) throw_error(ErrorCode::INVALID_ARGUMENT, "no variant chosen (end of input)");
    if (line.empty()) return def;
    char* end = nullptr;
    long n = std::strtol(line.c_str(), &end, 10);
    if (end && *end == '\0' && n >= 1 && n <= long(vs.size()) && vs[size_t(n - 1)].problem.empty())
      return int(n - 1);
    int i = find_variant(vs, line);
    if (i >= 0 && vs[size_t(i)].problem.empty()) return i;
    out << "not a usable choice: " << line << "\n";
  }
}

// HF-cache snapshot of this repo holding every file of `v` (the listed commit's first).
std::string find_in_hf_cache(const PullOptions& opts, const RepoInfo& info, const Variant& v) {
  if (opts.hf_cache_dir.empty()) return {};
  std::string folder = "models--" + opts.repo.substr(0, opts.repo.find('/')) + "--" + opts.repo.substr(opts.repo.find('/') + 1);
  fs::path snaps = fs::path(opts.hf_cache_dir) / folder / "snapshots";
  std::error_code ec;
  if (!fs::is_directory(snaps, ec)) return {};
  std::vector<fs::path> cands;
  if (!info.sha.empty() && fs::is_directory(snaps / info.sha, ec)) cands.push_back(snaps / info.sha);
  for (fs::directory_iterator it(snaps, ec), end; !ec && it != end; it.increment(ec))
    if (it->path().filename() != info.sha) cands.push_back(it->path());
  for (const auto& s : cands) {
    bool all = true;
    for (const auto& f : v.files) all = all && matches(s / f.path, f, nullptr);
    if (all) return s.string();
  }
  return {};
}

}  // namespace

void check_repo_file_path(const std::string& path) {
  bool bad = path.empty() || path.front() == '/' || path.find('\\') != std::string::npos ||
             path.find('\0') != std::string::npos;
  for (size_t start = 0; !bad;) {
    size_t end = path.find('/', start);
    std::string part = path.substr(start, end == std::string::npos ? std::string::npos : end - start);
    if (part.empty() || part == "." || part == "..") bad = true;
    if (end == std::string::npos) break;
    start = end + 1;
  }
  if (bad)
    throw_error(ErrorCode::INVALID_ARGUMENT,
                "the hub listed a file named '" + path + "', which is not a safe relative path; refusing to write it");
}

std::string variant_table(const std::vector<Variant>& vs, int recommended, const std::vector<bool>& present) {
  std::ostringstream o;
  char line[256];
  std::snprintf(line, sizeof line, "  %3s  %-24s %10s  %5s\n", "#", "Format", "Size", "Files");
  o << line;
  for (size_t i = 0; i < vs.size(); ++i) {
    std::string mark = int(i) == recommended ? " ★ recommended" : "";
    if (i < present.size() && present[i]) mark += " ✓ in store";
    if (!vs[i].problem.empty()) mark += " (unusable: " + vs[i].problem + ")";
    std::snprintf(line, sizeof line, "  %3zu  %-24s %10s  %5zu%s\n", i + 1, vs[i].label.c_str(),
                  format_bytes(vs[i].total_bytes).c_str(), vs[i].files.size(), mark.c_str());
    o << line;
  }
  return o.str();
}

PullResult pull(HubClient& hub, const PullOptions& opts, Progress& progress, std::istream& in, std::ostream& out) {
  check_repo_id(opts.repo);
  const std::string dest_name = opts.name.empty() ? opts.repo : opts.name;
  check_model_id(dest_name);
  out << "listing " << opts.repo << " on " << hub.endpoint() << std::endl;  // before any wait
  RepoInfo info = hub.model_info(opts.repo, opts.revision);
  const std::string rev = !info.sha.empty() ? info.sha : (opts.revision.empty() ? "main" : opts.revision);
  std::vector<Variant> vs = list_variants(info);
  flag_unsupported_quants(vs);
  if (vs.empty())
    throw_error(ErrorCode::NOT_FOUND, opts.repo + " has no GGUF or safetensors weights (" +
                                          std::to_string(info.files.size()) + " files listed)");
  const fs::path dest = fs::path(opts.models_dir) / dest_name;
  Variant v = vs[size_t(choose_variant(vs, opts, dest, in, out))];
  if (!v.problem.empty()) throw_error(ErrorCode::INVALID_ARGUMENT, opts.repo + " variant " + v.label + " is unusable: " + v.problem);
  for (const auto& f : v.files) check_repo_file_path(f.path);

  PullResult result;
  if (!opts.force) {
    if (std::string snap = find_in_hf_cache(opts, info, v); !snap.empty()) {
      out << "found " << opts.repo << " " << v.label << " in the Hugging Face cache at " << snap
          << "; using it in place (nothing downloaded)\n";
      std::set<std::string> want;
      for (const auto& f : v.files) want.insert((fs::path(snap) / f.path).string());
      for (const auto& m : scan_model_dir(snap, opts.repo, ModelSource::HF_CACHE))
        if (!m.weight_files.empty() && want.count(m.weight_files.front())) result.ids.push_back(m.id);
      result.dir = snap;
      result.from_hf_cache = true;
      return result;
    }
  }

  fs::create_directories(dest);
  DirLock lock(dest);
  Registry reg(opts.models_dir);
  RegistryEntry entry;
  entry.repo = opts.repo;
  entry.revision = rev;
  entry.variant = v.label;
  entry.dir = dest_name;
  entry.pulled_at = now_iso8601();
  std::set<std::string> referenced;  // safetensors shards the index names
  bool have_index = false;
  for (const auto& f : v.files) {
    const bool is_st = f.path.size() > 12 && f.path.compare(f.path.size() - 12, 12, ".safetensors") == 0;
    if (is_st && have_index && !referenced.count(f.path)) continue;  // not part of the model
    const fs::path target = dest / f.path;
    fs::create_directories(target.parent_path());
    if (opts.force) {
      fs::remove(target);
      fs::remove(target.string() + kPartSuffix);
    }
    if (!(fs::exists(target) && matches(target, f, &reg))) {
      DownloadRequest req{hub.file_url(opts.repo, rev, f.path), target.string(), f.size, f.sha256, f.path, f.git_oid};
      auto on_fail = [&](const HttpResponse& r) {
        throw_http_error(r, opts.repo + "/" + f.path, hub.endpoint(), opts.repo, hub.has_token(), true);
      };
      result.bytes_downloaded += download_file(hub.http(), req, hub.retry(), &progress, on_fail).bytes_transferred;
    }
    entry.files.push_back({f.path, int64_t(fs::file_size(target)), f.sha256, Registry::mtime_ns(target.string())});
    if (f.path == "model.safetensors.index.json") {
      have_index = true;
      try {
        auto j = read_json_file(target.string());
        for (const auto& [t, file] : j.at("weight_map").items()) referenced.insert(file.get<std::string>());
      } catch (const std::exception& e) {
        throw_error(ErrorCode::INVALID_ARGUMENT, target.string() + ": not a valid safetensors index (" + e.what() + ")");
      }
      for (const auto& name : referenced)
        if (!v.find_file(name))
          throw_error(ErrorCode::INVALID_ARGUMENT, target.string() + " names shard " + name + ", which the repo does not have");
    }
  }
  result.dir = dest.string();
  std::set<std::string> want;
  for (const auto& f : v.files) want.insert((dest / f.path).string());
  for (const auto& m : scan_model_dir(dest.string(), dest_name, ModelSource::STORE))
    if (!m.weight_files.empty() && want.count(m.weight_files.front())) {
      result.ids.push_back(m.id);
      reg.entries()[m.id] = entry;
    }
  reg.save();
  return result;
}

}  // namespace oxyd::hub
