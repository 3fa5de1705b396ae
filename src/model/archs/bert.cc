// BertModel, RobertaModel, XLMRobertaModel: post-LayerNorm encoders (ArchSpec::encoder) with
// absolute position and token-type embeddings, exact-erf GELU, biases everywhere, bidirectional
// attention. RoBERTa / XLM-R number positions from pad_token_id + 1 (HF
// create_position_ids_from_input_ids); llama.cpp's converter drops those rows from the GGUF
// position table, so a GGUF starts at 0. sentence-transformers saves the bare model; the task
// wrappers (*ForSequenceClassification, cross-encoder rerankers) prefix it with bert. / roberta.
// and add a classification head: BERT's pooler (dense + tanh on [CLS]) then classifier, RoBERTa's
// classifier.dense (+ tanh) then classifier.out_proj, llama.cpp's cls / cls.output.
#include "model/family.h"

namespace oxyd::model::archs {
namespace {

void hf_extra(const loader::detail::Obj& t, loader::ModelConfig& c) {
  c.type_vocab_size = t.get_int("type_vocab_size", 2);
  c.position_embedding_type = t.opt_str("position_embedding_type").value_or("absolute");
  if (c.model_type == "roberta" || c.model_type == "xlm-roberta") c.position_offset = c.pad_token_id.value_or(1) + 1;
  if (c.architecture.ends_with("ForSequenceClassification")) {
    const auto* labels = t.find("id2label");
    c.num_labels = labels && labels->is_object() ? static_cast<int64_t>(labels->size()) : t.get_int("num_labels", 2);
  }
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
    f.runnable = true;
    ArchSpec& a = f.arch;
    a.family = f.config.name;
    a.encoder = true;
    a.act = backend::Activation::GELU_ERF;
    TensorNames& n = a.names;
    const std::string L = "encoder.layer.{}.";
    auto both = [](std::string hf, std::string gguf) { return TensorName{std::move(hf), std::move(gguf)}; };
    n.embed = both("embeddings.word_embeddings.weight", "token_embd.weight");
    n.pos_embed = both("embeddings.position_embeddings.weight", "position_embd.weight");
    n.type_embed = both("embeddings.token_type_embeddings.weight", "token_types.weight");
    n.embed_norm = both("embeddings.LayerNorm.weight", "token_embd_norm.weight");
    n.embed_norm_bias = both("embeddings.LayerNorm.bias", "token_embd_norm.bias");
    n.final_norm = both("", "");
    n.lm_head = both("", "");
    n.q = both(L + "attention.self.query.weight", "blk.{}.attn_q.weight");
    n.k = both(L + "attention.self.key.weight", "blk.{}.attn_k.weight");
    n.v = both(L + "attention.self.value.weight", "blk.{}.attn_v.weight");
    n.q_bias = both(L + "attention.self.query.bias", "blk.{}.attn_q.bias");
    n.k_bias = both(L + "attention.self.key.bias", "blk.{}.attn_k.bias");
    n.v_bias = both(L + "attention.self.value.bias", "blk.{}.attn_v.bias");
    n.o = both(L + "attention.output.dense.weight", "blk.{}.attn_output.weight");
    n.o_bias = both(L + "attention.output.dense.bias", "blk.{}.attn_output.bias");
    n.attn_norm = both(L + "attention.output.LayerNorm.weight", "blk.{}.attn_output_norm.weight");
    n.attn_norm_bias = both(L + "attention.output.LayerNorm.bias", "blk.{}.attn_output_norm.bias");
    n.up = both(L + "intermediate.dense.weight", "blk.{}.ffn_up.weight");
    n.up_bias = both(L + "intermediate.dense.bias", "blk.{}.ffn_up.bias");
    n.down = both(L + "output.dense.weight", "blk.{}.ffn_down.weight");
    n.down_bias = both(L + "output.dense.bias", "blk.{}.ffn_down.bias");
    n.ffn_norm = both(L + "output.LayerNorm.weight", "blk.{}.layer_output_norm.weight");
    n.ffn_norm_bias = both(L + "output.LayerNorm.bias", "blk.{}.layer_output_norm.bias");
    n.gate = both("", "");
    n.sinks = n.q_norm = n.k_norm = n.router = both("", "");
    n.cls_dense = both("pooler.dense.weight", "cls.weight");
    n.cls_dense_bias = both("pooler.dense.bias", "cls.bias");
    n.cls_out = both("classifier.weight", "cls.output.weight");
    n.cls_out_bias = both("classifier.bias", "cls.output.bias");
    for (const char* p : {"bert.", "roberta."}) {
      a.hf_prefix_fallbacks.push_back({"embeddings.", std::string(p) + "embeddings."});
      a.hf_prefix_fallbacks.push_back({"encoder.", std::string(p) + "encoder."});
      a.hf_prefix_fallbacks.push_back({"pooler.", std::string(p) + "pooler."});
    }
    a.hf_prefix_fallbacks.push_back({"pooler.dense.", "classifier.dense."});  // RoBERTa's head
    a.hf_prefix_fallbacks.push_back({"classifier.weight", "classifier.out_proj.weight"});
    a.hf_prefix_fallbacks.push_back({"classifier.bias", "classifier.out_proj.bias"});
    return f;
  }();
  return family;
}

}  // namespace oxyd::model::archs
