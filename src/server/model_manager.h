// ModelManager: which models the server can serve and which are loaded. A request's model id is
// resolved as oxydLLM does (hub/store.h: canonical GGUF ids like Qwen/Qwen3-4B-Q4_K_M, alt ids,
// a repo id with one model), or is an id/path given to --model. Loading happens on first use;
// concurrent requests for a model wait on the same load; a failed load reaches every waiter and
// the next request retries. Bounds: --max-loaded-models (LRU among idle models) and
// --memory-budget (weights + KV bytes); --keep-alive unloads models idle that long (0 = never).
// Models given with --model are pinned (never unloaded). Thread-safe.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/llm_engine.h"

namespace oxyd::server {

struct ModelManagerOptions {
  std::string models_dir;           // the store root
  std::string hf_cache_dir;         // "" = do not list the Hugging Face cache
  engine::ModelOptions model;       // how every model is loaded
  int64_t keep_alive_s = 900;       // unload after this many idle seconds; 0 = never
  int32_t max_loaded_models = 2;    // >= 1
  int64_t memory_budget_bytes = 0;  // 0 = unlimited
};

class ModelManager;

/// A loaded model held by one request: the model stays loaded (not evicted, not idle) while held.
class ModelLease {
 public:
  ModelLease() = default;
  ModelLease(ModelLease&&) noexcept;
  ModelLease& operator=(ModelLease&&) noexcept;
  ~ModelLease();
  engine::LLMEngine& operator*() const { return *model_; }
  engine::LLMEngine* operator->() const { return model_.get(); }
  /// The id the model is served under (the store id when it has one).
  const std::string& id() const { return id_; }

 private:
  friend class ModelManager;
  void release();
  ModelManager* mgr_ = nullptr;
  std::string id_;
  std::shared_ptr<engine::LLMEngine> model_;
};

class ModelManager {
 public:
  explicit ModelManager(ModelManagerOptions opts);
  ~ModelManager();  // stops the idle reaper; loaded models are destroyed (in-flight ones aborted)

  /// Loads `id_or_path` now and pins it; it is served under that string and under its store id.
  /// Returns the served id. Throws oxyd::Error (NOT_FOUND, INVALID_ARGUMENT, ...).
  std::string preload(const std::string& id_or_path);
  /// The model for a request. Throws protocol::ApiError 404 model_not_found for an unknown id;
  /// oxyd::Error from a failed load.
  ModelLease acquire(const std::string& id);

  /// OpenAI model objects ({"id","object":"model","created","owned_by"} + extras): every store
  /// model and every known (preloaded or loaded) one. find() matches ids and aliases.
  nlohmann::ordered_json list();
  std::optional<nlohmann::ordered_json> find(const std::string& id);
  /// The model a request without "model" uses (tokenize, ...): the first --model, else the only
  /// loaded model; "" when there is none.
  std::string default_model();
  /// Loaded models, for metrics.
  std::vector<std::pair<std::string, std::shared_ptr<engine::LLMEngine>>> loaded();

 private:
  friend class ModelLease;
  enum class State { UNLOADED, LOADING, LOADED };
  struct Entry {
    std::string id, path, owned_by, format, quant;
    int64_t size_bytes = 0;
    int64_t created = 0;
    bool pinned = false;
    State state = State::UNLOADED;
    std::shared_ptr<engine::LLMEngine> model;
    int32_t active = 0;
    int64_t last_used_ms = 0;
    int64_t failures = 0;
    std::exception_ptr error;
  };
  struct Resolved {
    std::string id, path, owned_by, format, quant;
    int64_t size_bytes = 0;
  };
  Resolved resolve(const std::string& id) const;  // throws ApiError 404
  Entry* find_entry_locked(const std::string& id);
  std::shared_ptr<Entry> entry_for(const std::string& id);
  void load_entry(std::unique_lock<std::mutex>& lock, Entry& e);
  void enforce_bounds_locked(const Entry* keep, std::vector<std::shared_ptr<engine::LLMEngine>>& dead);
  void release(const std::string& id);
  void reaper();
  nlohmann::ordered_json entry_json(const Entry& e) const;

  ModelManagerOptions opts_;
  std::mutex mu_;
  std::condition_variable cv_;  // loads finishing, stop
  std::map<std::string, std::shared_ptr<Entry>> entries_;  // by served id
  std::map<std::string, std::string> aliases_;             // other accepted ids → served id
  bool stop_ = false;
  std::thread reaper_;
};

}  // namespace oxyd::server
