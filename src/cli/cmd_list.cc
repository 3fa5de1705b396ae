// `oxydllm list`: every local model (store, then the Hugging Face cache) as a table of id,
// architecture, format, size and where it lives.
#include <cstdio>
#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "core/error.h"
#include "hub/model_arch.h"
#include "hub/progress.h"
#include "hub/store.h"

namespace oxyd::cli {

void register_list(CLI::App& app, int& exit_code) {
  struct Opts {
    std::string models_dir;
    bool no_hf_cache = false;
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = app.add_subcommand("list", "list local models");
  add_models_dir_option(cmd, o->models_dir);
  cmd->add_flag("--no-hf-cache", o->no_hf_cache, "do not list models in the Hugging Face cache");
  cmd->callback([o, &exit_code] {
    const std::string root = models_dir_or_default(o->models_dir);
    const std::string hf = o->no_hf_cache ? "" : hub::hf_hub_cache_dir();
    auto models = hub::discover_all(root, hf);
    size_t w_id = 2, w_arch = 12;
    std::vector<std::string> archs, formats;
    for (const auto& m : models) {
      std::string a, f = hub::format_name(m.format);
      try {
        a = hub::model_architecture(m);
        f = hub::model_format_label(m);
      } catch (const Error& e) {
        a = "unreadable";
        std::fprintf(stderr, "warning: %s: %s\n", m.id.c_str(), e.what());
      }
      archs.push_back(a);
      formats.push_back(f);
      w_id = std::max(w_id, m.id.size());
      w_arch = std::max(w_arch, a.size());
    }
    std::printf("%-*s  %-*s  %-20s  %10s  %s\n", int(w_id), "ID", int(w_arch), "ARCHITECTURE", "FORMAT", "SIZE", "WHERE");
    size_t n_cache = 0;
    for (size_t i = 0; i < models.size(); ++i) {
      const auto& m = models[i];
      const std::string& fmt = formats[i];
      std::printf("%-*s  %-*s  %-20s  %10s  %s: %s\n", int(w_id), m.id.c_str(), int(w_arch), archs[i].c_str(),
                  fmt.c_str(), hub::format_bytes(m.size_bytes).c_str(), hub::source_name(m.source).c_str(),
                  m.dir.c_str());
      n_cache += m.source == hub::ModelSource::HF_CACHE;
    }
    std::printf("%zu model(s) in %s", models.size() - n_cache, root.c_str());
    if (!hf.empty()) std::printf(", %zu in the Hugging Face cache %s", n_cache, hf.c_str());
    std::printf("\n");
    exit_code = 0;
  });
}

}  // namespace oxyd::cli
