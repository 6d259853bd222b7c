// The rows one write transaction of a backend reads and changes, for the
// rules of the log that take several statements: removing a session with its
// forks in mind, a fork's point, title and preview, and a prune. The front
// writes those rules once (log_rules.h) in terms of these primitives; each
// backend implements them in its own SQL (SqliteWriteTransaction,
// PgWriteTransaction), inside the transaction Backend::RunWriteTransaction
// opened.
//
// Locks: SQLite holds its write lock for the whole transaction, so the lock
// arguments change nothing there; PostgreSQL takes the row lock each call
// names and keeps it until the commit.
// Thread-safety: one transaction is used by the thread that runs its work.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sessiondb/forget.h"
#include "sessiondb/status.h"
#include "sessiondb/types.h"
#include "store/store_common.h"

namespace sessiondb::store {

struct SessionRow;  // backend.h

// A blob that housekeeping may remove, as found by Backend::UnreferencedBlobs.
struct BlobCandidate {
  std::string sha256;
  int64_t size = 0;
  // The name the backend stores it under when that is not sha256 (an
  // encrypted PostgreSQL namespace's keyed name), else "": what removes it
  // after a commit that may have changed the key it is named under.
  std::string stored_name;
};

enum class RowLock {
  kShare,      // others may read and fork it, not remove or change it
  kExclusive,  // no other writer of this row until the commit
};

// A message of a session's own log as a prune reads it.
struct StoredMessageText {
  int64_t seq = 0;
  Role role = Role::kUser;
  bool pruned = false;  // by an earlier compaction
  std::string text;     // the text the index and the title rules saw
};

// What erasing rows removed, counted by kind (ErasureReceipt::counts).
struct ErasedRows {
  int64_t sessions = 0;
  int64_t events = 0;
  int64_t messages = 0;
  int64_t drafts = 0;
  int64_t usage_rows = 0;
  int64_t code_writes = 0;
  int64_t file_versions = 0;
  int64_t search_documents = 0;
  int64_t embeddings = 0;
  std::set<std::string> blobs;  // digests the erased rows referred to
};

// A new body for the message at `seq`, and its new text for the index
// (empty for a prune, which clears it).
struct BodyUpdate {
  int64_t seq = 0;
  std::optional<std::string> body;
  std::string text;
};

class WriteTransaction {
 public:
  virtual ~WriteTransaction() = default;

  // True when an earlier run of this same work sent its COMMIT and lost the
  // answer (PostgreSQL over a dropped connection): what it wrote may stand,
  // so work that now finds its own writes in place reports success.
  virtual bool earlier_commit_may_have_landed() const = 0;

  // ---- Sessions ---------------------------------------------------------------

  // The session unless it is missing or deleted, its row locked as `lock` says.
  virtual Result<std::optional<Session>> LockSession(std::string_view id, RowLock lock) = 0;
  // The archived sessions last updated before `before_ms`, locked
  // exclusively, in id order.
  virtual Result<std::vector<Session>> LockArchivedBefore(int64_t before_ms) = 0;
  // For a deleted session kept for its forks: locks its row exclusively and
  // returns its parent's id (empty for a root). nullopt when the session is
  // not deleted, is in the trash (it stays restorable), or is gone.
  virtual Result<std::optional<std::string>> LockDeletedSession(std::string_view id) = 0;
  // True if any session (a deleted one too) was forked from `id`.
  virtual Result<bool> HasForks(std::string_view id) = 0;
  // Marks the session deleted (and out of the trash: hidden for good) and
  // drops its drafts and active mark; its events stay, for the forks that
  // read them.
  virtual Status HideSession(std::string_view id) = 0;
  // Erases the session with its events, blob references, usage, drafts and
  // active mark.
  virtual Status EraseSession(std::string_view id) = 0;

  // ---- Forgetting (forget.h) -------------------------------------------------

  // Every session row of the store (its namespace) in any state (live, in
  // the trash, hidden for its forks), locked exclusively, in id order, with
  // trashed_ms filled: what an erasure selects from.
  virtual Result<std::vector<Session>> LockAllSessions() = 0;
  // The session if it is in the trash, locked exclusively; else nullopt.
  virtual Result<std::optional<Session>> LockTrashedSession(std::string_view id) = 0;
  // The sessions put in the trash before `before_ms`, locked exclusively, in id order.
  virtual Result<std::vector<Session>> LockTrashedBefore(int64_t before_ms) = 0;
  // Moves a live session to the trash at `trashed_ms`: hidden as a deleted
  // one is, its active mark dropped; its events, drafts and usage stay.
  virtual Status MoveToTrash(std::string_view id, int64_t trashed_ms) = 0;
  // Takes a trashed session out of the trash, as it was.
  virtual Status TakeOutOfTrash(std::string_view id) = 0;
  // Adds to `*rows` what the session still has (in any state): events,
  // messages, drafts, usage rows, code writes, search documents, vectors and
  // the digests its blob references name. True if its row exists.
  virtual Result<bool> CountSessionRows(std::string_view id, ErasedRows* rows) = 0;
  // Erases the session for good whatever its state: its row, events, blob
  // references, usage, drafts, active mark, search documents, vectors and
  // the code writes recorded for it, adding what went to `*erased`.
  virtual Status EraseSessionRows(std::string_view id, ErasedRows* erased) = 0;
  // Erases the code writes recorded under `project` (a folder: it holds its
  // subfolders), or every one when `project` is empty, with their documents,
  // vectors and edits, adding them to `*erased`.
  virtual Status EraseCodeWrites(std::string_view project, ErasedRows* erased) = 0;
  // Of `sha256s`, the blobs no message refers to any more (PostgreSQL: in
  // any namespace) whose bytes the store holds, with their sizes.
  virtual Result<std::vector<BlobCandidate>> BlobsNoLongerReferenced(
      const std::set<std::string>& sha256s) = 0;
  // After an erasure's deletes, in its transaction: the erased words also
  // leave the full-text index's old segments (SQLite: FTS5 'optimize', which
  // rewrites the whole index; FTS5 has no secure-delete before SQLite 3.42),
  // and the saved vector index's entries are dropped, so it is rebuilt
  // without the erased vectors (its files go in Backend::ScrubAfterErasure).
  // PostgreSQL: nothing here (its indexes are rewritten by that scrub).
  virtual Status ScrubDerivedIndexes() = 0;
  // Appends `entry` (its id ignored) to the ledger of forgetting, in this
  // transaction; the id it was given.
  virtual Result<int64_t> AppendLedgerEntry(const LedgerEntry& entry) = 0;
  // Crypto-shredding (docs/encryption.md), for an erasure of everything: an
  // encrypted PostgreSQL namespace gets a new data key in this transaction
  // (what it still holds, its settings, sealed again under it), so nothing
  // sealed under the old key opens with the namespace's key once this
  // commits. The destroyed key's id; empty when there is no such key
  // (plaintext, or an embedded store, whose erasure overwrites its pages).
  virtual Result<std::string> DestroyDataKey() { return std::string(); }
  // The id of the data key the store's content is sealed under now; empty
  // when there is none (VerifyErased: a destroyed key must not be it).
  virtual Result<std::string> CurrentDataKeyId() { return std::string(); }

  // ---- Forks ------------------------------------------------------------------

  // The session's history as segments, its oldest ancestor's first.
  // kCorruption if an ancestor's row is gone.
  virtual Result<std::vector<Segment>> ReadHistorySegments(std::string_view id) = 0;
  // How many events of `segments` are not messages.
  virtual Result<int64_t> CountOtherEvents(std::span<const Segment> segments) = 0;
  // The role and stored text of the first `limit` messages of `segment`.
  virtual Result<std::vector<StoredMessageText>> ReadMessageTexts(const Segment& segment,
                                                                  int64_t limit) = 0;
  // Inserts a fork's row (every column decided); nullopt if a session
  // (possibly a deleted one) holds the id.
  virtual Result<std::optional<Session>> InsertForkRow(const SessionRow& row) = 0;

  // ---- Prunes -----------------------------------------------------------------

  // The event at `seq` of the session's own log (not an ancestor's).
  virtual Result<std::optional<Event>> ReadOwnEvent(std::string_view session_id, int64_t seq) = 0;
  // The messages of the session's own log with seqs from..to, in seq order.
  virtual Result<std::vector<StoredMessageText>> ReadOwnMessages(std::string_view session_id,
                                                                 int64_t from_seq,
                                                                 int64_t to_seq) = 0;
  // The rewind events of the session's own log with seqs from..to, in seq
  // order: whether one of its own events is still in the view.
  virtual Result<std::vector<Event>> ReadOwnRewinds(std::string_view session_id, int64_t from_seq,
                                                    int64_t to_seq) = 0;
  virtual Status UpdateTitleAndPreview(std::string_view id, std::string_view title,
                                       std::string_view preview) = 0;
  // Sets each event's body and text (BodyUpdate::text, empty to clear it),
  // so the full-text index holds the new words and no longer the old; how
  // many rows changed.
  virtual Result<int64_t> ReplaceBodies(std::string_view session_id,
                                        std::span<const BodyUpdate> updates) = 0;
  // Drops the blob references of the session's events at `seqs`; the
  // digests they named.
  virtual Result<std::set<std::string>> DropBlobReferences(std::string_view session_id,
                                                           std::span<const int64_t> seqs) = 0;
};

// How a write transaction is run.
struct WriteOptions {
  // The work erases text: the backend also scrubs what it keeps of the old
  // pages (SQLite: secure_delete, then a WAL checkpoint after the commit).
  bool erases_text = false;
};

// The work of one write transaction. A backend may run it again from the
// start (PostgreSQL, after a serialisation failure or a lost connection), so
// it resets whatever it reports at its start. An error rolls back.
using WriteWork = std::function<Status(WriteTransaction&)>;

// What Backend::RemoveBlobIfUnreferenced did with a blob.
enum class BlobRemoval {
  kRemoved,     // gone (or, in a dry run, would be)
  kReferenced,  // a reference has appeared since it was listed: kept
  kInGrace,     // stored after the cut-off: kept
  kGone,        // already removed by someone else
};

struct RemovedBlob {
  BlobRemoval outcome = BlobRemoval::kGone;
  int64_t size = 0;  // the blob's size when it was found
};

}  // namespace sessiondb::store
