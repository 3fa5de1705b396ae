// BertModel (and RoBERTa / XLM-RoBERTa): recognised encoders, not runnable yet. Bidirectional,
// GELU, biases everywhere, LayerNorm (layer_norm_eps) and token type embeddings.
#include "model/family.h"

namespace oxyd::model::archs {
namespace {

void hf_extra(const loader::detail::Obj& t, loader::ModelConfig& c) {
  c.type_vocab_size = t.get_int("type_vocab_size", 2);
  c.position_embedding_type = t.opt_str("position_embedding_type").value_or("absolute");
}

void gguf_extra(const loader::GgufMetadata& md, const std::string&, loader::ModelConfig& c) {
  const char* key = "tokenizer.ggml.token_type_count";
  c.type_vocab_size = md.has(key) ? md.get<int64_t>(key) : 2;
}

}  // namespace

const Family& bert() {
  static const Family family = [] {
    Family f;
    f.config.name = "bert";
    f.config.hf_model_types = {{"bert", "BertModel"}, {"roberta", "RobertaModel"}, {"xlm-roberta", "XLMRobertaModel"}};
    f.config.gguf_archs = {"bert"};
    f.config.gguf_architecture = "BertModel";
    f.config.gguf_model_type = "bert";
    f.config.tie_word_embeddings = true;
    f.config.hidden_act = "gelu";
    f.config.attention_bias = true;
    f.config.mlp_bias = true;
    f.config.is_causal = false;
    f.config.hf_extra = hf_extra;
    f.config.gguf_extra = gguf_extra;
    return f;
  }();
  return family;
}

}  // namespace oxyd::model::archs
