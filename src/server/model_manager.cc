// ModelManager (see model_manager.h). Entries stay in the map once known (their state says
// whether they are loaded), so /v1/models can show them and a later request reloads them.
#include "server/model_manager.h"

#include <algorithm>
#include <cstdio>
#include <chrono>
#include <filesystem>

#include "core/error.h"
#include "hub/model_arch.h"
#include "hub/store.h"
#include "server/http_framing.h"
#include "server/protocol.h"

namespace oxyd::server {

namespace fs = std::filesystem;
using json = nlohmann::ordered_json;

namespace {

int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

int64_t unix_now() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

int64_t created_of(const std::string& path) {
  std::error_code ec;
  auto t = fs::last_write_time(path, ec);
  if (ec) return unix_now();
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::file_clock::to_sys(t).time_since_epoch()).count();
}

std::string owner_of(const std::string& id) {
  auto slash = id.find('/');
  if (slash == std::string::npos || fs::exists(id)) return "local";
  return id.substr(0, slash);
}

// The store's models; an unreadable or missing store lists as empty (paths and loaded models
// still serve).
std::vector<hub::LocalModel> discover(const ModelManagerOptions& o) {
  try {
    return o.hf_cache_dir.empty() ? hub::discover_store(o.models_dir) : hub::discover_all(o.models_dir, o.hf_cache_dir);
  } catch (const std::exception&) {
    return {};
  }
}

std::string path_of(const hub::LocalModel& m) {
  return m.format == hub::ModelFormat::GGUF && !m.weight_files.empty() ? m.weight_files.front() : m.dir;
}

json store_json(const hub::LocalModel& m) {
  json j = {{"id", m.id}, {"object", "model"}, {"created", created_of(m.dir)}, {"owned_by", owner_of(m.id)}};
  try {
    j["architecture"] = hub::model_architecture(m);
  } catch (const std::exception&) {
    j["architecture"] = nullptr;
  }
  j["format"] = hub::format_name(m.format);
  j["quantization"] = m.quant;
  j["size_bytes"] = m.size_bytes;
  j["source"] = hub::source_name(m.source);
  j["loaded"] = false;
  return j;
}

}  // namespace

// ---- ModelLease ----------------------------------------------------------------------------

ModelLease::ModelLease(ModelLease&& o) noexcept : mgr_(o.mgr_), id_(std::move(o.id_)), model_(std::move(o.model_)) {
  o.mgr_ = nullptr;
}

ModelLease& ModelLease::operator=(ModelLease&& o) noexcept {
  if (this != &o) {
    release();
    mgr_ = o.mgr_;
    id_ = std::move(o.id_);
    model_ = std::move(o.model_);
    o.mgr_ = nullptr;
  }
  return *this;
}

ModelLease::~ModelLease() { release(); }

void ModelLease::release() {
  if (mgr_) mgr_->release(id_);
  mgr_ = nullptr;
  model_.reset();
}

// ---- ModelManager --------------------------------------------------------------------------

ModelManager::ModelManager(ModelManagerOptions opts) : opts_(std::move(opts)) {
  opts_.max_loaded_models = std::max(1, opts_.max_loaded_models);
  reaper_ = std::thread([this] { reaper(); });
}

ModelManager::~ModelManager() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  reaper_.join();
}

ModelManager::Entry* ModelManager::find_entry_locked(const std::string& id) {
  auto it = entries_.find(id);
  if (it != entries_.end()) return it->second.get();
  auto a = aliases_.find(id);
  if (a != aliases_.end()) return entries_.at(a->second).get();
  return nullptr;
}

ModelManager::Resolved ModelManager::resolve(const std::string& id) const {
  try {
    hub::check_model_id(id);
  } catch (const Error&) {
    throw protocol::ApiError(404, "invalid_request_error", "The model '" + http::escape_controls(id) + "' does not exist", "model",
                             "model_not_found");
  }
  auto models = discover(opts_);
  const hub::LocalModel* m = nullptr;
  try {
    m = &hub::resolve_model(models, id, /*allow_prefix=*/false);
  } catch (const Error& e) {
    if (e.code() == ErrorCode::NOT_FOUND)
      throw protocol::ApiError(404, "invalid_request_error", "The model '" + http::escape_controls(id) + "' does not exist: " + e.what(),
                               "model", "model_not_found");
    throw protocol::ApiError(400, "invalid_request_error", e.what(), "model");
  }
  return {m->id, path_of(*m), owner_of(m->id), hub::format_name(m->format), m->quant, m->size_bytes};
}

std::string ModelManager::preload(const std::string& id_or_path) {
  Resolved r;
  if (fs::exists(id_or_path)) {
    r.id = id_or_path;
    r.path = id_or_path;
    r.owned_by = "local";
    r.format = fs::is_directory(id_or_path) ? "safetensors" : "gguf";
    // Served under its store id too when the file is one of the store's models.
    std::error_code ec;
    const fs::path want = fs::weakly_canonical(id_or_path, ec);
    for (const auto& m : discover(opts_)) {
      if (fs::weakly_canonical(path_of(m), ec) != want) continue;
      r = {m.id, path_of(m), owner_of(m.id), hub::format_name(m.format), m.quant, m.size_bytes};
      break;
    }
  } else {
    try {
      r = resolve(id_or_path);
    } catch (const protocol::ApiError& e) {
      throw_error(ErrorCode::NOT_FOUND, "--model " + id_or_path + ": no such file, and " + e.what() + " in " +
                                            opts_.models_dir);
    }
  }
  std::unique_lock lock(mu_);
  auto& slot = entries_[r.id];
  if (!slot) {
    slot = std::make_shared<Entry>();
    slot->id = r.id;
    slot->path = r.path;
    slot->owned_by = r.owned_by;
    slot->format = r.format;
    slot->quant = r.quant;
    slot->size_bytes = r.size_bytes;
    slot->created = unix_now();
  }
  slot->pinned = true;
  if (id_or_path != r.id) aliases_[id_or_path] = r.id;
  std::shared_ptr<Entry> e = slot;
  while (e->state != State::LOADED) {
    if (e->state == State::LOADING) cv_.wait(lock, [&] { return e->state != State::LOADING; });
    else load_entry(lock, *e);
  }
  return r.id;
}

std::shared_ptr<ModelManager::Entry> ModelManager::entry_for(const std::string& id) {
  {
    std::lock_guard lock(mu_);
    if (Entry* p = find_entry_locked(id)) return entries_.at(p->id);
  }
  Resolved r = resolve(id);  // disk scan without the lock
  std::lock_guard lock(mu_);
  auto& slot = entries_[r.id];
  if (!slot) {
    slot = std::make_shared<Entry>();
    slot->id = r.id;
    slot->path = r.path;
    slot->owned_by = r.owned_by;
    slot->format = r.format;
    slot->quant = r.quant;
    slot->size_bytes = r.size_bytes;
    slot->created = created_of(r.path);
  }
  if (id != r.id) aliases_[id] = r.id;
  return slot;
}

ModelLease ModelManager::acquire(const std::string& id) {
  std::shared_ptr<Entry> e = entry_for(id);
  std::unique_lock lock(mu_);
  for (;;) {
    if (e->state == State::LOADED) {
      e->active++;
      e->last_used_ms = now_ms();
      ModelLease lease;
      lease.mgr_ = this;
      lease.id_ = e->id;
      lease.model_ = e->model;
      return lease;
    }
    if (e->state == State::LOADING) {
      const int64_t failures = e->failures;
      cv_.wait(lock, [&] { return e->state != State::LOADING; });
      if (e->state == State::UNLOADED && e->failures != failures && e->error) std::rethrow_exception(e->error);
      continue;
    }
    load_entry(lock, *e);
  }
}

void ModelManager::load_entry(std::unique_lock<std::mutex>& lock, Entry& e) {
  e.state = State::LOADING;
  const std::string id = e.id, path = e.path;
  lock.unlock();
  std::unique_ptr<engine::LLMEngine> m;
  std::exception_ptr failed;
  try {
    m = engine::LLMEngine::create(id, path, opts_.model);
  } catch (const Error& err) {
    // A model that cannot load is the server's problem, not the request's: 500 naming the file.
    failed = std::make_exception_ptr(protocol::ApiError(500, "server_error", "cannot load model '" + id + "' from " +
                                                                                 path + ": " + err.what(),
                                                        "model", "model_load_failed"));
  } catch (...) {
    failed = std::current_exception();
  }
  if (failed) {
    lock.lock();
    e.state = State::UNLOADED;
    e.error = failed;
    e.failures++;
    cv_.notify_all();
    std::rethrow_exception(failed);
  }
  if (m->generates())
    std::fprintf(stderr, "oxydllm: model %s: KV cache %s, %lld blocks x %d tokens (%lld bytes), context %d, max_num_seqs %d\n",
                 id.c_str(), std::string(kv_format_name(m->kv_format())).c_str(), (long long)m->num_kv_blocks(), opts_.model.block_size,
                 (long long)m->kv_cache_bytes(), m->max_context_len(), m->max_num_seqs());
  else
    std::fprintf(stderr, "oxydllm: model %s: %s model, no KV cache, inputs up to %lld tokens, %lld values per input\n",
                 id.c_str(), m->task().c_str(), (long long)m->max_input_tokens(), (long long)m->embedding_size());
  lock.lock();
  e.model = std::shared_ptr<engine::LLMEngine>(std::move(m));
  e.state = State::LOADED;
  e.error = nullptr;
  e.last_used_ms = now_ms();
  std::vector<std::shared_ptr<engine::LLMEngine>> dead;
  enforce_bounds_locked(&e, dead);
  cv_.notify_all();
  lock.unlock();
  dead.clear();  // engine threads join outside the lock
  lock.lock();
}

void ModelManager::enforce_bounds_locked(const Entry* keep, std::vector<std::shared_ptr<engine::LLMEngine>>& dead) {
  for (;;) {
    int32_t count = 0;
    int64_t bytes = 0;
    Entry* lru = nullptr;
    for (auto& [id, e] : entries_) {
      if (e->state != State::LOADED) continue;
      count++;
      bytes += e->model->weights_bytes() + e->model->kv_cache_bytes();
      if (e.get() == keep || e->pinned || e->active > 0) continue;
      if (!lru || e->last_used_ms < lru->last_used_ms) lru = e.get();
    }
    const bool over = count > opts_.max_loaded_models || (opts_.memory_budget_bytes > 0 && bytes > opts_.memory_budget_bytes);
    if (!over || !lru) return;
    dead.push_back(std::move(lru->model));
    lru->state = State::UNLOADED;
  }
}

void ModelManager::release(const std::string& id) {
  std::lock_guard lock(mu_);
  auto it = entries_.find(id);
  if (it == entries_.end()) return;
  it->second->active--;
  it->second->last_used_ms = now_ms();
}

void ModelManager::reaper() {
  std::unique_lock lock(mu_);
  while (!stop_) {
    cv_.wait_for(lock, std::chrono::seconds(1));
    if (stop_) break;
    std::vector<std::shared_ptr<engine::LLMEngine>> dead;
    const int64_t now = now_ms();
    for (auto& [id, e] : entries_) {
      if (e->state != State::LOADED || e->pinned || e->active > 0 || opts_.keep_alive_s <= 0) continue;
      if (now - e->last_used_ms < opts_.keep_alive_s * 1000) continue;
      dead.push_back(std::move(e->model));
      e->state = State::UNLOADED;
    }
    enforce_bounds_locked(nullptr, dead);
    if (dead.empty()) continue;
    lock.unlock();
    dead.clear();
    lock.lock();
  }
}

json ModelManager::entry_json(const Entry& e) const {
  json j = {{"id", e.id}, {"object", "model"}, {"created", e.created}, {"owned_by", e.owned_by}};
  if (e.state == State::LOADED) {
    j["architecture"] = e.model->config().architecture;
    j["task"] = e.model->task();  // generate | embed | rank
    j["format"] = e.format;
    j["quantization"] = e.quant;
    j["size_bytes"] = e.size_bytes > 0 ? e.size_bytes : e.model->weights_bytes();
    j["loaded"] = true;
    j["max_context_len"] = e.model->max_context_len();
    j["weights_bytes"] = e.model->weights_bytes();
    j["kv_cache_bytes"] = e.model->kv_cache_bytes();
    j["kv_cache_format"] = std::string(kv_format_name(e.model->kv_format()));  // "BF16", "Q8", ...
    j["kv_quant"] = kv_quant_flag(e.model->kv_format());                       // "off", "lossless", ...
    if (const int64_t tokens = e.model->num_kv_blocks() * opts_.model.block_size; tokens > 0)
      j["kv_bytes_per_token"] = e.model->kv_cache_bytes() / tokens;  // K+V over all layers
    j["idle_seconds"] = e.active > 0 ? 0 : (now_ms() - e.last_used_ms) / 1000;
  } else {
    j["format"] = e.format;
    j["quantization"] = e.quant;
    j["size_bytes"] = e.size_bytes;
    j["loaded"] = false;
  }
  j["pinned"] = e.pinned;
  return j;
}

json ModelManager::list() {
  const std::vector<hub::LocalModel> store = discover(opts_);
  json data = json::array();
  std::lock_guard lock(mu_);
  for (const auto& [id, e] : entries_) data.push_back(entry_json(*e));
  for (const auto& m : store)
    if (!entries_.count(m.id)) data.push_back(store_json(m));
  return json{{"object", "list"}, {"data", std::move(data)}};
}

std::optional<json> ModelManager::find(const std::string& id) {
  {
    std::lock_guard lock(mu_);
    if (const Entry* e = find_entry_locked(id)) return entry_json(*e);
  }
  json all = list();
  for (const auto& m : all["data"])
    if (m["id"] == id) return m;
  try {
    Resolved r = resolve(id);  // alt ids, repo ids
    for (const auto& m : all["data"])
      if (m["id"] == r.id) return m;
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

std::string ModelManager::default_model() {
  std::lock_guard lock(mu_);
  std::string only;
  int32_t num_loaded = 0;
  for (const auto& [id, e] : entries_) {
    if (e->pinned) return id;
    if (e->state == State::LOADED) {
      only = id;
      num_loaded++;
    }
  }
  return num_loaded == 1 ? only : "";
}

std::vector<std::pair<std::string, std::shared_ptr<engine::LLMEngine>>> ModelManager::loaded() {
  std::lock_guard lock(mu_);
  std::vector<std::pair<std::string, std::shared_ptr<engine::LLMEngine>>> out;
  for (const auto& [id, e] : entries_)
    if (e->state == State::LOADED) out.emplace_back(id, e->model);
  return out;
}

}  // namespace oxyd::server
