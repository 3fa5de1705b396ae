// `oxydllm pull <namespace/repo>`: download one variant of a hub repo into the store (hub/pull.h).
#include <unistd.h>

#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "hub/pull.h"
#include "hub/store.h"

namespace oxyd::cli {

void add_models_dir_option(CLI::App* cmd, std::string& dir) {
  cmd->add_option("--models-dir", dir, "model store (default ~/.oxydllm/models)")->envname("OXYDLLM_MODELS_DIR");
}

std::string models_dir_or_default(const std::string& dir) {
  return dir.empty() ? hub::default_models_dir() : dir;
}

void register_pull(CLI::App& app, int& exit_code) {
  struct Opts {
    std::string repo, models_dir, name, token, variant, revision;
    bool force = false, no_hf_cache = false;
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = app.add_subcommand("pull", "download a model from the Hugging Face hub into the store");
  cmd->add_option("repo", o->repo, "hub repo id, e.g. Qwen/Qwen3-4B-GGUF")->required();
  add_models_dir_option(cmd, o->models_dir);
  cmd->add_option("--name", o->name, "store folder (default: the repo id)");
  cmd->add_option("--token", o->token, "hub token for gated/private repos (default: HF_TOKEN)");
  cmd->add_option("--variant", o->variant, "GGUF quant (e.g. Q4_K_M) or 'safetensors'; case-insensitive");
  cmd->add_option("--revision", o->revision, "branch, tag or commit (default: main)");
  cmd->add_flag("--force", o->force, "download again even if verified files are present");
  cmd->add_flag("--no-hf-cache", o->no_hf_cache, "do not use models already in the Hugging Face cache");
  cmd->callback([o, &exit_code] {
    hub::HubClient client(hub::hub_endpoint_from_env(), hub::hub_token_from_env(o->token));
    client.set_notify([](const std::string& line) { std::cerr << line << std::endl; });
    hub::PullOptions p;
    p.repo = o->repo;
    p.models_dir = models_dir_or_default(o->models_dir);
    p.name = o->name;
    p.variant = o->variant;
    p.revision = o->revision;
    p.force = o->force;
    p.interactive = isatty(STDIN_FILENO) && isatty(STDERR_FILENO);
    if (!o->no_hf_cache) p.hf_cache_dir = hub::hf_hub_cache_dir();
    hub::Progress progress = hub::Progress::for_stderr();
    hub::PullResult r = hub::pull(client, p, progress, std::cin, std::cerr);
    for (const auto& id : r.ids) std::cout << "pulled " << id << " (" << r.dir << ")\n";
    if (r.bytes_downloaded > 0) std::cerr << "downloaded " << hub::format_bytes(r.bytes_downloaded) << "\n";
    exit_code = 0;
  });
}

}  // namespace oxyd::cli
