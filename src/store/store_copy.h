// Copying a whole store to another, whatever their backends: embedded to
// PostgreSQL when a team outgrows one machine, and back. Sessions keep their
// ids, titles, times, archive flags, metadata, messages (ids, seqs and
// timestamps) and blobs; the active session and the file versions come along.
//
// Each session is written in one transaction, so an interrupted copy leaves
// whole sessions only; running it again skips what is already there. A fork
// whose parent was deleted (kept hidden for its forks) stays a fork: the
// ancestors it reads are restored with the events it inherits, under their
// own ids, and deleted again in the destination, where they are kept hidden
// for it as in the source.
// Thread-safety: as the two stores'.
#pragma once

#include <cstdint>

#include "sessiondb/store.h"

namespace sessiondb {

struct CopyReport {
  int64_t sessions_copied = 0;
  int64_t sessions_skipped = 0;  // already in the destination with the same log length
  int64_t messages_copied = 0;
  int64_t file_versions_copied = 0;  // code checkpoints `to` did not hold
};

// Copies every session of `from` (archived ones too) into `to`. A session
// `to` already holds with the same last seq is skipped; one it holds with a
// different log is a kAlreadyExists conflict naming it (nothing is
// overwritten). Then the file versions (code checkpoints) `to` lacks, with
// their contents: one of a tool call is kept once by its key, one without
// (sessiondb's own writes) is skipped when `to` holds the same (agent
// session, path, phase, content, source, time), so copying again adds
// nothing. `progress` gets (sessions done, sessions in all).
Result<CopyReport> CopyStore(Store& from, Store& to, const ProgressFn& progress = {});

// Copies the file versions of `from` with an id past `after_id` that `to`
// lacks (as CopyStore does), in the order recorded: how many `to` had not
// held, and in *last_id the id of the last one read (after_id when none),
// where the next call may start.
Result<int64_t> CopyFileVersionsAfter(Store& from, Store& to, int64_t after_id, int64_t* last_id);

}  // namespace sessiondb
