// LLMEngine: one model ready to serve, composed from a model path and ModelOptions — weights
// (mmapped), tokenizer, chat template, the model runner with its paged KV cache, the scheduler and
// the AsyncEngine thread that steps them. The HTTP server (one per loaded model id) and
// `oxydllm run` are its clients, through engine::Generation. Thread-safe except create/destruction.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "chat/chat_template.h"
#include "chat/output_parser.h"
#include "core/kv_format.h"
#include "engine/async_engine.h"
#include "engine/device_plan.h"
#include "engine/embedding_queue.h"
#include "grammar/grammar.h"
#include "loader/model_config.h"
#include "tokenizer/tokenizer.h"

namespace oxyd::model { class Transformer; }
namespace oxyd::runner { class ModelRunner; }

namespace oxyd::engine {

/// KV sizing: hub::plan_kv_pool (hub/estimate.h) from ModelOptions, the rule `oxydllm estimate`
/// prints. The format defaults to kDefaultKvFormat (core/kv_format.h), as hub::EstimateParams'.

struct ModelOptions {
  int32_t max_context_len = 0;            // per sequence, clamped to max_position_embeddings; 0 = auto
  int32_t max_num_seqs = 0;               // 0 = auto (hub::plan_kv_pool)
  int32_t max_num_batched_tokens = 1024;  // scheduler token budget per step
  int32_t max_queued_requests = 200;      // full → requests rejected (HTTP 429)
  int64_t kv_cache_bytes = 0;             // 0 = auto (above); else the KV pool budget
  int32_t block_size = 16;
  KvFormat kv_format = kDefaultKvFormat;  // what the KV pool holds (core/kv_format.h)
  bool enable_prefix_caching = true;
  DeviceChoice device = DeviceChoice::AUTO;  // --device (engine/device_plan.h)
  double gpu_memory_utilization = 0.9;      // share of the GPU's memory the engine may use
  bool f32_as_bf16 = false;               // --dtype bf16: F32 layer weights held as BF16 (CPU)
  std::string chat_template;              // non-empty: Jinja source overriding the model's template;
                                          // else the model's, else a fallback from its vocabulary
                                          // (chat/fallback_template.h: Gemma turns, ChatML)
};

class LLMEngine {
 public:
  /// Loads a GGUF file or a safetensors directory and starts its engine thread; `id` names it in
  /// messages. Throws oxyd::Error (NOT_FOUND, INVALID_ARGUMENT, UNSUPPORTED, OUT_OF_MEMORY) naming
  /// the file and what is wrong.
  static std::unique_ptr<LLMEngine> create(const std::string& id, const std::string& path, const ModelOptions& opts);
  /// Aborts in-flight requests (their streams end with ABORT) and joins the engine. Every
  /// Generation on this model must be destroyed first.
  ~LLMEngine();

  const std::string& id() const { return id_; }
  const std::string& path() const { return path_; }
  const loader::ModelConfig& config() const;
  const tokenizer::Tokenizer& tokenizer() const { return *tok_; }
  bool has_chat_template() const { return !chat_template_src_.empty(); }
  /// The tool-call / reasoning syntax of the chat template (chat/output_format.h).
  const chat::OutputFormat& output_format() const { return output_format_; }
  /// Renders through the chat template with the tokenizer's special tokens (bos_token, eos_token,
  /// ...) added to in.kwargs. Throws Error(INVALID_ARGUMENT) when the model has no template or the
  /// messages are malformed; template errors (raise_exception) come back as INVALID_ARGUMENT too.
  std::string render_chat(chat::ChatTemplateInputs in) const;
  /// Text → ids for a prompt already rendered by the chat template (no BOS added, specials parsed).
  std::vector<int32_t> encode_chat_prompt(const std::string& text) const;
  /// Text → ids for a raw completion prompt (BOS as the tokenizer adds it, specials parsed).
  std::vector<int32_t> encode_raw_prompt(const std::string& text) const;

  /// "generate", "embed" or "rank" (model::model_task). An embedding / ranking model has no KV
  /// pool, scheduler or AsyncEngine: its requests go through embed() to its EmbeddingQueue.
  const std::string& task() const { return task_; }
  bool generates() const { return task_ == "generate"; }
  /// The longest input embed() takes, in tokens (0 = no limit).
  int64_t max_input_tokens() const;
  /// Floats per sequence embed() returns (hidden size, or the number of labels when ranking).
  int64_t embedding_size() const;
  /// Text → ids for an embedding / ranking input (the tokenizer's specials, e.g. [CLS] … [SEP]).
  std::vector<int32_t> encode_embedding_input(const std::string& text) const;
  /// One (query, document) pair of a ranking model as its input: ids, token types (empty when the
  /// model has no type table) and keep_tail, the tokens a cut to the maximum must keep at the end.
  /// A decoder reranker: its prompt (ModelConfig::rank_prompt; the query and document are user
  /// text, their special tokens stay text). A cross-encoder: the tokenizer's pair encoding.
  struct RankPair {
    std::vector<int32_t> ids, types;
    size_t keep_tail = 1;
  };
  RankPair encode_rank_pair(const std::string& query, const std::string& document) const;
  /// Embeds (or scores) every sequence of `in`, batched with other clients' requests; blocks.
  /// Error(INVALID_ARGUMENT) for an empty sequence, an id outside the vocabulary or a sequence
  /// longer than max_input_tokens(); Error(UNSUPPORTED) on a generation model; Error
  /// (OUT_OF_MEMORY) when the queue is full.
  std::vector<float> embed(EmbeddingInput in);
  /// embed() without blocking: the checks above, then the queued request's future (its deadline
  /// and cancelled flag are honoured by the queue, engine/embedding_queue.h).
  std::future<std::vector<float>> submit_embed(EmbeddingInput in);

  int32_t max_context_len() const { return max_context_len_; }
  int32_t max_num_seqs() const { return max_num_seqs_; }
  AsyncEngine& async_engine();
  /// Scheduler and KV gauges after the last step (thread-safe); zeros for an embedding model.
  EngineStats stats() { return engine_ ? engine_->stats() : EngineStats{}; }
  int64_t weights_bytes() const { return weights_bytes_; }
  int64_t kv_cache_bytes() const;
  /// What the KV pool holds; /metrics and the startup log print kv_format_name() of it: "F32",
  /// "F16", "BF16", or "Q4", "Q3", "Q2" (--kv-quant lossless, balanced, aggressive).
  KvFormat kv_format() const { return kv_format_; }
  int64_t num_kv_blocks() const { return num_kv_blocks_; }
  /// Where the forward pass runs, and the one-line reason (the startup log prints it).
  Device device() const { return device_; }
  const std::string& device_reason() const { return device_reason_; }
  /// The grammar compiler for this model's vocabulary (built on first use: ~0.1–1 s for a 150k
  /// vocabulary). Thread-safe. special_text: the one over grammar_vocabulary(special_text), for
  /// GrammarSpec::special_text.
  const grammar::GrammarCompiler& grammar_compiler(bool special_text = false);
  /// Unique per process, for engine request ids.
  int64_t next_request_id() { return next_id_.fetch_add(1); }

 private:
  LLMEngine() = default;
  std::string id_, path_, chat_template_src_;
  chat::OutputFormat output_format_;
  std::unique_ptr<model::Transformer> model_;
  std::unique_ptr<tokenizer::Tokenizer> tok_;
  std::unique_ptr<chat::jinja::Template> template_;
  std::unique_ptr<runner::ModelRunner> runner_;
  std::unique_ptr<AsyncEngine> engine_;
  std::unique_ptr<EmbeddingQueue> embed_queue_;
  std::string task_ = "generate";
  int32_t max_context_len_ = 0, max_num_seqs_ = 0;
  int64_t weights_bytes_ = 0, num_kv_blocks_ = 0;
  KvFormat kv_format_ = kDefaultKvFormat;
  Device device_ = Device::CPU;
  std::string device_reason_;
  std::atomic<int64_t> next_id_{1};
  std::once_flag grammar_once_[2];
  std::unique_ptr<grammar::GrammarCompiler> grammar_[2];  // [special_text]
};

}  // namespace oxyd::engine
