// The rules of the log that take several statements in one transaction,
// written once for every backend over the primitives of a write transaction
// (write_transaction.h): removing a session while forks still read it, a
// fork's point, title and preview, and a prune that erases what a compaction
// replaced. The Store front (store_front.h) calls them after its own checks.
// Thread-safety: as the backend they are given.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "sessiondb/status.h"
#include "sessiondb/store.h"
#include "store/backend.h"
#include "store/session_view.h"

namespace sessiondb::store {

// Removes the session: hidden while forks read its events, else erased with
// its events, references, usage and drafts, and so is each deleted ancestor
// left without children (a trashed one stays, restorable). With `record`,
// appends it to the ledger in the same transaction, its scope and counts
// (sessions, messages) filled in. kNotFound for a missing session.
Status RemoveSession(Backend& backend, std::string_view id, const LedgerEntry* record = nullptr);

// RemoveSession of every archived session last updated before `before_ms`,
// in one transaction; how many.
Result<int64_t> RemoveArchivedBefore(Backend& backend, int64_t before_ms);

// A fork as the front decided it.
struct ForkRow {
  std::string id;
  std::string title;  // clean; empty: the parent's or the derived one (ForkTitleAndPreview)
  std::optional<std::string> metadata_json;  // canonical; nullopt: the parent's
  int64_t created_ms = 0;
};

// ForkSession's contract (store.h) with the child decided: the fork point is
// checked against the parent inside the transaction that inserts the child,
// which holds the parent against deletion. `view` is the view of the
// parent's log up to at_seq (session_view.h), whose messages the child's
// message_count counts.
Result<Session> InsertFork(Backend& backend, std::string_view parent_id, int64_t at_seq,
                           const ForkRow& child, std::span<const SeqRange> view);

// PruneCompaction's contract (store.h): the session's own messages that the
// compaction replaced become pruned stubs, a title or preview made from them
// is scrubbed, and blobs nothing else refers to are removed after the commit.
Result<PruneReport> PruneCompaction(Backend& backend, std::string_view session_id,
                                    int64_t compaction_seq);

}  // namespace sessiondb::store
