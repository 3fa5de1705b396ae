// oxydllm command-line entry point: parses the verb and its flags (CLI11) and hands off to the
// layer that does the work. Errors print one line naming what went wrong and exit non-zero.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <iostream>
#include <string>

#include "cli/commands.h"
#include "core/error.h"

#ifndef OXYD_VERSION
#define OXYD_VERSION "0.0.0"
#endif

int main(int argc, char** argv) {
  CLI::App app{"oxydllm: a fast LLM inference engine with an OpenAI-compatible server"};
  app.name("oxydllm");
  app.set_version_flag("-V,--version", std::string("oxydllm ") + OXYD_VERSION);
  app.require_subcommand(0, 1);

  int exit_code = -1;  // set by a verb's callback when it ran
  oxyd::cli::register_pull(app, exit_code);
  oxyd::cli::register_list(app, exit_code);
  oxyd::cli::register_rm(app, exit_code);
  oxyd::cli::register_show(app, exit_code);
  oxyd::cli::register_estimate(app, exit_code);
  oxyd::cli::register_run(app, exit_code);
  oxyd::cli::register_start(app, exit_code);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // `start` is run by service managers and scripts: a bad flag is one line and exit 2.
    if (e.get_exit_code() != 0 && argc > 1 && std::string(argv[1]) == "start") {
      std::fprintf(stderr, "oxydllm start: %s\n", e.what());
      return 2;
    }
    return app.exit(e);
  } catch (const oxyd::Error& e) {
    std::fprintf(stderr, "oxydllm: %s\n", e.what());
    return 1;
  } catch (const std::exception& e) {  // std::filesystem and friends, from a verb's callback
    std::fprintf(stderr, "oxydllm: %s\n", e.what());
    return 1;
  }
  if (exit_code >= 0) return exit_code;
  try {
    std::cout << app.help();
    return 0;
  } catch (const oxyd::Error& e) {
    std::fprintf(stderr, "oxydllm: %s\n", e.what());
    return 1;
  }
}
