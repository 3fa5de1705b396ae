// What `show` and `estimate` need to know about a model without loading its weights: the
// normalized ModelConfig, the bytes and element count of its tensors, tensor type counts, tokenizer
// kind and whether a chat template ships with it. Sources: a local GGUF (header via the loader), a
// local safetensors dir (config.json + the safetensors JSON headers), or a remote repo variant
// (GGUF headers fetched with HTTP Range requests; safetensors via config.json and the index).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "hub/hub_api.h"
#include "hub/store.h"
#include "hub/variants.h"
#include "loader/gguf.h"
#include "loader/model_config.h"
#include "loader/safetensors.h"

namespace oxyd::hub {

struct ModelMeta {
  loader::ModelConfig config;
  int64_t weight_bytes = 0;   // sum of tensor data bytes the engine loads (text model)
  int64_t tower_bytes = 0;    // a multimodal wrapper's vision / audio tower and projector (not loaded)
  int64_t num_params = 0;     // sum of tensor element counts
  int64_t num_tensors = 0;
  /// Of weight_bytes, the routed experts' tensors (GGUF *_exps, HF *.experts.*); 0 when unknown
  /// (a remote checkpoint sized from its index) or dense.
  int64_t expert_weight_bytes = 0;
  std::map<std::string, int64_t> tensor_types;  // "Q4_K" → tensor count
  std::vector<loader::GgufTensorInfo> gguf_tensors;  // a GGUF's tensor table (empty for safetensors)
  std::string quantization;                     // GGUF: from the tensors (hub/quant_name.h); "" otherwise
  std::string tokenizer_kind;                   // "gpt2 (BPE)", "llama (SentencePiece)", "BPE", ...
  bool has_chat_template = false;
  std::string chat_template_source;             // "tokenizer.chat_template", "chat_template.jinja", ...
};

/// Whether `name` is a routed expert's tensor (GGUF *_exps, HF *.experts.*): what
/// expert_weight_bytes sums. A shared expert (GGUF *_shexp, HF *.shared_expert.*) runs on every
/// token and is not one.
bool is_expert_tensor(const std::string& name);

/// Reads a local model's metadata (headers and small JSON files only).
ModelMeta read_local_meta(const LocalModel& m);

/// Adds one safetensors header's tensors (bytes, elements, dtype counts) to `m`.
void add_safetensors_header(const loader::SafetensorsHeader& h, ModelMeta& m);

/// Fetches the header of a remote GGUF with Range requests: first 256 KiB, then as much more as
/// the parser says it needs (at least doubling), never the tensor data.
loader::GgufHeader fetch_remote_gguf_header(HubClient& hub, const std::string& repo, const std::string& rev,
                                            const RepoFile& file);

/// Metadata of one remote variant (GGUF: every shard's header; safetensors: config.json and the
/// index's total_size, or each file's header read by Range).
ModelMeta read_remote_meta(HubClient& hub, const RepoInfo& info, const std::string& rev, const Variant& v);

/// Fills config, tokenizer/template and tensor fields from GGUF metadata (the first shard's) and
/// the tensor tables of every shard.
void meta_from_gguf(const loader::GgufMetadata& md, const std::vector<const loader::GgufHeader*>& headers,
                    ModelMeta& out);

}  // namespace oxyd::hub
