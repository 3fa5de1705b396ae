// The interactive terminal chat of `oxydllm run` (stdin is a TTY and no prompt argument): libedit
// line editing and history, `"""` multi-line blocks, slash commands, and Ctrl-C handling (at the
// prompt it clears the line; during an answer it stops that answer). Not used when stdin is a pipe.
#pragma once

#include <string>

#include "cli/repl_session.h"

namespace oxyd::cli {

/// The /help text (also shown in `oxydllm run --help`).
extern const char* const kReplHelp;

/// Runs the chat until /exit, /quit, /bye or Ctrl-D on an empty line. `history_file` (may be
/// empty) keeps the input lines between sessions. Returns the process exit status (0).
int run_repl(ChatSession& session, const std::string& model_id, const std::string& history_file);

}  // namespace oxyd::cli
