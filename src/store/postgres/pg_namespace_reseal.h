// The rows of a PostgreSQL namespace re-sealed from one key to another, a
// batch at a time, for an in-place conversion (pg_namespace_convert.h). A
// batch runs inside its caller's transaction, which also records how far the
// work got (ResealPosition), so a conversion killed at any point has lost
// nothing and redoes nothing that committed.
//
// What each table holds is converted the way its writers write it:
//   sessions     title, preview, metadata, sealed under the session's id;
//   events       text and body under the event's id (a body names its blobs
//                by their plain SHA-256, inside the seal), with the event's
//                search document and vectors (the events_changed trigger
//                drops them when the text changes: they are re-made here);
//   drafts       text and reasoning under the draft's id;
//   settings     index_meta "setting:" rows under the row's key;
//   code_writes  path, old and new code and project under the keyed content
//                hash, which changes with the key; code_edits' keys; the
//                write's search document and vectors;
//   file_versions  path, project, tool and digest sealed under the version's
//                id (`sealed`; NULL when plaintext), with the stored forms
//                beside it (path and project tokens, the blob's name) remade
//                under the new key;
//   blobs        the namespace's references moved to the blob's name under
//                the new key (a row made there if none), the old row
//                deleted once nothing refers to it (another namespace may).
// Search documents get their tsvector from the opened text with the new key,
// as the index makes it (pg_search_docs.h), so keyword search finds the same.
// hook_seen keys (one-way) and the envelope are the caller's. A batch holds
// at most `limit` rows, 16 MiB of events or code writes (at least one row),
// 64 MiB of blobs: memory stays bounded whatever the namespace holds.
// The blob phase moves every reference of the namespace, file versions'
// (session kFileVersionRefSession) with messages'.
//
// Thread-safety: functions of a connection the caller uses alone.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sessiondb/status.h"
#include "store/postgres/pg_connection.h"

namespace sessiondb::postgres {

// The tables in the order they are converted.
enum class ResealPhase {
  kSessions,
  kEvents,
  kDrafts,
  kSettings,
  kCodeWrites,
  kFileVersions,
  kBlobs,
  kDone
};

// How far a conversion got: the table it works on and the primary key of
// the last row done there (empty: none yet), with what was done so far.
struct ResealPosition {
  ResealPhase phase = ResealPhase::kSessions;
  std::vector<std::string> after;
  int64_t rows = 0;   // rows re-sealed, blobs included
  int64_t blobs = 0;  // blobs converted
};

// The position as the progress row holds it (JSON), and back;
// kCorruption naming the row when it is not one.
std::string EncodeResealPosition(const ResealPosition& at);
Result<ResealPosition> DecodeResealPosition(std::string_view text);

// The keys a conversion opens with (`from`) and seals with (`to`); either
// may be plaintext (PgSealer()).
struct ResealKeys {
  const PgSealer& from;
  const PgSealer& to;
};

// Inside the caller's transaction: re-seals up to `limit` rows of namespace
// `ns` from `*at` on and moves `*at` past them (to the next table once one is
// done; kDone after the last). kCorruption naming the column and record of a
// value that does not open with `keys.from`, or the blob whose bytes do not
// hash to its digest: nothing of the batch is kept then.
Status ResealNextBatch(PgConnection& c, const std::string& ns, const ResealKeys& keys, int limit,
                       ResealPosition* at);

// How many rows a conversion of `ns` re-seals in all (blobs counted once).
Result<int64_t> CountRowsToReseal(PgConnection& c, const std::string& ns);

}  // namespace sessiondb::postgres
