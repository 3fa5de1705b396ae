// `oxydllm run MODEL ["prompt"]`: chat with a model in the terminal. With a prompt argument, or
// when stdin is not a terminal (then all of stdin is the prompt), it answers once and exits;
// otherwise it is an interactive chat (repl.cc). MODEL is a GGUF file, a safetensors directory or a
// local store id. Generation goes through the same LLMEngine / Generation as the HTTP server.
#include <pthread.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <iterator>
#include <memory>
#include <optional>
#include <random>
#include <string>

#include "cli/commands.h"
#include "cli/repl.h"
#include "cli/repl_session.h"
#include "core/error.h"
#include "core/file_util.h"
#include "core/thread_pool.h"
#include "engine/llm_engine.h"
#include "hub/store.h"

namespace oxyd::cli {
namespace {

namespace fs = std::filesystem;

// A user-facing check: throws Error(code, msg) (OXYD_CHECK is for internal invariants).
void require(bool cond, ErrorCode code, const std::string& msg) {
  if (!cond) throw_error(code, msg);
}

struct RunOpts {
  std::string model, prompt, models_dir, chat_template_file, system, kv_dtype = kv_dtype_flag(kDefaultKvFormat),
                                                                 kv_quant = "off", device = "auto", dtype = "auto";
  double gpu_memory_utilization = 0.9;
  bool raw = false, stats = false;
  // An answer ends at the model's end-of-turn / EOS tokens; this bounds one that never emits them
  // (a base model looping until the context was full took 161 s, issue 21).
  int max_tokens = 1024;
  double temperature = 0.0, top_p = 1.0, min_p = 0.0, repeat_penalty = 1.0;
  int top_k = 0;
  int max_context_len = 4096;
  int threads = 0;
  std::optional<uint64_t> seed;
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

// ~/.oxydllm/history (input lines of the interactive chat); empty when there is no HOME.
std::string history_path() {
  const char* home = std::getenv("HOME");
  if (home == nullptr || *home == 0) return "";
  std::error_code ec;
  const fs::path dir = fs::path(home) / ".oxydllm";
  fs::create_directories(dir, ec);
  return ec ? "" : (dir / "history").string();
}

int run(const RunOpts& o) {
  require(o.max_tokens == -1 || o.max_tokens >= 1, ErrorCode::INVALID_ARGUMENT,
          "--max-tokens must be -1 (up to the context) or >= 1");
  require(std::isfinite(o.temperature) && o.temperature >= 0, ErrorCode::INVALID_ARGUMENT,
          "--temperature must be a finite number >= 0");
  require(o.max_context_len >= 1, ErrorCode::INVALID_ARGUMENT, "--max-context-len must be >= 1");
  parse_kv_format(o.kv_dtype, o.kv_quant);  // bad values fail before the model loads
  parse_dtype(o.dtype);
  if (o.threads > 0) ThreadPool::set_global_threads(o.threads);
  const std::string path = resolve_model_path(o);

  const bool interactive = o.prompt.empty() && isatty(STDIN_FILENO);
  if (interactive) {
    // Engine and pool threads start with SIGINT blocked, so Ctrl-C always reaches the main thread
    // (run_repl unblocks it there): its read() must see EINTR.
    sigset_t sigint;
    sigemptyset(&sigint);
    sigaddset(&sigint, SIGINT);
    pthread_sigmask(SIG_BLOCK, &sigint, nullptr);
  }
  std::string prompt = o.prompt;
  if (prompt.empty() && !interactive) {  // piped stdin: all of it is one prompt
    prompt.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
    while (!prompt.empty() && (prompt.back() == '\n' || prompt.back() == '\r')) prompt.pop_back();
    require(!prompt.empty(), ErrorCode::INVALID_ARGUMENT, "the prompt is empty (stdin had no text)");
  }

  SessionOptions so;
  so.raw = o.raw;
  so.stats = o.stats;
  so.max_tokens = o.max_tokens;
  so.system_prompt = o.system;
  so.sampling.temperature = static_cast<float>(o.temperature);
  so.sampling.top_k = o.top_k;
  so.sampling.top_p = static_cast<float>(o.top_p);
  so.sampling.min_p = static_cast<float>(o.min_p);
  so.sampling.repetition_penalty = static_cast<float>(o.repeat_penalty);
  so.seed = o.seed ? *o.seed : std::random_device{}();
  so.sampling.seed = so.seed;

  engine::ModelOptions mo;
  mo.max_context_len = o.max_context_len;
  mo.max_num_seqs = 1;
  mo.kv_format = parse_kv_format(o.kv_dtype, o.kv_quant);
  mo.device = prepare_device(o.device);
  mo.f32_as_bf16 = parse_dtype(o.dtype);
  mo.gpu_memory_utilization = o.gpu_memory_utilization;
  if (!o.chat_template_file.empty()) mo.chat_template = read_text_file(o.chat_template_file);
  const auto t_load = std::chrono::steady_clock::now();
  std::unique_ptr<engine::LLMEngine> model = engine::LLMEngine::create(o.model, path, mo);
  if (o.stats)
    std::fprintf(stderr, "[load %.2f s | context %d tokens | KV %s | threads %d]\n",
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - t_load).count(),
                 model->max_context_len(), std::string(kv_format_name(model->kv_format())).c_str(),
                 ThreadPool::global().num_threads());

  ChatSession session(*model, so);
  if (interactive) return run_repl(session, o.model, history_path());
  session.answer(prompt, stdout, nullptr);
  std::fputs("\n", stdout);
  std::fflush(stdout);
  return 0;
}

}  // namespace

void register_run(CLI::App& app, int& exit_code) {
  auto o = std::make_shared<RunOpts>();
  auto* cmd = app.add_subcommand(
      "run",
      "chat with a model in the terminal; with a prompt argument or piped stdin, answer once and exit");
  cmd->footer(std::string("\nInteractive chat (stdin is a terminal, no prompt argument):\n") + kReplHelp +
              "The conversation so far is sent again through the chat template every turn.\n"
              "Sampling is greedy by default (--temperature 0: the same prompt gives the same answer);\n"
              "e.g. --temperature 0.7 --top-p 0.9 for varied answers.");
  cmd->add_option("model", o->model, "GGUF file, safetensors directory, or local model id")->required();
  cmd->add_option("prompt", o->prompt, "answer this one message and exit (default: chat, or all of stdin when piped)");
  cmd->add_option("--system", o->system, "system prompt");
  cmd->add_flag("--raw", o->raw, "feed each prompt as is (BOS added) instead of through the chat template; no history");
  cmd->add_option("--chat-template", o->chat_template_file, "Jinja chat template file (overrides the model's)");
  cmd->add_option("--max-tokens", o->max_tokens,
                  "most tokens per answer (an answer also ends at the model's end-of-turn token); -1 = up to "
                  "the context")
      ->capture_default_str();
  cmd->add_option("--max-context-len", o->max_context_len, "context length (prompt + answer; clamped to the model's)")
      ->capture_default_str();
  cmd->add_option("--kv-dtype", o->kv_dtype, "KV-cache element type: f32, f16 or bf16")
      ->envname("OXYDLLM_KV_DTYPE")->capture_default_str();
  cmd->add_option("--kv-quant", o->kv_quant,
                  "KV-cache quantization: off, " + kv_quant_help() + " (seed: 4/3/2 bits, too lossy; q2..q6/q8 pick a width)")
      ->envname("OXYDLLM_KV_QUANT")->capture_default_str();
  add_device_options(cmd, o->device, o->gpu_memory_utilization);
  add_dtype_option(cmd, o->dtype);
  cmd->add_option("--temperature", o->temperature, "sampling temperature; 0 = greedy")->capture_default_str();
  cmd->add_option("--top-k", o->top_k, "keep the k most likely tokens; 0 = off")->capture_default_str();
  cmd->add_option("--top-p", o->top_p, "nucleus sampling mass in [0, 1] (0: the top token only)")
      ->capture_default_str();
  cmd->add_option("--min-p", o->min_p, "drop tokens below min_p x the top probability; 0 = off")->capture_default_str();
  cmd->add_option("--repeat-penalty", o->repeat_penalty, "repetition penalty (HF); 1 = off")->capture_default_str();
  cmd->add_option("--seed", o->seed, "sampling seed (default: random)");
  cmd->add_option("--threads", o->threads, "CPU threads (default: OXYD_NUM_THREADS or all cores)");
  cmd->add_flag("--stats", o->stats, "print load time and per-answer prompt / first-token / decode figures to stderr");
  add_models_dir_option(cmd, o->models_dir);
  cmd->callback([o, &exit_code] { exit_code = run(*o); });
}

}  // namespace oxyd::cli
