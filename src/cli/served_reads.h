// The read verbs `ls` and `show` answered by the resident server
// (hook_server.h), so a script or an agent that lists and reads sessions
// on a PostgreSQL store does not load libpq and start a server backend on
// every call, and on an embedded store does not open it and read its
// schema (docs/cli.md, "Reads answered by the resident server").
//
// The command asks only when its stdout is not a terminal (a terminal's
// pager, colours and width belong to the process that has it). It sends
// its arguments and the variables its output depends on (TZ, COLUMNS); the
// server runs the same command line on a context that borrows its open
// store, with stdout and stderr in two memory files, and passes both files
// back with the exit code. The command copies them to its own stdout and
// stderr. Nothing has been printed before the answer arrives, so a command
// that got none (no server, a busy or lost one) answers alone.
//
// Request body: (NAME "=" VALUE "\0")* "\0" (ARGUMENT "\0")+, at most
// kMaxReadRequestBytes; NAME is TZ or COLUMNS; the arguments are argv
// without the program, and their verb must be one of kServedReadVerbs.
//
// Thread-safety: single-threaded, like the CLI.
#pragma once

#include <array>
#include <cstddef>
#include <string_view>

#include "cli/cli_context.h"
#include "cli/unix_socket.h"

namespace sessiondb::cli {

inline constexpr size_t kMaxReadRequestBytes = size_t{1} << 20;
inline constexpr size_t kMaxReadArguments = 1024;
inline constexpr std::array<std::string_view, 2> kServedReadVerbs = {"ls", "show"};

// For the verbs of kServedReadVerbs, first thing in their callback: true
// when the resident server of the store of `ctx` answered the command line
// (its stdout and stderr are written and the exit code set); false, with
// nothing printed, when the verb must answer itself.
bool AnsweredByResidentServer(CliContext& ctx);

// True for a request line of a read ("read LENGTH").
bool IsReadRequestLine(std::string_view line);

// The server's side: reads the request whose line is `line` from `fd` by
// `deadline`, runs it on `store` and answers. A request over the limits, of
// another verb or malformed is closed unanswered (the command answers
// alone), with a line on stderr unless `quiet`.
void AnswerReadRequest(int fd, std::string_view line, SocketClock::time_point deadline,
                       Store* store, bool quiet);

}  // namespace sessiondb::cli
