// The code half of `sessiondb rewind` (--code, --code-only), which lives
// with the checkpoint verbs (file-history, restore, blame) in
// checkpoint_commands.cc; AddRewind (harness_commands.cc) calls it.
// Thread-safety: single-threaded, like the CLI.
#pragma once

#include <cstdint>
#include <string>

#include "cli/cli_context.h"

namespace sessiondb::cli {

// What a rewind rewinds: the conversation (the default), the files the
// session's agent wrote, or both.
enum class RewindScope { kConversation, kCode, kCodeOnly };

struct RewindRequest {
  std::string session_id;  // resolved
  int64_t to_seq = 0;
  RewindScope scope = RewindScope::kConversation;
  bool dry_run = false;
  bool force = false;
};

// Runs a rewind whose scope includes the code: plans it, prints it, and
// unless dry_run writes the files and then (kCode) rewinds the
// conversation. A conflict without force, or a path that is refused,
// changes nothing and exits 7 listing them.
void RunCodeRewind(CliContext& ctx, const RewindRequest& request);

}  // namespace sessiondb::cli
