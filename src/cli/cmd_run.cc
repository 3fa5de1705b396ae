// `oxydllm run PATH_OR_ID ["prompt"]`: one-shot generation. Loads a GGUF file or a safetensors
// directory (or a local store id), renders the prompt through the model's chat template unless
// --raw, prefills it as one step, then decodes one token per step (greedy at temperature 0),
// streaming text to stdout until an end-of-generation token or --max-tokens.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <iterator>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "chat/chat_template.h"
#include "cli/commands.h"
#include "core/error.h"
#include "core/thread_pool.h"
#include "hub/store.h"
#include "loader/gguf.h"
#include "model/transformer.h"
#include "tokenizer/stream_decoder.h"
#include "tokenizer/tokenizer.h"

namespace oxyd::cli {
namespace {

namespace fs = std::filesystem;

// A user-facing check: throws Error(code, msg) (OXYD_CHECK is for internal invariants).
void require(bool cond, ErrorCode code, const std::string& msg) {
  if (!cond) throw_error(code, msg);
}

struct RunOpts {
  std::string model, prompt, models_dir, chat_template_file;
  bool raw = false, stats = false;
  int max_tokens = 256;
  double temperature = 0.0;
  int threads = 0;
  uint64_t seed = 0;
};

// A path on disk wins; otherwise the argument is a local store / HF cache id.
std::string resolve_model_path(const RunOpts& o) {
  if (fs::exists(o.model)) return o.model;
  const bool looks_like_path = o.model.starts_with("/") || o.model.starts_with("./") ||
                               o.model.starts_with("../") || o.model.ends_with(".gguf");
  require(!looks_like_path, ErrorCode::NOT_FOUND, o.model + ": no such file or directory");
  hub::check_model_id(o.model);
  auto models = hub::discover_all(models_dir_or_default(o.models_dir), hub::hf_hub_cache_dir());
  const hub::LocalModel& m = hub::resolve_model(models, o.model, /*allow_prefix=*/true);
  if (m.format == hub::ModelFormat::GGUF) {
    require(!m.weight_files.empty(), ErrorCode::NOT_FOUND, "model " + o.model + " has no GGUF file");
    return m.weight_files.front();
  }
  return m.dir;
}

std::string read_text_file(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  require(f != nullptr, ErrorCode::IO, "cannot open " + path);
  std::string s;
  char buf[1 << 14];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) s.append(buf, n);
  std::fclose(f);
  return s;
}

struct LoadedTokenizer {
  std::unique_ptr<tokenizer::Tokenizer> tok;
  std::string chat_template;
};

LoadedTokenizer load_tokenizer(const std::string& path) {
  LoadedTokenizer t;
  if (fs::is_directory(path)) {
    const fs::path dir(path);
    const fs::path tj = dir / "tokenizer.json", tc = dir / "tokenizer_config.json";
    require(fs::exists(tj), ErrorCode::NOT_FOUND, tj.string() + ": missing (needed for the tokenizer)");
    t.tok = tokenizer::Tokenizer::from_hf_files(tj.string(), fs::exists(tc) ? tc.string() : "");
    t.chat_template = t.tok->chat_template();
    const fs::path jinja = dir / "chat_template.jinja";  // newer transformers keep it here
    if (t.chat_template.empty() && fs::exists(jinja)) t.chat_template = read_text_file(jinja.string());
  } else {
    loader::GgufFile gguf = loader::GgufFile::open(path);
    t.tok = tokenizer::Tokenizer::from_gguf(gguf);
    t.chat_template = t.tok->chat_template();
  }
  return t;
}

// The rendered chat prompt (transformers: special tokens as template variables, no extra BOS).
std::vector<int32_t> chat_prompt_ids(const LoadedTokenizer& t, const std::string& user, const std::string& src) {
  require(!t.chat_template.empty(), ErrorCode::INVALID_ARGUMENT,
          src + ": no chat template (tokenizer.chat_template / tokenizer_config.json chat_template); pass --chat-template FILE or --raw");
  chat::jinja::Template tmpl = chat::jinja::Template::parse(t.chat_template);
  chat::ChatTemplateInputs in;
  in.messages.push_back({{"role", "user"}, {"content", user}});
  in.add_generation_prompt = true;
  auto special = [&](const char* key, int32_t id) {
    if (id >= 0) in.kwargs[key] = t.tok->id_to_token(id);
  };
  special("bos_token", t.tok->bos_id());
  special("eos_token", t.tok->eos_id());
  special("unk_token", t.tok->unk_id());
  special("pad_token", t.tok->pad_id());
  const std::string text = chat::apply_chat_template(tmpl, in);
  return t.tok->encode(text, /*add_special=*/false, /*parse_special=*/true);
}

int32_t pick_token(const float* logits, int64_t n, double temperature, std::mt19937_64& rng) {
  if (temperature <= 0.0) return static_cast<int32_t>(std::max_element(logits, logits + n) - logits);
  const float mx = *std::max_element(logits, logits + n);
  std::vector<double> p(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) p[i] = std::exp((double(logits[i]) - mx) / temperature);
  std::discrete_distribution<int32_t> dist(p.begin(), p.end());
  return dist(rng);
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

int run(const RunOpts& o) {
  require(o.max_tokens >= 0, ErrorCode::INVALID_ARGUMENT, "--max-tokens must be >= 0");
  require(o.temperature >= 0.0 && std::isfinite(o.temperature), ErrorCode::INVALID_ARGUMENT,
                  "--temperature must be a finite number >= 0");
  if (o.threads > 0) ThreadPool::set_global_threads(o.threads);
  std::string prompt = o.prompt;
  if (prompt.empty()) {
    prompt.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
    while (!prompt.empty() && (prompt.back() == '\n' || prompt.back() == '\r')) prompt.pop_back();
  }

  const std::string path = resolve_model_path(o);
  auto t_load = std::chrono::steady_clock::now();
  std::unique_ptr<model::Transformer> m = model::Transformer::load(path);
  LoadedTokenizer tok = load_tokenizer(path);
  if (!o.chat_template_file.empty()) tok.chat_template = read_text_file(o.chat_template_file);
  const double load_s = seconds_since(t_load);

  std::vector<int32_t> ids = o.raw ? tok.tok->encode(prompt, /*add_special=*/true, /*parse_special=*/true)
                                   : chat_prompt_ids(tok, prompt, path);
  require(!ids.empty(), ErrorCode::INVALID_ARGUMENT, "the prompt encodes to no tokens");
  const int64_t V = m->config().vocab_size;
  for (int32_t id : ids)
    require(id >= 0 && id < V, ErrorCode::INVALID_ARGUMENT,
                    "prompt token id " + std::to_string(id) + " is outside the model's vocab_size " + std::to_string(V));
  const int64_t total = static_cast<int64_t>(ids.size()) + o.max_tokens;
  const int64_t max_pos = m->config().max_position_embeddings;
  require(max_pos <= 0 || total <= max_pos, ErrorCode::INVALID_ARGUMENT,
                  "prompt (" + std::to_string(ids.size()) + " tokens) + --max-tokens exceeds the model's context of " +
                      std::to_string(max_pos));

  // One sequence; blocks 0..n-1 in order.
  constexpr int64_t kBlock = 16;
  const int64_t num_blocks = (total + kBlock - 1) / kBlock;
  model::KvCache cache = m->make_kv_cache(num_blocks, kBlock);
  std::vector<int32_t> table(static_cast<size_t>(num_blocks));
  for (int64_t b = 0; b < num_blocks; ++b) table[b] = static_cast<int32_t>(b);

  // Runs tokens at positions [start, start + n); returns the last token's logits.
  std::vector<int32_t> pos, qsl(2), lens(1), slots, logits_idx(1);
  auto step = [&](const std::vector<int32_t>& toks, int64_t start) {
    const int64_t n = static_cast<int64_t>(toks.size());
    pos.resize(n);
    slots.resize(n);
    for (int64_t i = 0; i < n; ++i) pos[i] = slots[i] = static_cast<int32_t>(start + i);
    qsl = {0, static_cast<int32_t>(n)};
    lens = {static_cast<int32_t>(start + n)};
    logits_idx = {static_cast<int32_t>(n - 1)};
    model::ForwardBatch b;
    b.token_ids = toks;
    b.positions = pos;
    b.query_start_loc = qsl;
    b.seq_lens = lens;
    b.block_table = table;
    b.max_blocks_per_req = num_blocks;
    b.slot_mapping = slots;
    b.logits_indices = logits_idx;
    Tensor out = m->forward(b, cache);
    return out.ptr<float>();
  };

  std::mt19937_64 rng(o.seed);
  tokenizer::StreamDecoder stream(*tok.tok, /*skip_special=*/true);
  auto t_prefill = std::chrono::steady_clock::now();
  const float* logits = o.max_tokens > 0 ? step(ids, 0) : nullptr;
  const double prefill_s = seconds_since(t_prefill);
  int64_t generated = 0, position = static_cast<int64_t>(ids.size());
  auto t_decode = std::chrono::steady_clock::now();
  std::vector<int32_t> one(1);
  while (generated < o.max_tokens) {
    const int32_t next = pick_token(logits, V, o.temperature, rng);
    ++generated;
    if (tok.tok->is_end_of_generation(next)) break;
    std::cout << stream.step(next) << std::flush;
    if (generated == o.max_tokens) break;
    one[0] = next;
    logits = step(one, position++);
  }
  std::cout << stream.flush() << "\n" << std::flush;
  const double decode_s = seconds_since(t_decode);
  if (o.stats) {
    std::fprintf(stderr, "load %.2f s | prompt %zu tokens in %.3f s (%.1f tok/s) | generated %lld tokens in %.3f s",
                 load_s, ids.size(), prefill_s, prefill_s > 0 ? double(ids.size()) / prefill_s : 0.0,
                 static_cast<long long>(generated), decode_s);
    // Decode rate counts forward steps after the prefill (the first token comes from the prefill).
    const int64_t steps = std::max<int64_t>(generated - 1, 0);
    std::fprintf(stderr, " (%.1f tok/s decode) | threads %d\n", decode_s > 0 ? double(steps) / decode_s : 0.0,
                 ThreadPool::global().num_threads());
  }
  return 0;
}

}  // namespace

void register_run(CLI::App& app, int& exit_code) {
  auto o = std::make_shared<RunOpts>();
  auto* cmd = app.add_subcommand(
      "run",
      "generate a reply to one prompt (reads the prompt from stdin when none is given; an interactive chat is a later "
      "issue)");
  cmd->add_option("model", o->model, "GGUF file, safetensors directory, or local model id")->required();
  cmd->add_option("prompt", o->prompt, "the user message (default: all of stdin)");
  cmd->add_flag("--raw", o->raw, "feed the prompt as is (BOS added) instead of through the chat template");
  cmd->add_option("--chat-template", o->chat_template_file, "Jinja chat template file (overrides the model's)");
  cmd->add_option("--max-tokens", o->max_tokens, "most tokens to generate")->capture_default_str();
  cmd->add_option("--temperature", o->temperature, "sampling temperature; 0 = greedy")->capture_default_str();
  cmd->add_option("--seed", o->seed, "sampling seed (temperature > 0)")->capture_default_str();
  cmd->add_option("--threads", o->threads, "CPU threads (default: OXYD_NUM_THREADS or all cores)");
  cmd->add_flag("--stats", o->stats, "print load / prompt / decode timings to stderr");
  add_models_dir_option(cmd, o->models_dir);
  cmd->callback([o, &exit_code] { exit_code = run(*o); });
}

}  // namespace oxyd::cli
