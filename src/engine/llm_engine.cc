// LLMEngine::create (see llm_engine.h). The context and the KV pool come from
// hub::plan_kv_pool (hub/estimate.h), the rule `oxydllm estimate` prints with the same flags.
#include "engine/llm_engine.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "chat/fallback_template.h"
#include "chat/output_format.h"
#include "core/error.h"
#include "backend/backend.h"
#include "core/file_util.h"
#include "engine/grammar_vocab.h"
#include "hub/estimate.h"
#include "loader/gguf.h"
#include "model/model_config.h"
#include "model/transformer.h"
#include "runner/model_runner.h"

namespace oxyd::engine {
namespace {

namespace fs = std::filesystem;

// Tokens per embedding pass at least (ModelOptions::max_num_batched_tokens if larger): packed
// sequences run as one pass, so a bigger step is cheaper per token; it bounds one pass's time.
constexpr int64_t kEmbeddingBatchTokens = 8192;

// Tokenizer and the model's own chat template ("" if none) from a GGUF file or an HF directory.
std::unique_ptr<tokenizer::Tokenizer> load_tokenizer(const std::string& path, std::string& chat_template) {
  if (fs::is_directory(path)) {
    const fs::path dir(path);
    const fs::path tj = dir / "tokenizer.json", tc = dir / "tokenizer_config.json";
    if (!fs::exists(tj)) throw_error(ErrorCode::NOT_FOUND, tj.string() + ": missing (needed for the tokenizer)");
    auto tok = tokenizer::Tokenizer::from_hf_files(tj.string(), fs::exists(tc) ? tc.string() : "");
    chat_template = tok->chat_template();
    const fs::path jinja = dir / "chat_template.jinja";  // newer transformers keep it here
    if (chat_template.empty() && fs::exists(jinja)) chat_template = read_text_file(jinja.string());
    return tok;
  }
  loader::GgufFile gguf = loader::GgufFile::open(path);
  auto tok = tokenizer::Tokenizer::from_gguf(gguf);
  chat_template = tok->chat_template();
  return tok;
}

int64_t weights_bytes_of(const model::Weights& w) {
  int64_t n = w.embed.nbytes() + w.final_norm.nbytes() + w.rope_factors.nbytes();
  if (w.lm_head.data != w.embed.data) n += w.lm_head.nbytes();
  for (const model::LayerWeights& l : w.layers)
    for (const Tensor* t : {&l.attn_norm, &l.q, &l.k, &l.v, &l.o, &l.q_bias, &l.k_bias, &l.v_bias, &l.o_bias,
                            &l.sinks, &l.q_norm, &l.k_norm, &l.post_attn_norm, &l.ffn_norm, &l.post_ffw_norm, &l.gate, &l.up, &l.down})
      if (t->data) n += t->nbytes();
  return n;
}

// The registered CUDA backend (the CLI registers it when built with CUDA and a GPU is there).
class RegisteredDeviceProbe final : public DeviceProbe {
 public:
  bool cuda_present() const override { return backend::registered_backend(Device::CUDA) != nullptr; }
  int64_t cuda_free_bytes() const override {
    return backend::registered_backend(Device::CUDA)->memory_info().free_bytes;
  }
  int64_t cuda_total_bytes() const override {
    return backend::registered_backend(Device::CUDA)->memory_info().total_bytes;
  }
};

// Bytes of the checkpoint's weight files (what the upload copies, tokenizer metadata aside).
int64_t checkpoint_bytes(const std::string& path) {
  if (!fs::is_directory(path)) return int64_t(fs::file_size(path));
  int64_t n = 0;
  for (const auto& e : fs::directory_iterator(path))
    if (e.is_regular_file() && e.path().extension() == ".safetensors") n += int64_t(e.file_size());
  return n;
}

// Where the model runs: plan_device over the checkpoint's size, one step's workspaces and the KV of
// one context (min(trained context, 4096), or --max-context-len), as hub::estimate_memory counts
// them. The CPU without asking anything when --device cpu or no GPU backend is registered.
DevicePlan choose_device(const std::string& path, const ModelOptions& opts, const DeviceProbe& probe) {
  DevicePlanRequest r;
  r.choice = opts.device;
  r.gpu_memory_utilization = opts.gpu_memory_utilization;
  r.kv_cache_bytes = opts.kv_cache_bytes;
  if (opts.device != DeviceChoice::CPU && probe.cuda_present()) {
    const loader::ModelConfig c = fs::is_directory(path) ? model::load_hf_config((fs::path(path) / "config.json").string())
                                                         : model::model_config_from_gguf(loader::GgufFile::open(path));
    r.weight_bytes = checkpoint_bytes(path);
    hub::EstimateParams ep;
    const int64_t trained = c.max_position_embeddings > 0 ? c.max_position_embeddings : 4096;
    ep.context_len = opts.max_context_len > 0 ? opts.max_context_len : std::min<int64_t>(trained, 4096);
    ep.num_sequences = 1;
    ep.kv_format = opts.kv_format;
    ep.block_size = opts.block_size;
    ep.max_batch_tokens = opts.max_num_batched_tokens;
    ep.matmul_scratch = [](const std::string&, int64_t, int64_t) { return int64_t(0); };  // device scratch: its own
    const hub::MemoryEstimate e = hub::estimate_memory(c, r.weight_bytes, ep);
    r.workspace_bytes = e.runtime_bytes;
    r.min_kv_bytes = e.kv_bytes + e.state_bytes;
  }
  return plan_device(r, probe);
}

}  // namespace

std::unique_ptr<LLMEngine> LLMEngine::create(const std::string& id, const std::string& path, const ModelOptions& opts) {
  auto bad = [](const std::string& m) { throw_error(ErrorCode::INVALID_ARGUMENT, m); };
  if (opts.max_context_len != 0 && opts.max_context_len < 2)
    bad("max_context_len must be >= 2 (0 = auto), got " + std::to_string(opts.max_context_len));
  if (opts.block_size < 1 || opts.block_size > 1024) bad("block_size must be in [1, 1024], got " + std::to_string(opts.block_size));
  if (opts.max_num_batched_tokens < 1) bad("max_num_batched_tokens must be >= 1");
  if (opts.max_num_seqs < 0) bad("max_num_seqs must be >= 0 (0 = auto)");
  if (opts.kv_cache_bytes < 0) bad("kv_cache_bytes must be >= 0 (0 = auto)");
  if (!fs::exists(path)) throw_error(ErrorCode::NOT_FOUND, path + ": no such file or directory");

  std::unique_ptr<LLMEngine> lm(new LLMEngine());
  lm->id_ = id;
  lm->path_ = path;
  const DevicePlan dp = choose_device(path, opts, RegisteredDeviceProbe());
  lm->device_ = dp.device;
  lm->device_reason_ = dp.reason;
  if (dp.device != Device::CPU || opts.device != DeviceChoice::CPU)  // say why when a GPU was an option
    std::fprintf(stderr, "oxydllm: %s: %s\n", id.c_str(), dp.reason.c_str());
  try {
    lm->model_ = model::Transformer::load(path, dp.device, opts.f32_as_bf16);
  } catch (const Error& e) {
    // auto: a weight format the GPU has no kernel for is a reason to stay on the CPU, said so.
    if (dp.device == Device::CPU || opts.device != DeviceChoice::AUTO || e.code() != ErrorCode::UNSUPPORTED) throw;
    lm->device_ = Device::CPU;
    lm->device_reason_ = std::string("device cpu (--device auto: ") + e.what() + ")";
    std::fprintf(stderr, "oxydllm: %s: %s\n", id.c_str(), lm->device_reason_.c_str());
    lm->model_ = model::Transformer::load(path, Device::CPU, opts.f32_as_bf16);
  }
  const model::Transformer& m = *lm->model_;
  const loader::ModelConfig& c = m.config();
  std::string model_template;
  lm->tok_ = load_tokenizer(path, model_template);

  // Chat template: the caller's > the model's > a fallback recognised from the vocabulary.
  std::string src = opts.chat_template, what = "--chat-template";
  if (src.empty()) src = model_template, what = path + ": chat template";
  if (src.empty()) {
    const tokenizer::Tokenizer& tok = *lm->tok_;
    if (auto fb = chat::fallback_chat_template([&](std::string_view t) { return tok.token_to_id(t) >= 0; }))
      src = fb->source, what = "fallback " + fb->name + " chat template";
  }
  if (!src.empty()) {
    try {
      lm->template_ = std::make_unique<chat::jinja::Template>(chat::jinja::Template::parse(src));
      lm->chat_template_src_ = src;
      const tokenizer::Tokenizer& tok = *lm->tok_;
      lm->output_format_ = chat::detect_output_format(src, [&](std::string_view t) { return tok.token_to_id(t) >= 0; });
    } catch (const Error& e) {
      if (!opts.chat_template.empty()) bad(what + " does not parse: " + e.what());
      // The model's own template uses something our Jinja lacks: serve completions only.
      std::fprintf(stderr, "oxydllm: %s does not parse (%s); chat requests will be refused\n", what.c_str(), e.what());
    }
  }

  if (!c.rank_label_tokens.empty()) {  // a decoder reranker: its label tokens' ids
    std::vector<int32_t> ids;
    for (const std::string& t : c.rank_label_tokens) {
      ids.push_back(lm->tok_->token_to_id(t));
      if (ids.back() < 0) bad(path + ": the reranker's label token '" + t + "' is not in the vocabulary");
    }
    lm->model_->set_rank_label_ids(ids);
  }
  lm->task_ = model::model_task(c);
  lm->weights_bytes_ = weights_bytes_of(m.weights());
  if (!lm->generates()) {
    // Embedding / ranking: no KV pool, no scheduler; one packed pass per step of the queue.
    lm->max_context_len_ = int32_t(std::min<int64_t>(m.max_input_tokens(), INT32_MAX));
    lm->embed_queue_ = std::make_unique<EmbeddingQueue>(
        *lm->model_, std::max<int64_t>(opts.max_num_batched_tokens, kEmbeddingBatchTokens), opts.max_queued_requests);
    return lm;
  }

  // Context and KV pool: hub::plan_kv_pool, the same rule `oxydllm estimate` prints.
  hub::KvPlanRequest kr;
  kr.bytes_per_token = runner::kv_bytes_per_token(m, opts.kv_format);
  kr.trained_context = c.max_position_embeddings;
  kr.max_context_len = opts.max_context_len;
  kr.max_num_seqs = opts.max_num_seqs;
  kr.kv_cache_bytes = opts.kv_cache_bytes;
  kr.block_size = opts.block_size;
  kr.memory_available = hub::mem_available_bytes();
  kr.memory_cap_bytes = hub::kv_memory_cap(kr.memory_available);
  if (lm->device_ != Device::CPU) {  // the GPU's room (plan_device), all of it the pool's by default
    kr.memory_available = kr.memory_cap_bytes = dp.kv_budget_bytes;
    if (kr.kv_cache_bytes == 0) kr.kv_cache_bytes = dp.kv_budget_bytes;
  }
  const hub::KvPlan plan = hub::plan_kv_pool(kr, id);
  lm->max_context_len_ = int32_t(plan.context_len);
  lm->max_num_seqs_ = int32_t(plan.max_num_seqs);
  const int64_t num_blocks = plan.num_blocks;

  // Sliding window in the block manager only when EVERY layer slides (kv/block_manager.h).
  int32_t window = 0;
  for (int64_t l = 0; l < c.num_hidden_layers; ++l) {
    const int w = m.sliding_window(l);
    if (w <= 0) {
      window = 0;
      break;
    }
    window = std::max(window, int32_t(w));
  }

  // A model with linear_attention layers keeps, with prefix caching, state snapshots at cached
  // block ends in state slots after the running requests' (hub::num_state_snapshots_for).
  const int64_t num_seq_slots = std::max<int64_t>(lm->max_num_seqs_, 1);
  const bool snapshots = opts.enable_prefix_caching && lm->model_->has_linear_attention();
  const int64_t num_snapshots = snapshots ? hub::num_state_snapshots_for(num_seq_slots) : 0;
  lm->runner_ = std::make_unique<runner::ModelRunner>(*lm->model_, num_blocks, opts.block_size, opts.kv_format,
                                                      num_seq_slots + num_snapshots);
  lm->kv_format_ = opts.kv_format;
  lm->num_kv_blocks_ = num_blocks;
  // Peak memory at load, not at the first big request: activation/attention/MLP/logits buffers for
  // a full step (prompt-logprob requests may still grow the logits rows later).
  lm->model_->reserve_workspace(opts.max_num_batched_tokens, lm->max_num_seqs_);
  sched::SchedulerConfig sc;
  sc.max_num_seqs = lm->max_num_seqs_;
  sc.max_num_batched_tokens = opts.max_num_batched_tokens;
  sc.max_model_len = lm->max_context_len_;
  sc.max_queued_requests = opts.max_queued_requests;
  sc.rope_switch_len = int32_t(std::min<int64_t>(lm->model_->rope_switch_len(), INT32_MAX));
  kv::BlockManagerConfig kc;
  kc.num_blocks = int32_t(num_blocks);
  kc.block_size = opts.block_size;
  kc.sliding_window = window;
  // A hybrid model's hit resumes its recurrent state from the snapshot at the hit's last block.
  kc.enable_prefix_caching = opts.enable_prefix_caching;
  kc.num_state_snapshots = int32_t(num_snapshots);
  lm->engine_ = std::make_unique<AsyncEngine>(sc, kc, *lm->runner_);
  return lm;
}

LLMEngine::~LLMEngine() {
  engine_.reset();
  embed_queue_.reset();
}

AsyncEngine& LLMEngine::async_engine() {
  if (!engine_)
    throw_error(ErrorCode::UNSUPPORTED, "model " + id_ + " is an " + task_ + " model: it does not generate text");
  return *engine_;
}

int64_t LLMEngine::max_input_tokens() const { return model_->max_input_tokens(); }

int64_t LLMEngine::embedding_size() const { return model_->embedding_size(); }

std::vector<int32_t> LLMEngine::encode_embedding_input(const std::string& text) const {
  return tok_->encode(text, /*add_special=*/true, /*parse_special=*/false);
}

LLMEngine::RankPair LLMEngine::encode_rank_pair(const std::string& query, const std::string& document) const {
  const loader::ModelConfig::RankPrompt& p = config().rank_prompt;
  RankPair r;
  if (p.body.empty()) {
    r.ids = tok_->encode_pair(query, document, &r.types);
    if (config().type_vocab_size < 2) r.types.clear();
    return r;
  }
  std::string body;
  for (size_t i = 0; i < p.body.size();) {  // {query} and {document}, once each or more
    if (p.body.compare(i, 7, "{query}") == 0) body += query, i += 7;
    else if (p.body.compare(i, 10, "{document}") == 0) body += document, i += 10;
    else body += p.body[i++];
  }
  r.ids = tok_->encode(p.prefix, false, true);
  const std::vector<int32_t> mid = tok_->encode(body, false, false), tail = tok_->encode(p.suffix, false, true);
  r.ids.insert(r.ids.end(), mid.begin(), mid.end());
  r.ids.insert(r.ids.end(), tail.begin(), tail.end());
  r.keep_tail = tail.size();
  return r;
}

std::vector<float> LLMEngine::embed(EmbeddingInput in) {
  if (in.ids.empty() && embed_queue_) return {};
  return submit_embed(std::move(in)).get();
}

std::future<std::vector<float>> LLMEngine::submit_embed(EmbeddingInput in) {
  if (!embed_queue_)
    throw_error(ErrorCode::UNSUPPORTED, "model " + id_ + " generates text: it does not embed or rank");
  const int64_t max_len = max_input_tokens(), vocab = model_->config().vocab_size;
  if (!in.types.empty() && in.types.size() != in.ids.size())
    throw_error(ErrorCode::INVALID_ARGUMENT, "token types must be given for every input or none");
  for (size_t s = 0; s < in.ids.size(); ++s) {
    const auto& seq = in.ids[s];
    const std::string which = "input " + std::to_string(s);
    if (seq.empty()) throw_error(ErrorCode::INVALID_ARGUMENT, which + " is empty");
    if (max_len > 0 && int64_t(seq.size()) > max_len)
      throw_error(ErrorCode::INVALID_ARGUMENT, which + " has " + std::to_string(seq.size()) +
                                                   " tokens, more than this model's maximum of " + std::to_string(max_len));
    for (int32_t t : seq)
      if (t < 0 || t >= vocab)
        throw_error(ErrorCode::INVALID_ARGUMENT, which + ": token id " + std::to_string(t) + " is outside [0, " +
                                                     std::to_string(vocab) + ")");
    if (!in.types.empty() && in.types[s].size() != seq.size())
      throw_error(ErrorCode::INVALID_ARGUMENT, which + ": token types must match the token ids in length");
  }
  if (in.ids.empty()) {
    std::promise<std::vector<float>> none;
    none.set_value({});
    return none.get_future();
  }
  return embed_queue_->submit(std::move(in));
}

const loader::ModelConfig& LLMEngine::config() const { return model_->config(); }

int64_t LLMEngine::kv_cache_bytes() const { return runner_ ? runner_->kv_cache_bytes() : 0; }

std::string LLMEngine::render_chat(chat::ChatTemplateInputs in) const {
  if (!template_)
    throw_error(ErrorCode::INVALID_ARGUMENT,
                "model " + id_ + " has no chat template; pass --chat-template FILE or use /v1/completions");
  nlohmann::ordered_json kw = nlohmann::ordered_json::object();
  auto special = [&](const char* key, int32_t tid) {
    if (tid >= 0) kw[key] = tok_->id_to_token(tid);
  };
  special("bos_token", tok_->bos_id());
  special("eos_token", tok_->eos_id());
  special("unk_token", tok_->unk_id());
  special("pad_token", tok_->pad_id());
  for (auto& [k, v] : in.kwargs.items()) kw[k] = v;  // the caller's kwargs win
  in.kwargs = std::move(kw);
  try {
    return chat::apply_chat_template(*template_, in);
  } catch (const Error& e) {
    throw_error(ErrorCode::INVALID_ARGUMENT, e.what());  // raise_exception text unchanged
  }
}

std::vector<int32_t> LLMEngine::encode_chat_prompt(const std::string& text) const {
  return tok_->encode(text, /*add_special=*/false, /*parse_special=*/true);
}

std::vector<int32_t> LLMEngine::encode_raw_prompt(const std::string& text) const {
  return tok_->encode(text, /*add_special=*/true, /*parse_special=*/true);
}

const grammar::GrammarCompiler& LLMEngine::grammar_compiler(bool special_text) {
  const int i = special_text ? 1 : 0;
  std::call_once(grammar_once_[i], [&] {
    grammar_[i] = std::make_unique<grammar::GrammarCompiler>(
        grammar_vocabulary(*tok_, int32_t(config().vocab_size), special_text));
  });
  return *grammar_[i];
}

}  // namespace oxyd::engine
