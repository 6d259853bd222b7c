// Long output on a terminal goes through a pager, as git's does: the output
// of the verb is piped into `$SESSIONDB_PAGER`, else `$PAGER`, else
// `less -FRX` (which quits at once when the text fits the screen, passes our
// colours through and leaves the text on the screen afterwards).
//
// Example:
//   std::unique_ptr<Pager> pager = Pager::Start(PagerCommand());
//   std::cout << long_text;   // read by the pager
//   pager.reset();            // waits for the person to quit it
//
// Thread-safety: single-threaded, like the CLI; it swaps the process's
// standard output.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>

namespace sessiondb::cli {

// The pager to run: $SESSIONDB_PAGER, else $PAGER, else "less -FRX" (empty
// variables count as unset). Empty when there should be none: the command is
// "cat" or empty (git's convention), or the default and `less` is not on the
// PATH (output that nobody reads would be lost).
std::string PagerCommand();

class Pager {
 public:
  // Runs `command` through /bin/sh with its stdin a pipe and makes that pipe
  // the process's stdout; the pager writes to the terminal stdout was. Sets
  // LESS=FRX for it when LESS is unset, as git does. nullptr (stdout
  // untouched) when the pipe or the process cannot be made.
  static std::unique_ptr<Pager> Start(const std::string& command);

  // Flushes what is left, gives stdout back to the terminal (the pager sees
  // the end of its input) and waits for the pager to exit, so the shell's
  // prompt does not come back under it.
  ~Pager();
  Pager(const Pager&) = delete;
  Pager& operator=(const Pager&) = delete;

 private:
  Pager(pid_t pid, int saved_stdout) : pid_(pid), saved_stdout_(saved_stdout) {}
  pid_t pid_;
  int saved_stdout_;  // the terminal, restored on destruction
};

}  // namespace sessiondb::cli
