// The `sessiondb` command: answers the Claude Code hook at once, else runs
// the command line (command_line.h) and turns what escaped it into an exit
// code (see output.h).
#include <cstdlib>
#include <exception>
#include <iostream>
#include <optional>

#include "cli/command_line.h"
#include "cli/hook_command.h"
#include "cli/output.h"

using namespace sessiondb::cli;

// The program; main() below only catches what escapes it.
static int RunProgram(int argc, char** argv) {
  // Claude Code waits for the hook on every file write: answer it before the
  // other verbs' options are built.
  // Its output is flushed; the exit handlers (static destructors, OpenSSL's
  // cleanup) would only cost it time.
  if (std::optional<int> hook_exit = RunHookFastPath(argc, argv)) {
    std::cerr.flush();
    std::_Exit(*hook_exit);
  }
  CliContext ctx;
  return *RunCommandLine(ctx, argc, argv);
}

int main(int argc, char** argv) {
  try {
    return RunProgram(argc, argv);
  } catch (const std::exception& e) {
    // Building the verbs or writing their output failed (an allocation, a
    // stream): the verbs answer the user's input with values, never by throwing.
    std::cerr << "sessiondb: internal error: " << EscapeForTerminal(e.what()) << "\n";
  } catch (...) {
    std::cerr << "sessiondb: internal error\n";
  }
  return kExitStorageError;
}
