// Registration of the `sessiondb` verbs, one group per file. Each verb's
// callback runs after parsing, does its work through the Store in `ctx`, and
// reports failure through ctx.Fail (which sets the exit code).
// Thread-safety: single-threaded, like the CLI.
#pragma once

#include <CLI/CLI.hpp>

#include "cli/cli_context.h"

namespace sessiondb::cli {

// init, new, ls, rename, archive, unarchive, purge, active
void AddSessionCommands(CLI::App& app, CliContext& ctx);
// append, show
void AddMessageCommands(CLI::App& app, CliContext& ctx);
// fork, events, compact, prune, view, drafts, project
void AddHarnessCommands(CLI::App& app, CliContext& ctx);
// usage (docs/usage.md)
void AddUsageCommand(CLI::App& app, CliContext& ctx);
// import, export
void AddInteropCommands(CLI::App& app, CliContext& ctx);
// gc, verify, stats, copy
void AddHousekeepingCommands(CLI::App& app, CliContext& ctx);
// rm, trash, erase, ledger, retain (docs/retention.md)
void AddForgetCommands(CLI::App& app, CliContext& ctx);
// `verify --erased FILE`: checks the erasure receipt in FILE against the
// store; exit 0 when all it names is erased, 1 listing the problems.
void VerifyErasureReceipt(CliContext& ctx, const std::string& path);
// key new, key status, key rotate, key rekey, encrypt, decrypt (docs/encryption.md)
void AddKeyCommands(CLI::App& app, CliContext& ctx);
// search, reindex
void AddSearchCommands(CLI::App& app, CliContext& ctx);
// file-history, restore, blame: code checkpoints (docs/memory.md)
void AddCheckpointCommands(CLI::App& app, CliContext& ctx);
// recall, churn, hook
void AddMemoryCommands(CLI::App& app, CliContext& ctx);
// sync (docs/sync.md)
void AddSyncCommand(CLI::App& app, CliContext& ctx);
// serve
void AddServeCommand(CLI::App& app, CliContext& ctx);
// mcp
void AddMcpCommand(CLI::App& app, CliContext& ctx);
// demo
void AddDemoCommand(CLI::App& app, CliContext& ctx);
// open
void AddOpenCommand(CLI::App& app, CliContext& ctx);

}  // namespace sessiondb::cli
