// What a storage backend implements under the Store front (store_front.h):
// reading and writing rows in its own SQL, each call one transaction (or one
// statement). The front has already validated every argument, cleaned the
// titles, prepared the messages and decided every column, so a backend holds
// no rule of the log: the rules that two backends would otherwise each write
// (ids, titles, previews, list paging, draft messages, restore rows, data
// URIs, read-only refusals) live in the front, once.
//
// What stays in a backend is what only it can do: keep seqs dense under its
// own locking (SQLite's group commit, PostgreSQL's row locks and retries),
// walk a fork's history in its SQL, apply the index-entry rules of
// store_common.h inside the transaction that reads the row, and check its
// own pages. The rules that take several statements (a fork-aware delete, a
// fork, a prune) run in the front (log_rules.h) over the primitives of a
// write transaction (write_transaction.h).
//
// The shape follows leveldb's DBImpl over Env and ccache's storage front over
// its local and remote backends (docs/ARCHITECTURE.md).
// Thread-safety: a Backend is shared by the front's callers' threads; each
// implementation says how it serialises them.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sessiondb/status.h"
#include "sessiondb/store.h"
#include "sessiondb/types.h"
#include "store/message_preparer.h"
#include "store/write_transaction.h"

namespace sessiondb::store {

class IndexBackend;

// Every column of a session's index entry, as the front decided them.
struct SessionRow {
  std::string id;
  std::string title;
  bool title_fixed = false;
  std::string preview;
  int64_t created_ms = 0;
  int64_t updated_ms = 0;
  int64_t message_count = 0;
  int64_t last_seq = 0;
  bool archived = false;
  std::string metadata_json;  // canonical
  std::string parent_id;      // empty for a root
  int64_t fork_seq = 0;
};

// Which rows of usage_days LoadUsageDays reads: days between since and until
// (inclusive, "YYYY-MM-DD"; empty: unbounded), of these sessions (empty:
// all). Sessions in the trash or deleted are never read.
struct UsageDaysFilter {
  std::string since;
  std::string until;
  std::vector<std::string> session_ids;
};

// One row of usage_days: a session's turns of one UTC day, provider and model.
struct UsageDayRow {
  std::string session_id;
  std::string day;
  std::string provider;
  std::string model;
  int64_t turns = 0;
  Usage usage;
};

// What LoadUsageDays returns: the rows, and the metadata of each session they
// name (for its project).
struct UsageDays {
  std::vector<UsageDayRow> rows;
  std::map<std::string, std::string> metadata_of;  // session id -> canonical metadata
};

// A page of the session list: rows ordered by (updated_ms, id) descending.
struct SessionQuery {
  ArchiveFilter archived = ArchiveFilter::kActive;
  std::string metadata_key;  // empty: no filter; never holds '"' or '\'
  std::string metadata_value;
  int64_t max_rows = 0;
  // Only rows strictly after this position (the last row of the page before).
  std::optional<std::pair<int64_t, std::string>> after;
  // The trash instead: only trashed sessions, with trashed_ms, whatever
  // `archived` says.
  bool trash = false;
};

// Which types of event a history read returns.
enum class HistoryFilter {
  kAll,
  kMessages,
  // The rewinds only, through the index of the few events that are not
  // messages, so a session's view (session_view.h) costs no scan of its log.
  kRewinds,
  // Every event that is not a message (the same index): what a count of the
  // messages in a range of seqs subtracts, as seqs are dense.
  kNotMessages,
};

// Which events of a session's history (its fork ancestors' included) to read.
struct HistoryRead {
  int64_t from_seq = 1;
  int64_t to_seq = std::numeric_limits<int64_t>::max();
  int64_t limit = -1;  // -1: all
  HistoryFilter filter = HistoryFilter::kAll;
  // The last `limit` events rather than the first (returned in seq order).
  bool newest_first = false;
};

// The condition on which a rewind is written, and the count it sets.
struct RecordGuard {
  // The record is written only if the session's log holds no rewind past
  // this seq (where the caller read the view); otherwise
  // InsertGuardedEventRecord returns nullopt and writes nothing. Appends that
  // landed since do not matter: they join the view past any rewind target,
  // so they neither stay in it nor change what it holds up to the target.
  int64_t no_rewind_after = 0;
  // When set, the record is written only if the session's last_seq is still
  // this (no event of any kind landed since the caller read it); otherwise
  // nullopt as above. Store::RewindIfUnchanged.
  std::optional<int64_t> only_at_last_seq;
  // The session's message_count once the record is written.
  int64_t message_count = 0;
};

class Backend {
 public:
  virtual ~Backend() = default;

  // The store's location for messages (a directory, or a URI without its password).
  virtual const std::string& location() const = 0;
  // Empty when writable; else why the store is read-only.
  virtual std::string read_only_reason() const = 0;

  // Rules of the backend's own storage beyond the front's (PostgreSQL text
  // cannot hold NUL): kInvalidArgument naming `what`.
  virtual Status CheckStorableText(std::string_view text, std::string_view what) = 0;
  Status CheckStorable(const PreparedMessage& prepared);

  // ---- Sessions -------------------------------------------------------------

  // Inserts a root session; kAlreadyExists (SessionIdTaken) if the id is held.
  virtual Result<Session> InsertSession(const SessionRow& row) = 0;
  // kNotFound for a missing or deleted session.
  virtual Result<Session> LoadSession(std::string_view id) = 0;
  virtual Result<std::vector<Session>> SelectSessions(const SessionQuery& query) = 0;
  // Sets the title and fixes it. kNotFound for a missing session.
  virtual Status UpdateTitle(std::string_view id, std::string_view title) = 0;
  virtual Status UpdateArchived(std::string_view id, bool archived) = 0;
  virtual Result<std::optional<std::string>> LoadActiveSession() = 0;
  // kNotFound if the session does not exist; an empty id clears it.
  virtual Status StoreActiveSession(std::string_view id) = 0;

  // ---- Settings -------------------------------------------------------------

  // A setting of the store (PostgreSQL: of its namespace) that every face
  // must agree on: the redaction key and rules, the retention policy. Keys
  // are the front's (`kSetting*` in store_common.h); values are its text.
  // nullopt when never stored.
  virtual Result<std::optional<std::string>> LoadSetting(std::string_view key) = 0;
  // Stores `value` under `key`, replacing what was there, in one transaction.
  virtual Status StoreSetting(std::string_view key, std::string_view value) = 0;

  // ---- The ledger of forgetting -----------------------------------------------

  // The ledger's entries (of this namespace), newest first, as `query` asks
  // (its limit already checked). Written by WriteTransaction::AppendLedgerEntry.
  virtual Result<std::vector<LedgerEntry>> ReadLedger(const LedgerQuery& query) = 0;

  // ---- Messages -------------------------------------------------------------

  // True if a message may name this blob by digest alone: the store holds
  // its bytes (PostgreSQL: and the namespace refers to it).
  virtual bool HoldsBlob(std::string_view sha256) = 0;
  // Starts writing a large attachment's bytes while the front still hashes
  // them (BlobStageFn); null, the default, when the backend stores blobs
  // only in InsertMessages.
  virtual std::shared_ptr<blob::StagedBlob> StageBlob(std::string_view bytes, size_t ready) {
    (void)bytes;
    (void)ready;
    return nullptr;
  }
  // Appends prepared messages as the session's next seqs, with their blobs,
  // references, usage and index entry, in one transaction. With `finishing`,
  // that draft is removed in the same transaction: kNotFound if it is gone,
  // kBusy if it was saved again since the front read it. kNotFound for a
  // missing session; kAlreadyExists for a message id the store holds.
  virtual Result<std::vector<AppendResult>> InsertMessages(std::string_view session_id,
                                                           std::vector<PreparedMessage>& prepared,
                                                           const Draft* finishing) = 0;
  // The events `read` asks for, in seq order. kNotFound for a missing session.
  virtual Result<std::vector<Event>> ReadHistory(std::string_view session_id,
                                                 const HistoryRead& read) = 0;

  // The messages of the events `read` asks for (its filter is taken as
  // kMessages), in seq order, appended to `*out`: what ReadHistory's
  // messages are, field for field, each built straight from its row
  // (DecodeMessageRowInto) with no Event between (W3: a third of a
  // 10,000-message load went to Events). kNotFound for a missing session.
  virtual Status ReadMessages(std::string_view session_id, const HistoryRead& read,
                              std::vector<Message>* out) = 0;

  // Called by VisitMessages with each message: `built` is the Message when
  // the row needed one (view.message points to it; the caller may flag its
  // parts), null when the view is read from the row alone. False stops.
  using MessageRowVisitor = std::function<bool(const MessageView& view, Message* built)>;
  // The messages ReadMessages(session_id, read) would append (read's filter,
  // limit and newest_first are not looked at: all of from_seq..to_seq,
  // oldest first), handed to `visit` one at a time with no lock of the
  // backend held. Returns false when `visit` stopped the read. This default
  // reads them all with ReadMessages, then visits; the embedded backend reads
  // its rows in chunks and builds only messages that are more than a text.
  virtual Result<bool> VisitMessages(std::string_view session_id, const HistoryRead& read,
                                     const MessageRowVisitor& visit);

  // Which of `sha256s` the store holds bytes for.
  virtual Result<std::set<std::string>> PresentBlobs(const std::vector<std::string>& sha256s) = 0;

  // ---- File versions (Store::RecordFileVersion) -------------------------------

  // In one transaction: writes `blob` first when the store lacks its bytes
  // (null when version.exists is false), then the version's row (id assigned,
  // time_ms as given) and its blob reference (session kFileVersionRefSession,
  // seq the id). When version.tool_use_id is not empty and a row with the
  // same (agent_session, tool_use_id, file_path, phase) exists, returns that
  // row and writes nothing.
  virtual Result<FileVersion> InsertFileVersion(const FileVersion& version,
                                                const PendingBlob* blob) = 0;
  // The rows `query` selects (its limit already checked), in id order.
  virtual Result<std::vector<FileVersion>> SelectFileVersions(const FileVersionQuery& query) = 0;

  // ---- Restores -------------------------------------------------------------

  // Inserts the session's row and its events (RestoreSession's contract in
  // store.h), fetching missing blobs through `blob_source`. A fork's parent
  // must hold at least fork_seq events (MissingForkParent otherwise).
  virtual Status InsertRestoredSession(const SessionRow& row, std::span<const Event> events,
                                       const BlobSourceFn& blob_source) = 0;
  // RestoreEvents' contract (store.h): `events` are non-empty. The session's
  // message_count grows by the run's messages less `rewound_messages`, the
  // messages its rewinds take out of the view (CountRewoundByRun), which the
  // front counted over the view before the run: the check that the run
  // continues the log, inside the transaction, keeps that count current.
  virtual Status InsertRestoredEvents(std::string_view session_id, std::span<const Event> events,
                                      const BlobSourceFn& blob_source,
                                      int64_t rewound_messages) = 0;

  // ---- The harness ----------------------------------------------------------

  virtual Result<Event> InsertEventRecord(std::string_view session_id, EventType type,
                                          std::string_view text, std::string_view body) = 0;
  // InsertEventRecord under `guard`, in the same transaction: nullopt when a
  // rewind has landed past guard.no_rewind_after (the caller decides again).
  virtual Result<std::optional<Event>> InsertGuardedEventRecord(std::string_view session_id,
                                                                EventType type,
                                                                std::string_view text,
                                                                std::string_view body,
                                                                const RecordGuard& guard) = 0;
  virtual Result<std::optional<Event>> FindLastCompaction(std::string_view session_id,
                                                          int64_t upto_seq) = 0;
  virtual Result<std::optional<Event>> FindResourceMessage(std::string_view session_id,
                                                           std::string_view resource_id) = 0;
  virtual Result<UsageReport> LoadUsage(std::string_view session_id) = 0;
  // The usage_days rows `filter` selects (one read of one snapshot).
  virtual Result<UsageDays> LoadUsageDays(const UsageDaysFilter& filter) = 0;

  // ---- Drafts ---------------------------------------------------------------

  // Inserts `draft` (id, times and fields decided); kNotFound for a missing session.
  virtual Status InsertDraft(const Draft& draft) = 0;
  // Overwrites text, reasoning and updated_ms; kNotFound (DraftNotFound) once gone.
  virtual Status UpdateDraft(const Draft& draft, int64_t updated_ms) = 0;
  // The session's drafts, oldest first; kNotFound for a missing session.
  virtual Result<std::vector<Draft>> SelectDrafts(std::string_view session_id) = 0;
  virtual Result<Draft> LoadDraft(std::string_view draft_id) = 0;
  virtual Status RemoveDraft(std::string_view draft_id) = 0;

  // ---- Write transactions ------------------------------------------------------

  // Runs `work` in one write transaction and commits it if work succeeds
  // (write_transaction.h: it may be run more than once).
  virtual Status RunWriteTransaction(const WriteOptions& options, const WriteWork& work) = 0;

  // ---- Blobs and housekeeping ---------------------------------------------

  // The bytes; kNotFound if absent, kInvalidArgument for a name that is not a digest.
  virtual Result<std::string> ReadBlob(std::string_view sha256) = 0;
  virtual Result<std::unique_ptr<BlobReader>> OpenBlob(std::string_view sha256) = 0;
  // Blobs whose bytes the store holds and that no message refers to;
  // `scanned` is set to how many blobs were looked at.
  virtual Result<std::vector<BlobCandidate>> UnreferencedBlobs(int64_t* scanned) = 0;
  // In a transaction of its own that keeps appends from naming it meanwhile:
  // removes the blob unless a reference to it has appeared or it was stored
  // after `grace_cutoff_ms`. With `dry_run` it only says what it would do.
  virtual Result<RemovedBlob> RemoveBlobIfUnreferenced(std::string_view sha256,
                                                       int64_t grace_cutoff_ms, bool dry_run) = 0;
  // After an erasure has committed and its blobs are gone: scrubs what the
  // backend's own files still hold of the deleted rows (PostgreSQL: VACUUM
  // FULL; SQLite does its part inside RunWriteTransaction).
  virtual Status ScrubAfterErasure() { return Status::Ok(); }
  // Checks the database's own pages as far as this backend can: sets
  // database_check, and database_problems and damaged_sessions when it finds damage.
  virtual void CheckDatabase(VerifyReport* report) = 0;
  // Every digest a message of the store (its namespace) refers to.
  virtual Result<std::vector<std::string>> ReferencedBlobs() = 0;
  // The blobs whose bytes the store holds for this namespace: SQLite every
  // file of its blob folder, PostgreSQL the namespace's blobs with a row.
  virtual Result<std::vector<std::string>> StoredBlobs() = 0;
  virtual Result<StorageStats> Stats() = 0;
  virtual Result<std::unique_ptr<IndexBackend>> OpenIndexBackend() = 0;
  // Store::OpenIndexBackendOnStoreConnection; a backend whose index backends
  // share its connections already (a pool) keeps this.
  virtual Result<std::unique_ptr<IndexBackend>> OpenIndexBackendOnStoreConnection();
};

// kNotFound naming the draft.
Status DraftNotFound(std::string_view draft_id);

}  // namespace sessiondb::store
