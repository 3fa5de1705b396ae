// `oxydllm estimate <model>`: memory needed to serve a model (hub/estimate.h says exactly what
// is counted). It takes start's KV flags and prints the pool start allocates with them. <model> is a local file or directory, a local id, or a hub repo id (then one row
// per variant, read from GGUF headers by Range requests; no weights are downloaded).
#include <filesystem>
#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "core/error.h"
#include "engine/llm_engine.h"
#include "hub/report.h"
#include "hub/store.h"
#include "model/weights.h"

namespace oxyd::cli {

void register_estimate(CLI::App& app, int& exit_code) {
  struct Opts {
    std::string model, models_dir, token, variant, revision, kv_quant = "off", kv_dtype = kv_dtype_flag(kDefaultKvFormat);
    int64_t context_len = 0, num_sequences = 0, kv_cache_mb = 0, max_batch_tokens = 1024;
    bool remote = false;
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = app.add_subcommand("estimate", "estimate the memory a model needs (local or on the hub)");
  cmd->add_option("model", o->model, "local file/dir, local id, or hub repo id")->required();
  add_models_dir_option(cmd, o->models_dir);
  cmd->add_option("--token", o->token, "hub token for gated/private repos (default: HF_TOKEN)");
  // `oxydllm start`'s names (and defaults), so the same flags give what start allocates.
  cmd->add_option("--max-context-len,--context-len", o->context_len,
                  "tokens per sequence (0 = auto: the model's trained context, capped by memory)")
      ->envname("OXYDLLM_MAX_CONTEXT_LEN")->capture_default_str();
  cmd->add_option("--max-num-seqs,--num-sequences", o->num_sequences,
                  "sequences run together; the pool holds this many full contexts (0 = auto)")
      ->envname("OXYDLLM_MAX_NUM_SEQS")->capture_default_str();
  cmd->add_option("--kv-cache-mb", o->kv_cache_mb, "KV-cache pool in MB (0 = auto)")
      ->envname("OXYDLLM_KV_CACHE_MB")->capture_default_str();
  cmd->add_option("--kv-quant", o->kv_quant, "KV cache quantization: off, " + kv_quant_help() + " (seed: 4/3/2 bits, too lossy; q2..q6/q8 pick a width)")
      ->envname("OXYDLLM_KV_QUANT")->capture_default_str();
  cmd->add_option("--kv-dtype", o->kv_dtype, "KV cache element type when not quantized: f32, f16, bf16 (default: the server's)")
      ->envname("OXYDLLM_KV_DTYPE")->capture_default_str();
  cmd->add_option("--max-num-batched-tokens,--max-batch-tokens", o->max_batch_tokens,
                  "tokens per engine step (sizes activation buffers)")
      ->envname("OXYDLLM_MAX_NUM_BATCHED_TOKENS")->capture_default_str();
  cmd->add_option("--variant", o->variant, "hub repo: only this variant");
  cmd->add_option("--revision", o->revision, "hub repo: branch, tag or commit");
  cmd->add_flag("--remote", o->remote, "treat <model> as a hub repo id even if a local model matches");
  cmd->callback([o, &exit_code] {
    if (o->context_len < 0 || o->num_sequences < 0 || o->kv_cache_mb < 0)
      throw_error(ErrorCode::INVALID_ARGUMENT, "--max-context-len, --max-num-seqs and --kv-cache-mb must be >= 0 (0 = auto)");
    hub::EstimateParams p;
    p.server_kv = hub::ServerKvFlags{o->context_len, o->num_sequences, o->kv_cache_mb << 20};
    p.kv_format = parse_kv_format(o->kv_dtype, o->kv_quant);  // default: the server's (kDefaultKvFormat)
    p.max_batch_tokens = o->max_batch_tokens;
    // The copies this machine's matmul packs weights into (a family the engine lacks: as stored).
    p.packed_extra = [](const loader::ModelConfig& c, const std::vector<loader::GgufTensorInfo>& tensors) {
      return model::packed_weight_extra_bytes(c, tensors);
    };
    auto local = [&](const hub::LocalModel& m) {
      std::cout << hub::render_local_estimate(m, hub::read_local_meta(m), p);
      exit_code = 0;
    };
    std::error_code ec;
    if (!o->remote && std::filesystem::exists(o->model, ec)) return local(hub::local_model_for_path(o->model));
    if (!o->remote) {
      hub::check_model_id(o->model);
      auto models = hub::discover_all(models_dir_or_default(o->models_dir), hub::hf_hub_cache_dir());
      try {
        return local(hub::resolve_model(models, o->model, /*allow_prefix=*/true));
      } catch (const Error& e) {
        if (e.code() != ErrorCode::NOT_FOUND || o->model.find('/') == std::string::npos) throw;
      }
    }
    hub::HubClient client(hub::hub_endpoint_from_env(), hub::hub_token_from_env(o->token));
    hub::RemoteEstimateOptions r{o->model, o->revision, o->variant, p};
    std::cout << hub::remote_estimate(client, r);
    exit_code = 0;
  });
}

}  // namespace oxyd::cli
