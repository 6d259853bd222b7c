// The embedded backend: a directory holding `sessiondb.db` (SQLite, WAL mode)
// and `blobs/` (a FileBlobStore). See docs/formats.md for the layout.
// Thread-safety: one connection per SqliteStore, serialised by a mutex; blob
// files are written outside it so that image ingest runs in parallel.
// Appends from several threads, and from the other stores of this process
// opened on the same file, are group-committed (group_commit.h): whoever
// finds no commit under way writes the appends queued so far (up to a cap) in
// one transaction (one fsync), each in a savepoint of its own, while the
// others wait. Several processes coordinate through SQLite's locks (BEGIN
// IMMEDIATE), taken after a fair blocking wait on the store's writer lock
// (writer_lock.h), so writers queue in turn instead of failing or starving.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "blob/blob_store.h"
#include "core/cipher.h"
#include "sessiondb/store.h"
#include "store/backend.h"
#include "store/message_preparer.h"
#include "store/sqlite/cipher_vfs.h"
#include "store/sqlite/group_commit.h"
#include "store/sqlite/sqlite_db.h"
#include "store/sqlite/wal_checkpointer.h"
#include "store/store_common.h"

namespace sessiondb::sqlite {

class SqliteStore final : public store::Backend {
 public:
  // See Store::Open; `options` have their defaults applied.
  static Result<std::unique_ptr<store::Backend>> Open(const std::string& dir,
                                                      const StoreOptions& options);
  // A writable store catches the full-text index up as it closes (see
  // CatchUpTextIndexOnClose).
  ~SqliteStore() override;

  const std::string& location() const override { return dir_; }
  std::string read_only_reason() const override { return read_only_reason_; }
  Status CheckStorableText(std::string_view, std::string_view) override { return Status::Ok(); }

  Result<Session> InsertSession(const store::SessionRow& row) override;
  Result<Session> LoadSession(std::string_view id) override;
  Result<std::vector<Session>> SelectSessions(const store::SessionQuery& query) override;
  Status UpdateTitle(std::string_view id, std::string_view title) override;
  Status UpdateArchived(std::string_view id, bool archived) override;
  Result<std::optional<std::string>> LoadActiveSession() override;
  Status StoreActiveSession(std::string_view id) override;
  Result<std::optional<std::string>> LoadSetting(std::string_view key) override;
  Status StoreSetting(std::string_view key, std::string_view value) override;
  Result<std::vector<LedgerEntry>> ReadLedger(const LedgerQuery& query) override;
  Status ScrubAfterErasure() override;

  bool HoldsBlob(std::string_view sha256) override;
  std::shared_ptr<blob::StagedBlob> StageBlob(std::string_view bytes, size_t ready) override;
  Result<std::vector<AppendResult>> InsertMessages(std::string_view session_id,
                                                   std::vector<PreparedMessage>& prepared,
                                                   const Draft* finishing) override;
  // The agent harness (sqlite_harness.cc).
  Result<std::vector<Event>> ReadHistory(std::string_view session_id,
                                         const store::HistoryRead& read) override;
  Status ReadMessages(std::string_view session_id, const store::HistoryRead& read,
                      std::vector<Message>* out) override;
  Result<bool> VisitMessages(std::string_view session_id, const store::HistoryRead& read,
                             const MessageRowVisitor& visit) override;
  // Restores (sqlite_restore.cc).
  Status InsertRestoredSession(const store::SessionRow& row, std::span<const Event> events,
                               const BlobSourceFn& blob_source) override;
  Status InsertRestoredEvents(std::string_view session_id, std::span<const Event> events,
                              const BlobSourceFn& blob_source, int64_t rewound_messages) override;

  Result<Event> InsertEventRecord(std::string_view session_id, EventType type,
                                  std::string_view text, std::string_view body) override;
  Result<std::optional<Event>> InsertGuardedEventRecord(std::string_view session_id, EventType type,
                                                        std::string_view text,
                                                        std::string_view body,
                                                        const store::RecordGuard& guard) override;
  Result<std::optional<Event>> FindLastCompaction(std::string_view session_id,
                                                  int64_t upto_seq) override;
  Result<std::optional<Event>> FindResourceMessage(std::string_view session_id,
                                                   std::string_view resource_id) override;
  Result<UsageReport> LoadUsage(std::string_view session_id) override;
  Result<store::UsageDays> LoadUsageDays(const store::UsageDaysFilter& filter) override;
  Status InsertDraft(const Draft& draft) override;
  Status UpdateDraft(const Draft& draft, int64_t updated_ms) override;
  Result<std::vector<Draft>> SelectDrafts(std::string_view session_id) override;
  Result<Draft> LoadDraft(std::string_view draft_id) override;
  Status RemoveDraft(std::string_view draft_id) override;

  // The write lock and one transaction (sqlite_write_transaction.cc).
  Status RunWriteTransaction(const store::WriteOptions& options,
                             const store::WriteWork& work) override;

  // File versions (sqlite_file_versions.cc).
  Result<FileVersion> InsertFileVersion(const FileVersion& version,
                                        const PendingBlob* blob) override;
  Result<std::vector<FileVersion>> SelectFileVersions(const FileVersionQuery& query) override;

  Result<std::set<std::string>> PresentBlobs(const std::vector<std::string>& sha256s) override;
  Result<std::string> ReadBlob(std::string_view sha256) override;
  Result<std::unique_ptr<BlobReader>> OpenBlob(std::string_view sha256) override;
  Result<std::vector<store::BlobCandidate>> UnreferencedBlobs(int64_t* scanned) override;
  Result<store::RemovedBlob> RemoveBlobIfUnreferenced(std::string_view sha256,
                                                      int64_t grace_cutoff_ms,
                                                      bool dry_run) override;
  // Runs SQLite's integrity check into `report`; when it finds problems,
  // reads every session back to name the ones they reach (database_problems,
  // damaged_sessions). Errors become problems: this never fails.
  void CheckDatabase(VerifyReport* report) override;
  Result<std::vector<std::string>> ReferencedBlobs() override;
  Result<std::vector<std::string>> StoredBlobs() override;
  Result<StorageStats> Stats() override;
  Result<std::unique_ptr<store::IndexBackend>> OpenIndexBackend() override;
  Result<std::unique_ptr<store::IndexBackend>> OpenIndexBackendOnStoreConnection() override;

  // A diagnostic for tests and benchmarks, not part of the Store API. Counts
  // appends (each Append, AppendBatch or FinishDraft call) of every store of
  // this process that shares this one's group-commit queue (group_commit.h),
  // since the first of them was opened; appends / commits is the mean group size.
  using GroupCommitStats = GroupCommitQueue::Stats;
  GroupCommitStats group_commit_stats() { return group_commit_->stats(); }
  // One group commit never carries more than this many appends, nor more
  // text than this beyond its first append; the rest wait for the next.
  static constexpr size_t kMaxGroupAppends = GroupCommitQueue::kMaxGroupAppends;
  static constexpr size_t kMaxGroupTextBytes = GroupCommitQueue::kMaxGroupTextBytes;
  // A diagnostic for tests and benchmarks: the checkpoints of this store's
  // WAL checkpointer (wal_checkpointer.h); zeros when read-only.
  WalCheckpointer::Stats checkpoint_stats() {
    return checkpointer_ ? checkpointer_->stats() : WalCheckpointer::Stats{};
  }

 private:
  friend class SqliteWriteTransaction;

  SqliteStore(std::string dir, StoreOptions options, std::shared_ptr<PageKeyRegistration> page_key,
              std::unique_ptr<Database> db, std::unique_ptr<blob::BlobStore> blobs);

  int64_t Now() const { return options_.clock(); }
  std::string NewId() const;
  // InsertEventRecord, and InsertGuardedEventRecord when `guard` is given.
  Result<std::optional<Event>> InsertEventRecordGuarded(
      std::string_view session_id, EventType type, std::string_view text, std::string_view body,
      const std::optional<store::RecordGuard>& guard);
  // Writes the blobs of `prepared`, then appends it through group commit: in
  // a savepoint that first runs `also` (when given) under the lock, inside a
  // transaction that may carry other threads' appends too. Fails alone when
  // its own savepoint fails (kNotFound for the session, kAlreadyExists for a
  // message id, what `also` returns); fails with the others when the
  // transaction does not commit. Returns once it has committed or failed.
  Result<std::vector<AppendResult>> AppendPrepared(std::string_view session_id,
                                                   std::vector<PreparedMessage>& prepared,
                                                   const std::function<Status(Database&)>& also);

  // Takes mu_ and writes `group` (requests of this store and of others that
  // share its queue) in one transaction on this store's connection, each
  // request in its own savepoint, then commits once; sets every request's
  // result. noexcept: a leader that threw would leave its followers waiting.
  void CommitGroup(const std::vector<GroupCommitQueue::Request*>& group) noexcept;

  // Restored events, encoded and with their blobs in place, ready to insert.
  struct RestoreBatch {
    std::vector<std::optional<PreparedMessage>> prepared;  // messages with their parts
    std::vector<StoredEventColumns> stored;                // the rest, written as they are
    std::vector<std::string> stored_ids;
    int64_t message_count = 0;
  };
  Result<RestoreBatch> PrepareRestore(std::string_view session_id, std::span<const Event> events,
                                      const BlobSourceFn& blob_source);

  // Indexes what this store's writes left pending (at most kCloseCatchUp
  // documents), so readers that cannot index (a read-only store) find what
  // a process wrote once it has closed. Best effort: the next catch-up, by
  // anyone, takes what is left.
  void CatchUpTextIndexOnClose();
  // The key that seals the saved vector index (derived from the store's);
  // unset for a plaintext store.
  std::optional<cipher::SecretKey> VectorIndexKey() const;

  // The following need mu_ held.
  // Inserts the batch's events, references and usage into session_id.
  Status InsertRestoredLocked(std::string_view session_id, std::span<const Event> events,
                              const RestoreBatch& batch);
  // Records as search documents the events of session_id from first_seq to
  // last_seq, just inserted: one statement per batch (schema v6 has no insert
  // trigger on events; every writer of events calls this). The full-text
  // index takes them later, past its watermark.
  Status RecordDocumentsLocked(std::string_view session_id, int64_t first_seq, int64_t last_seq);
  Result<Session> LoadSessionLocked(std::string_view id);
  void CheckDatabaseLocked(VerifyReport* report);
  // Reads the session's index entry and every event it stores, and finds each
  // event again through the id index; the first error met, else Ok.
  Status ReadBackSessionLocked(std::string_view id);
  Result<bool> HasForksLocked(std::string_view id);
  // Removes the session's row, events, references, usage and drafts.
  Status EraseSessionLocked(std::string_view id);
  // The version kept earlier under `version`'s (agent_session, tool_use_id,
  // file_path, phase), or nullopt (always for one with no tool_use_id).
  Result<std::optional<FileVersion>> FindKeptFileVersion(const FileVersion& version);
  // Appends inside the caller's transaction. Reads the session's row (last
  // seq, count, title) from that transaction, so appends to one session
  // earlier in the same transaction are seen and seqs stay dense.
  Result<std::vector<AppendResult>> AppendPreparedLocked(std::string_view session_id,
                                                         std::vector<PreparedMessage>& prepared);
  // Adds the message's usage (if any) to usage_totals and to usage_days under
  // the UTC day of ts_ms.
  Status AddUsageLocked(std::string_view session_id, const Message& message, int64_t ts_ms);
  // The segments of a live session's history; kNotFound if it does not exist.
  Result<std::vector<Segment>> HistoryLocked(std::string_view session_id);
  // Decodes the rows of `stmt` (selecting EVENT_COLUMNS) onto `out`.
  Status ReadEventRows(Statement& stmt, std::vector<Event>* out);
  // Decodes the rows of `stmt` (selecting MESSAGE_COLUMNS) onto `out`.
  Status ReadMessageRows(Statement& stmt, std::vector<Message>* out);

  const std::string dir_;
  const StoreOptions options_;
  // Empty when writable; else why the store is read-only (set once by Open).
  std::string read_only_reason_;
  std::mutex mu_;
  // Encryption at rest (docs/encryption.md): while this lives, every
  // connection to the database (db_, the checkpointer's, the search index's)
  // reads and writes its pages sealed. Declared before db_ so that it
  // outlives every connection this store opened. Null for a plaintext store.
  const std::shared_ptr<PageKeyRegistration> page_key_;
  // The store's data key (the blob, vector-file and page keys derive from
  // it); null for a plaintext store.
  std::shared_ptr<const cipher::SecretKey> data_key_;
  std::unique_ptr<Database> db_;  // guarded by mu_
  // Checkpoints db_'s WAL on a thread of its own (null when read-only).
  // Declared after db_: stopped before the connection it hooks closes.
  std::unique_ptr<WalCheckpointer> checkpointer_;
  const std::unique_ptr<blob::BlobStore> blobs_;

  // Group commit, shared with the other stores of this process opened on the
  // same file. Lock order: the queue's mutex is never held while taking mu_.
  std::shared_ptr<GroupCommitQueue> group_commit_;
};

}  // namespace sessiondb::sqlite
