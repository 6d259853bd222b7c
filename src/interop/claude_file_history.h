// Claude Code's own file checkpoints, imported as file versions. Claude Code
// writes a "file-history-snapshot" record into a transcript at each prompt:
// for every file it tracks, the backup that holds the file as it was then
// (`backupFileName`, kept in ~/.claude/file-history/<sessionId>/), or null
// when the file did not exist. Each becomes a FileVersion of the agent's
// session (the transcript's sessionId), phase "after" (the file as the turns
// before the prompt left it), tool "snapshot", source "import", at the
// backup's time, so `file-history`, `blame` and a code rewind see them.
//
// Only the snapshot lines are parsed (a substring test skips the others);
// every backup is read through MayRead (read_confinement.h) and at most
// kMaxFileVersionBytes of it; a backup that is missing, unreadable or too
// large is skipped with its reason, never fatal to the import.
//
// Example:
//   RETURN_IF_ERROR(ImportClaudeFileHistory(transcript_path, sink));
//
// Thread-safety: as the sink's.
#pragma once

#include <filesystem>

#include "interop/import_sink.h"
#include "sessiondb/status.h"

namespace sessiondb::interop {

// Records the versions the snapshots of `transcript` name. The backups are
// looked for in <transcript's folder>/../../file-history/<stem>/ (a
// transcript lives in ~/.claude/projects/<project>/<sessionId>.jsonl).
// Returns how many versions it recorded (kept already: counted too).
Result<int64_t> ImportClaudeFileHistory(const std::filesystem::path& transcript, ImportSink& sink);

}  // namespace sessiondb::interop
