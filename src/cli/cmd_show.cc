// `oxydllm show <model>`: architecture, parameters, context, layer geometry, quantization,
// tokenizer, chat template and files of a local model, read from headers and small JSON files
// only. <model> is a local id (as `oxydllm list` shows it), a .gguf file or a model directory.
#include <filesystem>
#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "hub/model_meta.h"
#include "hub/report.h"
#include "hub/store.h"

namespace oxyd::cli {

void register_show(CLI::App& app, int& exit_code) {
  struct Opts {
    std::string id, models_dir;
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = app.add_subcommand("show", "describe a local model");
  cmd->add_option("model", o->id, "model id as `oxydllm list` shows it, a .gguf file, or a model directory")->required();
  add_models_dir_option(cmd, o->models_dir);
  cmd->callback([o, &exit_code] {
    auto show = [&](const hub::LocalModel& m) {
      std::cout << hub::render_show(m, hub::read_local_meta(m));
      exit_code = 0;
    };
    std::error_code ec;
    if (std::filesystem::exists(o->id, ec)) return show(hub::local_model_for_path(o->id));
    hub::check_model_id(o->id);
    auto models = hub::discover_all(models_dir_or_default(o->models_dir), hub::hf_hub_cache_dir());
    show(hub::resolve_model(models, o->id, /*allow_prefix=*/true));
  });
}

}  // namespace oxyd::cli
