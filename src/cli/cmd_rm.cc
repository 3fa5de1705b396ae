// `oxydllm rm <id>`: delete a model's files and registry entry from the store, after a y/N
// confirmation unless -f. Never touches anything outside the store (hub/remove.h).
#include <unistd.h>

#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "core/error.h"
#include "hub/progress.h"
#include "hub/remove.h"
#include "hub/store.h"

namespace oxyd::cli {

void register_rm(CLI::App& app, int& exit_code) {
  struct Opts {
    std::string id, models_dir;
    bool force = false;
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = app.add_subcommand("rm", "remove a model from the store");
  cmd->add_option("id", o->id, "model id as `oxydllm list` shows it")->required();
  add_models_dir_option(cmd, o->models_dir);
  cmd->add_flag("-f,--force", o->force, "do not ask for confirmation");
  cmd->callback([o, &exit_code] {
    hub::check_model_id(o->id);
    const std::string root = models_dir_or_default(o->models_dir);
    // HF-cache models are resolved too, so that rm can say why it will not delete them.
    auto models = hub::discover_all(root, hub::hf_hub_cache_dir());
    const hub::LocalModel& m = hub::resolve_model(models, o->id, /*allow_prefix=*/false);
    std::vector<hub::LocalModel> store_models;
    for (const auto& x : models)
      if (x.source == hub::ModelSource::STORE) store_models.push_back(x);
    hub::RemovePlan plan = hub::plan_remove(m, store_models, root);
    if (!o->force) {
      std::cerr << "Remove " << m.id << " (" << hub::format_bytes(plan.bytes) << ", " << plan.files.size()
                << " file(s) in " << m.dir << ")? [y/N] " << std::flush;
      std::string answer;
      if (!std::getline(std::cin, answer) || (answer != "y" && answer != "Y" && answer != "yes")) {
        std::cerr << "not removed\n";
        exit_code = 1;
        return;
      }
    }
    hub::execute_remove(plan, root);
    std::cout << "removed " << m.id << "\n";
    exit_code = 0;
  });
}

}  // namespace oxyd::cli
