// Vectors for what `sessiondb import` brought in, without the user asking
// (issue 38): a search after an import finds imported messages in vector and
// hybrid mode with no `sessiondb reindex` first.
//
// The built-in embedder took 1.8 s per 10,000 messages of ~500 bytes and
// 10.8 s per 10,000 of ~4 KiB on the 2-core development VM: about what the
// import of them took. So the import embeds for up to kInlineEmbedSeconds at
// its end, with a progress bar on stderr (a few thousand messages: all of
// them), and leaves the rest, or any backlog of an embedder behind an
// endpoint (its speed is unknown), to a detached `sessiondb reindex` child
// that outlives the import. Until it is done a hybrid search ranks the
// documents it has not reached by keyword alone (the result's
// pending_embeddings counts them), saying nothing.
//
// Thread-safety: single-threaded, like the CLI.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>

#include "cli/cli_context.h"

namespace sessiondb::cli {

// How long an import embeds before it leaves the rest to the background;
// $SESSIONDB_INLINE_EMBED_SECONDS overrides it (0: all in the background).
inline constexpr double kInlineEmbedSeconds = 5;
// Documents embedded between two looks at the clock.
inline constexpr int64_t kInlineEmbedChunk = 1024;

struct ImportEmbedding {
  int64_t embedded = 0;      // vectors computed inline
  int64_t background = 0;    // pending documents left to the background child
  pid_t background_pid = 0;  // that child; 0 when none was started
  std::string error;         // why embedding stopped; the import stands regardless
};

// Embeds the store's pending documents for up to kInlineEmbedSeconds, then
// starts the background child for what is left (see above). Never fails the
// import: a failure is returned in `error` for the caller to mention. Closes
// the store before starting a child, so the child inherits none of its
// descriptors or locks.
ImportEmbedding EmbedImported(CliContext& ctx);

// Starts `sessiondb [--store S] [--namespace N] [--key-file K] reindex` as a
// daemon: its own session, niced, stdio on /dev/null, no descriptor of ours
// but an flock on the store's embedding lock file (under the state directory,
// $XDG_STATE_HOME/sessiondb), which it holds until it exits, so background
// embedders of one store run one after another, never side by side. Returns
// the child's pid, or kIoError when it could not fork.
Result<pid_t> StartBackgroundReindex(const CliContext& ctx);

}  // namespace sessiondb::cli
