#include "hub/store.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>

#include "core/error.h"
#include "core/json_parse.h"
#include "hub/download.h"
#include "hub/variants.h"

namespace fs = std::filesystem;

namespace oxyd::hub {
namespace {

std::string lower(std::string s) {
  for (char& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
  return s;
}
std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v && *v ? std::string(v) : std::string();
}
std::string home_dir() {
  std::string h = env("HOME");
  if (h.empty()) throw_error(ErrorCode::INVALID_ARGUMENT, "HOME is not set; pass --models-dir");
  return h;
}
bool ends_with(const std::string& s, const std::string& suf) {
  return s.size() >= suf.size() && s.compare(s.size() - suf.size(), suf.size(), suf) == 0;
}

// Regular files (symlinks followed) under dir, relative paths, hidden names and partial
// downloads skipped; at most `depth` directory levels.
void list_files(const fs::path& dir, const fs::path& rel, int depth, RepoInfo& out) {
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.empty() || name[0] == '.' || ends_with(name, kPartSuffix)) continue;
    std::error_code e2;
    if (it->is_directory(e2)) {
      if (depth > 0) list_files(it->path(), rel / name, depth - 1, out);
    } else if (it->is_regular_file(e2)) {
      RepoFile f;
      f.path = (rel / name).generic_string();
      f.size = int64_t(fs::file_size(it->path(), e2));
      if (!e2) out.files.push_back(std::move(f));
    }
  }
}

// For a safetensors variant: every shard the index names must be present.
bool safetensors_complete(const fs::path& dir, const Variant& v, std::string& why) {
  if (!fs::exists(dir / "config.json")) {
    why = "config.json missing";
    return false;
  }
  fs::path index = dir / "model.safetensors.index.json";
  if (!fs::exists(index)) return true;
  try {
    auto j = read_json_file(index.string());
    std::set<std::string> have;
    for (const auto& f : v.files) have.insert(f.path);
    for (const auto& [tensor, file] : j.at("weight_map").items())
      if (!have.count(file.get<std::string>())) {
        why = "shard " + file.get<std::string>() + " missing";
        return false;
      }
  } catch (const std::exception& e) {
    why = std::string("unreadable index: ") + e.what();
    return false;
  }
  return true;
}

}  // namespace

std::string default_models_dir() { return (fs::path(home_dir()) / ".oxydllm" / "models").string(); }

std::string hf_hub_cache_dir() {
  if (auto v = env("HF_HUB_CACHE"); !v.empty()) return v;
  if (auto v = env("HUGGINGFACE_HUB_CACHE"); !v.empty()) return v;
  if (auto v = env("HF_HOME"); !v.empty()) return (fs::path(v) / "hub").string();
  if (auto v = env("XDG_CACHE_HOME"); !v.empty()) return (fs::path(v) / "huggingface" / "hub").string();
  return (fs::path(home_dir()) / ".cache" / "huggingface" / "hub").string();
}

std::string canonical_gguf_name(const std::string& dir_name, const std::string& stem) {
  std::string base = dir_name;
  if (ends_with(lower(base), "-gguf") || ends_with(lower(base), "_gguf")) base.resize(base.size() - 5);
  if (!base.empty() && stem.size() >= base.size() && lower(stem.substr(0, base.size())) == lower(base)) {
    std::string rest = stem.substr(base.size());
    for (char& c : rest) c = char(std::toupper(static_cast<unsigned char>(c)));
    return base + rest;
  }
  return stem;
}

void check_model_id(const std::string& id) {
  auto fail = [&](const std::string& why) {
    throw_error(ErrorCode::INVALID_ARGUMENT,
                "'" + id + "' is not a model id (" + why + "); ids look like Qwen/Qwen3-4B-Q4_K_M, see `oxydllm list`");
  };
  if (id.empty()) fail("empty");
  if (id.find('\\') != std::string::npos || id.find('\0') != std::string::npos) fail("contains a backslash or NUL");
  if (id.front() == '/') fail("absolute path");
  if (std::count(id.begin(), id.end(), '/') > 1) fail("more than one '/'");
  size_t start = 0;
  while (start <= id.size()) {
    size_t end = id.find('/', start);
    std::string part = id.substr(start, end == std::string::npos ? std::string::npos : end - start);
    if (part.empty()) fail("empty path component");
    if (part == "." || part == "..") fail("'" + part + "' component");
    if (part.front() == '.') fail("hidden name");
    if (end == std::string::npos) break;
    start = end + 1;
  }
}

std::vector<LocalModel> scan_model_dir(const std::string& dir, const std::string& name, ModelSource source) {
  std::vector<LocalModel> out;
  RepoInfo info;
  list_files(dir, "", 3, info);
  const std::string dir_base = name.substr(name.rfind('/') == std::string::npos ? 0 : name.rfind('/') + 1);
  const std::string ns = name.rfind('/') == std::string::npos ? "" : name.substr(0, name.rfind('/') + 1);
  for (const Variant& v : list_variants(info)) {
    if (!v.problem.empty() && !(v.label == "safetensors" && v.problem == "config.json missing")) continue;
    LocalModel m;
    m.repo_id = name;
    m.source = source;
    m.dir = dir;
    m.quant = v.is_gguf ? v.label : "safetensors";
    if (v.is_gguf) {
      m.format = ModelFormat::GGUF;
      m.id = ns + canonical_gguf_name(dir_base, v.stem);
      m.alt_id = ns + v.stem;
      for (const auto& f : v.files) m.weight_files.push_back((fs::path(dir) / f.path).string());
    } else {
      std::string why;
      if (!safetensors_complete(dir, v, why)) continue;
      m.format = ModelFormat::SAFETENSORS;
      m.id = m.alt_id = name;
      for (const auto& f : v.files)
        (ends_with(lower(f.path), ".safetensors") ? m.weight_files : m.aux_files)
            .push_back((fs::path(dir) / f.path).string());
    }
    m.size_bytes = v.total_bytes;
    out.push_back(std::move(m));
  }
  return out;
}

std::vector<LocalModel> discover_store(const std::string& models_dir) {
  std::vector<LocalModel> out;
  std::error_code ec;
  if (!fs::is_directory(models_dir, ec)) return out;
  std::vector<fs::path> top;
  for (fs::directory_iterator it(models_dir, ec), end; !ec && it != end; it.increment(ec))
    if (it->path().filename().string()[0] != '.' && it->is_directory()) top.push_back(it->path());
  std::sort(top.begin(), top.end());
  for (const auto& d : top) {
    auto here = scan_model_dir(d.string(), d.filename().string(), ModelSource::STORE);
    bool has_weights_at_top = false;
    for (const auto& m : here)
      for (const auto& w : m.weight_files)
        if (fs::path(w).parent_path() == d) has_weights_at_top = true;
    if (has_weights_at_top) {  // a model directly under the root (oxydLLM allows it)
      out.insert(out.end(), here.begin(), here.end());
      continue;
    }
    std::vector<fs::path> subs;  // a namespace
    for (fs::directory_iterator it(d, ec), end; !ec && it != end; it.increment(ec))
      if (it->path().filename().string()[0] != '.' && it->is_directory()) subs.push_back(it->path());
    std::sort(subs.begin(), subs.end());
    for (const auto& s : subs) {
      auto ms = scan_model_dir(s.string(), d.filename().string() + "/" + s.filename().string(), ModelSource::STORE);
      out.insert(out.end(), ms.begin(), ms.end());
    }
  }
  return out;
}

std::vector<LocalModel> discover_hf_cache(const std::string& hub_cache) {
  std::vector<LocalModel> out;
  std::error_code ec;
  if (!fs::is_directory(hub_cache, ec)) return out;
  std::vector<fs::path> repos;
  for (fs::directory_iterator it(hub_cache, ec), end; !ec && it != end; it.increment(ec)) {
    std::string n = it->path().filename().string();
    if (n.rfind("models--", 0) == 0 && it->is_directory()) repos.push_back(it->path());
  }
  std::sort(repos.begin(), repos.end());
  for (const auto& r : repos) {
    std::string n = r.filename().string().substr(8);
    auto sep = n.find("--");
    if (sep == std::string::npos) continue;
    std::string repo = n.substr(0, sep) + "/" + n.substr(sep + 2);
    // The snapshot refs/main points at; else the most recently modified one.
    fs::path snap;
    std::ifstream ref(r / "refs" / "main");
    std::string rev;
    if (ref && std::getline(ref, rev) && !rev.empty() && fs::is_directory(r / "snapshots" / rev, ec)) {
      snap = r / "snapshots" / rev;
    } else {
      fs::file_time_type best{};
      for (fs::directory_iterator it(r / "snapshots", ec), end; !ec && it != end; it.increment(ec))
        if (it->is_directory() && (snap.empty() || it->last_write_time() > best)) {
          snap = it->path();
          best = it->last_write_time();
        }
    }
    if (snap.empty()) continue;
    for (auto& m : scan_model_dir(snap.string(), repo, ModelSource::HF_CACHE)) {
      m.revision = snap.filename().string();
      out.push_back(std::move(m));
    }
  }
  return out;
}

std::vector<LocalModel> discover_all(const std::string& models_dir, const std::string& hub_cache) {
  auto out = discover_store(models_dir);
  std::set<std::string> ids;
  for (const auto& m : out) ids.insert(lower(m.id));
  for (auto& m : discover_hf_cache(hub_cache))
    if (!ids.count(lower(m.id))) out.push_back(std::move(m));
  return out;
}

const LocalModel& resolve_model(const std::vector<LocalModel>& models, const std::string& id, bool allow_prefix) {
  const std::string want = lower(id);
  for (const auto& m : models)
    if (lower(m.id) == want) return m;
  for (const auto& m : models)
    if (lower(m.alt_id) == want) return m;
  std::vector<const LocalModel*> in_repo;
  for (const auto& m : models)
    if (lower(m.repo_id) == want) in_repo.push_back(&m);
  if (in_repo.size() == 1) return *in_repo[0];
  if (in_repo.size() > 1) {
    std::string ids;
    for (const auto* m : in_repo) ids += "\n  " + m->id;
    throw_error(ErrorCode::INVALID_ARGUMENT, "'" + id + "' has " + std::to_string(in_repo.size()) +
                                                 " variants; name one of:" + ids);
  }
  if (allow_prefix) {
    const LocalModel* best = nullptr;
    for (const auto& m : models) {
      std::string l = lower(m.id);
      if ((l.rfind(want, 0) == 0 || want.rfind(l, 0) == 0) && (!best || m.id.size() < best->id.size())) best = &m;
    }
    if (best) return *best;
  }
  std::string msg = "no local model '" + id + "'";
  if (models.empty()) msg += " (no models found; get one with `oxydllm pull <namespace/repo>`)";
  else {
    msg += "; local models:";
    for (const auto& m : models) msg += "\n  " + m.id;
  }
  throw_error(ErrorCode::NOT_FOUND, msg);
}

std::string format_name(ModelFormat f) { return f == ModelFormat::GGUF ? "gguf" : "safetensors"; }
std::string source_name(ModelSource s) { return s == ModelSource::STORE ? "store" : "hf-cache"; }

}  // namespace oxyd::hub
