// The `sessiondb` command line: every verb's options built, the line parsed,
// the verb run, and what happened turned into an exit code (output.h). The
// program runs it once (main.cc); the resident server runs it for each read
// it answers (served_reads.h), on a context that borrows its open store.
//
// Example:
//   CliContext ctx;
//   return *RunCommandLine(ctx, argc, argv);
//
// Thread-safety: single-threaded, like the CLI (the verbs print to std::cout).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cli/cli_context.h"

namespace sessiondb::cli {

// Runs `argv` (argv[0] is the program) on `ctx` and returns its exit code.
// With `only_verbs`, a line whose verb is not one of them runs nothing and
// returns nullopt; without it, never nullopt.
std::optional<int> RunCommandLine(CliContext& ctx, int argc, char** argv,
                                  const std::vector<std::string>* only_verbs = nullptr);

}  // namespace sessiondb::cli
