// `oxydllm show <id>`: architecture, parameters, context, layer geometry, quantization, tokenizer,
// chat template and files of a local model, read from headers and small JSON files only.
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
  cmd->add_option("id", o->id, "model id as `oxydllm list` shows it")->required();
  add_models_dir_option(cmd, o->models_dir);
  cmd->callback([o, &exit_code] {
    hub::check_model_id(o->id);
    auto models = hub::discover_all(models_dir_or_default(o->models_dir), hub::hf_hub_cache_dir());
    const hub::LocalModel& m = hub::resolve_model(models, o->id, /*allow_prefix=*/true);
    std::cout << hub::render_show(m, hub::read_local_meta(m));
    exit_code = 0;
  });
}

}  // namespace oxyd::cli
