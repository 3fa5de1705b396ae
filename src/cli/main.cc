// oxydllm command-line entry point: parses the verb and its flags (CLI11) and hands off to the
// layer that does the work. Errors print one line naming what went wrong and exit non-zero.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <iostream>

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

  auto* start = app.add_subcommand("start", "serve models over an OpenAI-compatible HTTP API");
  std::string host = "127.0.0.1";
  int port = 11313;
  start->add_option("--host", host, "address to bind")->envname("OXYDLLM_HOST")->capture_default_str();
  start->add_option("--port", port, "port to listen on")->envname("OXYDLLM_PORT")->capture_default_str();

  int exit_code = -1;  // set by a verb's callback when it ran
  oxyd::cli::register_pull(app, exit_code);
  oxyd::cli::register_list(app, exit_code);
  oxyd::cli::register_rm(app, exit_code);
  oxyd::cli::register_show(app, exit_code);
  oxyd::cli::register_estimate(app, exit_code);
  oxyd::cli::register_run(app, exit_code);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
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
    if (app.got_subcommand(start)) {
      std::fprintf(stderr, "oxydllm start: the server is not built yet (see the open serving issue)\n");
      return 2;
    }
    std::cout << app.help();
    return 0;
  } catch (const oxyd::Error& e) {
    std::fprintf(stderr, "oxydllm: %s\n", e.what());
    return 1;
  }
}
