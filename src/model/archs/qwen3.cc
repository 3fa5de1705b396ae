// Qwen3ForCausalLM: per-head q_norm / k_norm before RoPE; head_dim may differ from hidden/heads.
// Sliding window as Qwen2. Qwen3-Embedding is this family with a sentence-transformers pipeline
// (last-token pooling, Normalize; loader/sentence_transformers.h). Qwen3-Reranker is this family
// too, saved as a plain Qwen3ForCausalLM: its README's "# Qwen3-Reranker" heading is the only mark
// (llama.cpp's converter reads the same), and it scores a pair as P(yes) from the "no" / "yes"
// logits of the last position of its published prompt (ModelConfig::rank_prompt).
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "model/archs/config_hooks.h"
#include "model/family.h"

namespace oxyd::model::archs {
namespace {

bool is_reranker_checkpoint(const std::string& config_path) {
  std::ifstream f(std::filesystem::path(config_path).parent_path() / "README.md", std::ios::binary);
  if (!f) return false;
  std::string text((std::istreambuf_iterator<char>(f)), {});
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char ch) { return std::tolower(ch); });
  return text.find("# qwen3-reranker") != std::string::npos;
}

void hf_extra(const Obj& t, ModelConfig& c) {
  (void)t;
  if (!is_reranker_checkpoint(c.source)) return;
  c.num_labels = 2;
  c.rank_label_tokens = {"no", "yes"};
  c.rank_prompt.prefix =
      "<|im_start|>system\nJudge whether the Document meets the requirements based on the Query and the Instruct "
      "provided. Note that the answer can only be \"yes\" or \"no\".<|im_end|>\n<|im_start|>user\n";
  c.rank_prompt.body =
      "<Instruct>: Given a web search query, retrieve relevant passages that answer the query\n<Query>: {query}\n"
      "<Document>: {document}";
  c.rank_prompt.suffix = "<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n";
}

}  // namespace

const Family& qwen3() {
  static const Family family = [] {
    Family f;
    f.config.name = "qwen3";
    f.config.hf_model_types = {{"qwen3", "Qwen3ForCausalLM"}};
    f.config.gguf_archs = {"qwen3"};
    f.config.gguf_architecture = "Qwen3ForCausalLM";
    f.config.gguf_model_type = "qwen3";
    f.config.hf_sliding_window = hf_sliding_window_if_used;
    f.config.hf_layer_types = hf_layers_after_max_window;
    f.config.hf_extra = hf_extra;
    f.runnable = true;
    f.arch.family = f.config.name;
    // Qwen3-Embedding checkpoints are saved from the bare Qwen3Model: no "model." prefix.
    f.arch.hf_prefix_fallbacks = {{"model.", ""}};
    return f;
  }();
  return family;
}

}  // namespace oxyd::model::archs
