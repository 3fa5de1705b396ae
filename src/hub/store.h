// The local model store and the models it can see. Store layout (oxydLLM's):
// `<models_dir>/<namespace>/<repo>/` holding a repo's files as the hub names them; a GGUF file
// `Qwen3-4B-GGUF/qwen3-4b-q4_k_m.gguf` under `Qwen/` has id `Qwen/Qwen3-4B-Q4_K_M`, a
// safetensors dir has its dir id. Beyond oxydLLM, complete models in the Hugging Face cache
// (`models--ns--repo/snapshots/<rev>/`) are listed too, read-only and used in place.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace oxyd::hub {

enum class ModelFormat { GGUF, SAFETENSORS };
enum class ModelSource { STORE, HF_CACHE };

struct LocalModel {
  std::string id;       // "Qwen/Qwen3-4B-Q4_K_M" (canonical)
  std::string alt_id;   // also accepted: namespace + raw file stem ("Qwen/qwen3-4b-q4_k_m")
  std::string repo_id;  // the directory's id, "Qwen/Qwen3-4B-GGUF"
  ModelFormat format = ModelFormat::GGUF;
  ModelSource source = ModelSource::STORE;
  std::string quant;              // "Q4_K_M", "BF16", "safetensors"
  std::string dir;                // model directory (as found, not resolved)
  std::vector<std::string> weight_files;  // absolute: GGUF shards in order, or safetensors files
  std::vector<std::string> aux_files;     // config/tokenizer/template files (safetensors models)
  int64_t size_bytes = 0;         // sum over weight + aux files
  std::string revision;           // HF cache: the snapshot's commit
};

/// $HOME/.oxydllm/models (the CLI applies --models-dir and OXYDLLM_MODELS_DIR first).
std::string default_models_dir();
/// HF_HUB_CACHE, else HUGGINGFACE_HUB_CACHE, else $HF_HOME/hub, else $XDG_CACHE_HOME/huggingface/hub,
/// else ~/.cache/huggingface/hub.
std::string hf_hub_cache_dir();

/// oxydLLM's canonical GGUF id (without namespace): strip -GGUF/_GGUF from the dir name; if the
/// stem starts with that base (case-insensitively), base + the rest of the stem upper-cased.
std::string canonical_gguf_name(const std::string& dir_name, const std::string& stem);

/// Rejects ids that could name a path outside the store: empty parts, ".", "..", absolute
/// paths, backslashes, NULs, more than one '/'. Throws Error(INVALID_ARGUMENT).
void check_model_id(const std::string& id);

/// Models in a store root (oxydLLM discovery: a subdir with weights is a model, otherwise a
/// namespace scanned one level deeper). Partial downloads (*.part, missing shards) are skipped.
std::vector<LocalModel> discover_store(const std::string& models_dir);
/// Complete models in a Hugging Face hub cache directory.
std::vector<LocalModel> discover_hf_cache(const std::string& hub_cache);
/// Store models, then HF-cache models whose id the store does not already have.
std::vector<LocalModel> discover_all(const std::string& models_dir, const std::string& hub_cache);
/// Models found in one directory (`name` = its id, e.g. "Qwen/Qwen3-4B-GGUF").
std::vector<LocalModel> scan_model_dir(const std::string& dir, const std::string& name, ModelSource source);

/// Finds a model by id: exact id or alt id (case-insensitive); else the repo id when it has one
/// model; with allow_prefix, else the shortest id that is a prefix of it or it of. Throws
/// Error(NOT_FOUND) listing near ids, or Error(INVALID_ARGUMENT) when ambiguous.
const LocalModel& resolve_model(const std::vector<LocalModel>& models, const std::string& id,
                                bool allow_prefix);

std::string format_name(ModelFormat f);
std::string source_name(ModelSource s);

}  // namespace oxyd::hub
