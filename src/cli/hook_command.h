// `sessiondb hook claude-code`: one Claude Code hook event read from stdin,
// answered on stdout. Claude Code runs it as a process before and after every
// file write and waits for it, so its start is on the agent's critical path:
// RunHookFastPath answers a plain hook command line before the rest of the
// CLI (every verb's options) is built (docs/memory.md, "Cost").
// Thread-safety: single-threaded, like the CLI.
#pragma once

#include <memory>
#include <optional>
#include <string_view>

#include "cli/cli_context.h"

namespace sessiondb::cli {

// Opens the store of `ctx` (created if missing) as the hook uses it
// (process-crash-safe when embedded) and its code memory on the store's own
// connection. The error names the store.
Status OpenHookStore(CliContext& ctx, std::unique_ptr<Store>* store,
                     std::unique_ptr<CodeMemory>* memory);

// Handles one event: reads it from stdin (at most kMaxHookEventBytes), has
// the resident server of the store answer it when one runs (hook_server.h),
// else opens the store of `ctx` (OpenHookStore) and answers itself; answers
// on stdout and logs to stderr. Never fails the agent: every error is logged and
// the exit code is kExitOk. `seen_mode` is --seen (content, file,
// session-file; anything else is logged and content is used). With
// `leave_store_open`, the store and memory are left to the process's end
// (the fast path, which then calls _Exit): closing the last connection
// would checkpoint the WAL on every call. The full CLI closes them.
// `checkpoints` keeps the file versions of the event's tool call
// (HandleClaudeCodeHook); false is --no-checkpoints. With `resident`
// (--resident), a call answered here starts the server for the next ones.
void RunClaudeCodeHook(CliContext& ctx, std::string_view seen_mode, bool leave_store_open,
                       bool checkpoints = true, bool resident = false);

// The hook before the CLI: when argv is `hook claude-code` with at most the
// global options --store, --namespace (each once, `--opt VALUE` or
// `--opt=VALUE`), --fast, --json and --no-pager, and `--seen MODE` and
// `--no-checkpoints` and `--resident` (once) after the verb, in any order CLI11 accepts,
// runs RunClaudeCodeHook and returns the
// process's exit code. Anything else (--help, a size option, an unknown or
// repeated option, `--`) returns nullopt and the full CLI parses the line,
// with its own answers and errors.
std::optional<int> RunHookFastPath(int argc, char** argv);

}  // namespace sessiondb::cli
