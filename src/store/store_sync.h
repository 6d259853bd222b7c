// Two-way sync between two stores of any backends (docs/sync.md): an embedded
// store on a laptop and a shared PostgreSQL namespace, or two of either. Each
// run brings both up to date with each other through the public Store API,
// incrementally (per session, only the events past the other side's last seq),
// and is idempotent: a second run changes nothing and reports 0.
//
// What travels: new sessions and new events (messages, rewinds, compactions,
// resource views, with their ids, seqs and times; blobs with them), the trash
// and restores from it, deletions and erasures (never undone by a later
// sync), renames and the archive flag; then the file versions (code
// checkpoints) each store recorded since the last run, those of erased
// sessions excepted (erasure runs first). Appends made on both sides to one
// session since the last sync come back as a fork: the branch whose first
// new event is older stays the session, the other becomes a fork of it at the
// last common seq, in both stores, and nothing is lost.
//
// State: each store keeps its sync identity, and for each peer the state of
// every session both held at the end of the last run (the base a deletion or
// a trash is told from), as settings of the store (PostgreSQL: of its
// namespace). A session is written per transaction (long logs in runs of
// SyncOptions::batch_events), so a run killed at any instant leaves whole
// steps, and the next run continues from them.
//
// Thread-safety: as the two stores'. Two syncs of the same pair at once are
// not coordinated (a conflict is an error; rerun).
//
// Example:
//   ASSIGN_OR_RETURN(auto laptop, Store::Open("/home/me/.local/share/sessiondb"));
//   ASSIGN_OR_RETURN(auto shared, Store::Open("postgresql://me@db/chats"));
//   ASSIGN_OR_RETURN(SyncReport report, SyncStores(*laptop, *shared));
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "sessiondb/store.h"

namespace sessiondb {

struct SyncOptions {
  // Events per transaction when a long log is copied: a kill loses at most
  // one run's work, which the next sync redoes.
  int64_t batch_events = 2000;
  // Tests: called after each durable step of a divergence's replacement
  // ("marked", "fork-written", "deleted", "restored"); an error it returns
  // ends the run there, as a kill at that instant would.
  std::function<Status(std::string_view step)> after_step;
};

// What one run changed in one of the two stores.
struct SyncChanges {
  int64_t sessions_created = 0;  // sessions copied in whole (forks made of a divergence too)
  int64_t events_copied = 0;     // every event written, messages included
  int64_t messages_copied = 0;
  int64_t trashed = 0;
  int64_t restored = 0;              // taken out of the trash
  int64_t erased = 0;                // erased or deleted, as the other store did
  int64_t updated = 0;               // renamed or (un)archived
  int64_t file_versions_copied = 0;  // code checkpoints it did not hold
  int64_t total() const {
    return sessions_created + events_copied + trashed + restored + erased + updated +
           file_versions_copied;
  }
};

struct SyncReport {
  int64_t sessions_examined = 0;
  SyncChanges into_a;  // what `a` received from `b`
  SyncChanges into_b;  // what `b` received from `a`
  // Sessions appended to on both sides since the last sync, each now a
  // session and a fork of it in both stores.
  int64_t forks_made = 0;
  // Sessions left as they are, each with why ("session X: ..."): a fork
  // whose parent the other store cannot have, a diverged session with forks.
  std::vector<std::string> skipped;
  // True when the run changed nothing in either store.
  bool unchanged() const { return into_a.total() == 0 && into_b.total() == 0 && forks_made == 0; }
};

// Brings `a` and `b` up to date with each other (see above). `progress` gets
// (sessions done, sessions in all). kInvalidArgument when both are the same
// store; kFailedPrecondition when one is read-only; a store's own error
// (kBusy for an unreachable server, ...) otherwise. An error leaves whole
// steps done: rerunning continues.
Result<SyncReport> SyncStores(Store& a, Store& b, const SyncOptions& options = {},
                              const ProgressFn& progress = {});

}  // namespace sessiondb
