#include "hub/remove.h"

#include <algorithm>
#include <filesystem>
#include <set>

#include "core/error.h"
#include "hub/download.h"
#include "hub/registry.h"
#include "hub/variants.h"

namespace fs = std::filesystem;

namespace oxyd::hub {
namespace {

bool inside(const fs::path& child, const fs::path& root) {
  auto c = child.lexically_normal().generic_string();
  auto r = root.lexically_normal().generic_string();
  if (!r.empty() && r.back() == '/') r.pop_back();
  return c.size() > r.size() && c.compare(0, r.size(), r) == 0 && c[r.size()] == '/';
}

// The path itself may be a link (it is unlinked, not followed); its directory must really be in
// the store.
void check_in_store(const fs::path& p, const fs::path& root_real, const std::string& id) {
  std::error_code ec;
  fs::path parent_real = fs::canonical(p.parent_path(), ec);
  const std::string name = p.filename().string();
  if (ec || name.empty() || name == "." || name == ".." || !(inside(parent_real / name, root_real)))
    throw_error(ErrorCode::INVALID_ARGUMENT,
                "refusing to remove " + p.string() + " for '" + id + "': it resolves outside the store " +
                    root_real.string() + (ec ? "" : " (to " + (parent_real / name).string() + ")") +
                    "; nothing was removed");
}

}  // namespace

RemovePlan plan_remove(const LocalModel& m, const std::vector<LocalModel>& all, const std::string& models_dir) {
  if (m.source == ModelSource::HF_CACHE)
    throw_error(ErrorCode::INVALID_ARGUMENT,
                "'" + m.id + "' lives in the Hugging Face cache (" + m.dir +
                    "); oxydllm uses it read-only and does not delete it (use `hf cache delete`)");
  std::error_code ec;
  const fs::path root_real = fs::canonical(models_dir, ec);
  if (ec) throw_error(ErrorCode::NOT_FOUND, "models dir " + models_dir + " does not exist");
  RemovePlan plan;
  plan.model_id = m.id;
  const fs::path dir = m.dir;
  if (!inside(fs::absolute(dir), fs::absolute(models_dir)))
    throw_error(ErrorCode::INVALID_ARGUMENT, "refusing to remove '" + m.id + "': " + m.dir + " is not in the store");

  bool others = false;
  for (const auto& o : all)
    if (o.dir == m.dir && o.id != m.id) others = true;

  if (fs::is_symlink(dir)) {  // a linked model dir: remove the link, never what it points to
    if (others)
      throw_error(ErrorCode::INVALID_ARGUMENT,
                  "refusing to remove '" + m.id + "': " + m.dir + " is a symlink shared by other models; remove the link by hand");
    check_in_store(dir, root_real, m.id);
    plan.files.push_back(dir.string());
    plan.bytes = m.size_bytes;
  } else {
    std::set<fs::path> subdirs;
    for (const auto& f : m.weight_files) {
      check_in_store(f, root_real, m.id);
      plan.files.push_back(f);
      if (fs::path(f).parent_path() != dir) subdirs.insert(fs::path(f).parent_path());
    }
    plan.bytes = m.size_bytes;
    if (!others) {
      // Last model here: also its config/tokenizer files, leftovers of interrupted pulls, lock.
      for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        const std::string n = it->path().filename().string();
        const bool part = n.size() > 5 && n.compare(n.size() - 5, 5, kPartSuffix) == 0;
        if ((is_model_aux_file(n) || part || n == ".oxydllm.lock" || n == "gguf.index") &&
            std::find(plan.files.begin(), plan.files.end(), it->path().string()) == plan.files.end()) {
          check_in_store(it->path(), root_real, m.id);
          plan.files.push_back(it->path().string());
        }
      }
      std::vector<fs::path> sd(subdirs.begin(), subdirs.end());
      std::sort(sd.begin(), sd.end(), [](auto& a, auto& b) { return a.string().size() > b.string().size(); });
      for (const auto& s : sd) plan.dirs_if_empty.push_back(s.string());
    }
  }
  if (!others) {
    plan.dirs_if_empty.push_back(dir.string());
    fs::path ns = dir.parent_path();
    if (inside(fs::absolute(ns), fs::absolute(models_dir))) plan.dirs_if_empty.push_back(ns.string());
  }
  return plan;
}

void execute_remove(const RemovePlan& plan, const std::string& models_dir) {
  std::error_code ec;
  const fs::path root_real = fs::canonical(models_dir, ec);
  if (ec) throw_error(ErrorCode::NOT_FOUND, "models dir " + models_dir + " does not exist");
  for (const auto& f : plan.files) {
    check_in_store(f, root_real, plan.model_id);
    fs::remove(f, ec);  // unlinks a symlink itself
    if (ec) throw_error(ErrorCode::IO, "cannot remove " + f + ": " + ec.message());
  }
  for (const auto& d : plan.dirs_if_empty) {
    if (fs::is_symlink(d) || !fs::is_directory(d)) continue;
    check_in_store(d, root_real, plan.model_id);
    if (fs::is_empty(d, ec)) fs::remove(d, ec);
  }
  Registry reg(models_dir);
  if (reg.entries().erase(plan.model_id)) reg.save();
}

}  // namespace oxyd::hub
