// Variant choice for `pull`/`estimate` on a hub repo: GGUF files grouped into quant variants (split
// shards `-00001-of-00003` together, labelled by the quant token in the name), plus a
// `safetensors` variant where the repo has them. Only files a model needs are kept. Pure
// functions over a RepoInfo: no I/O.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "hub/hub_api.h"

namespace oxyd::hub {

struct Variant {
  std::string label;            // "Q4_K_M", "BF16", "safetensors", or a stem when no quant token
  bool is_gguf = false;
  std::string stem;             // GGUF: file stem without shard suffix ("Qwen3-4B-Q4_K_M")
  std::vector<RepoFile> files;  // everything pull downloads for it, small files first
  int64_t weight_bytes = 0;     // sum of .gguf / .safetensors sizes
  int64_t total_bytes = 0;      // sum of all file sizes
  std::string problem;          // non-empty: unusable (e.g. "shard 2 of 3 missing")

  const RepoFile* find_file(const std::string& path) const {
    for (const auto& f : files)
      if (f.path == path) return &f;
    return nullptr;
  }
};

struct GgufShard {
  std::string base;  // path without "-0000i-of-0000n.gguf"
  int index = 0;     // 1-based
  int count = 0;
};
/// "dir/x-00002-of-00003.gguf" → {"dir/x", 2, 3}; nullopt for unsplit files.
std::optional<GgufShard> parse_gguf_shard(const std::string& path);

/// The quant type named in a GGUF file name ("qwen3-4b-q4_k_m.gguf" → "Q4_K_M"); the longest
/// known token bounded by '-', '.', '_' or the ends wins. "" when there is none.
std::string quant_label_from_filename(const std::string& path);

/// Non-weight files a safetensors model needs: config, tokenizer files, chat template.
bool is_model_aux_file(const std::string& path);

/// All usable variants: `safetensors` first, then GGUF groups by ascending size. Projector
/// (`mmproj`) GGUFs are not variants. Variants with a `problem` are included, flagged.
std::vector<Variant> list_variants(const RepoInfo& info);

/// Flags (sets `problem` of) the GGUF variants whose quant oxydllm has no kernels for: the IQ1,
/// IQ2 and IQ3 families and the ternary TQ1_0/TQ2_0, so `pull` and `estimate` refuse them before
/// downloading. Local files are not flagged (the loader names the unsupported tensor type).
void flag_unsupported_quants(std::vector<Variant>& variants);

/// The recommended variant: Q4_K_M, else the first of Q4_K_S, Q4_K, Q4_0, Q4_1, IQ4_NL, IQ4_XS,
/// Q5_K_M (oxydLLM's list); beyond oxydLLM: else the smallest other 4-bit-or-wider GGUF
/// (Q5*, Q6_K, Q8_0, BF16, F16, F32), else safetensors, else the smallest usable one. -1 if none.
int default_variant(const std::vector<Variant>& variants);

/// Index of the variant named `name` (case-insensitive label or stem); -1 when absent.
int find_variant(const std::vector<Variant>& variants, const std::string& name);

}  // namespace oxyd::hub
