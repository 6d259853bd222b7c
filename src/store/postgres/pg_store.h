// The PostgreSQL backend: one database shared by many machines. Sessions, the
// log and blob references live in tables keyed by namespace first; blobs live
// in the database too (bytea, deduplicated by SHA-256) so every machine sees
// them. See docs/formats.md for the schema and docs/postgres.md for use.
//
// Appends lock the session's row (SELECT ... FOR UPDATE), so appends to one
// session queue and keep seqs dense while appends to different sessions run
// in parallel. Every call runs on a pooled connection and is retried, a
// bounded number of times, when PostgreSQL reports a transient failure (a
// dropped connection, a restart, a serialization failure or deadlock). An
// append whose COMMIT was sent but not answered is looked up by its message
// id before it is retried, so a retry never writes it twice.
// Thread-safety: safe to share between threads.
#pragma once

#include <memory>
#include <string>

#include "sessiondb/store.h"
#include "store/backend.h"
#include "store/message_preparer.h"
#include "store/postgres/pg_analyze.h"
#include "store/postgres/pg_object_blobs.h"
#include "store/postgres/pg_pool.h"

namespace sessiondb::postgres {

struct HistoryQuery;  // pg_store_internal.h
struct EncodedBatch;  // pg_store_internal.h

// A store URI split into what libpq understands and our own parameters.
struct PgLocation {
  std::string conninfo;        // the URI without sessiondb's parameters
  std::string namespace_name;  // the `namespace` parameter, or empty
  std::string display;         // the URI without a password, for messages
};

// Splits `uri` (postgres:// or postgresql://). kInvalidArgument for a
// malformed `namespace` parameter.
Result<PgLocation> ParsePgUri(const std::string& uri);

class PgStore final : public store::Backend {
 public:
  // See Store::Open; `options` have their defaults applied.
  static Result<std::unique_ptr<store::Backend>> Open(const std::string& uri,
                                                      const StoreOptions& options);
  // Analyzes the tables once more when a bulk load is left unanalyzed
  // (pg_analyze.h).
  ~PgStore() override;

  const std::string& location() const override { return location_.display; }
  std::string read_only_reason() const override { return ""; }
  // PostgreSQL text cannot hold NUL.
  Status CheckStorableText(std::string_view text, std::string_view what) override;

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
  Result<std::vector<AppendResult>> InsertMessages(std::string_view session_id,
                                                   std::vector<PreparedMessage>& prepared,
                                                   const Draft* finishing) override;
  // The agent harness (pg_harness.cc).
  Result<std::vector<Event>> ReadHistory(std::string_view session_id,
                                         const store::HistoryRead& read) override;
  Status ReadMessages(std::string_view session_id, const store::HistoryRead& read,
                      std::vector<Message>* out) override;
  // Restores (pg_restore.cc).
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

  // File versions, the code checkpoints (pg_file_versions.cc). Not kept in
  // an encrypted namespace yet: kFailedPrecondition.
  Result<FileVersion> InsertFileVersion(const FileVersion& version,
                                        const PendingBlob* blob) override;
  Result<std::vector<FileVersion>> SelectFileVersions(const FileVersionQuery& query) override;

  // One transaction on a pooled connection, run again after a transient
  // failure (pg_write_transaction.cc).
  Status RunWriteTransaction(const store::WriteOptions& options,
                             const store::WriteWork& work) override;

  Result<std::set<std::string>> PresentBlobs(const std::vector<std::string>& sha256s) override;
  Result<std::string> ReadBlob(std::string_view sha256) override;
  Result<std::unique_ptr<BlobReader>> OpenBlob(std::string_view sha256) override;
  // Blobs are shared by all namespaces: one goes when no namespace refers to it.
  Result<std::vector<store::BlobCandidate>> UnreferencedBlobs(int64_t* scanned) override;
  Result<store::RemovedBlob> RemoveBlobIfUnreferenced(std::string_view sha256,
                                                      int64_t grace_cutoff_ms,
                                                      bool dry_run) override;
  // PostgreSQL guards its own pages; this says so and finds nothing.
  void CheckDatabase(VerifyReport* report) override;
  Result<std::vector<std::string>> ReferencedBlobs() override;
  Result<std::vector<std::string>> StoredBlobs() override;
  Result<StorageStats> Stats() override;
  Result<std::unique_ptr<store::IndexBackend>> OpenIndexBackend() override;

 private:
  PgStore(PgLocation location, std::string ns, StoreOptions options);

  friend class PgIndex;  // pg_index.cc: the store's IndexBackend

  int64_t Now() const { return options_.clock(); }
  // Indexes, a page per transaction, the namespace's documents that are not
  // indexed yet (those of events stored before schema v3).
  Status IndexUnindexedDocuments();
  std::string NewId() const;

  // Runs `work` on a pooled connection, retrying transient failures with
  // backoff (a fresh connection when the old one broke). `work` must be a
  // whole transaction or a single statement, safe to run again.
  template <typename Fn>
  auto Run(Fn&& work) -> decltype(work(std::declval<PgConnection&>()));

  Result<bool> BlobReferenced(std::string_view sha256);
  // Before an append's transaction: stores in the object tier each blob of
  // `batch` it holds that no row names yet, recording the uploads in
  // `batch->uploads` (pg_object_blobs.h). The object store's error otherwise.
  Status UploadLargeBlobs(EncodedBatch* batch);
  // Deletes the object of a removed row, or an unnamed one, when gc may
  // (ObjectTier::Collect); uploads younger than the tier's grace are kept.
  Result<store::BlobRemoval> CollectObject(std::string_view key, int64_t cutoff_ms, bool dry_run);
  // Counts `rows` a committed write (a restore, created sessions, appended
  // messages) added and runs ANALYZE when enough have been (pg_analyze.h);
  // AnalyzeBulkLoadedTables is that one ANALYZE.
  void AfterBulkLoad(int64_t rows);
  void AnalyzeBulkLoadedTables();
  // Restored events encoded as rows, with the blobs they need and their usage
  // (pg_restore.cc). Defined there.
  struct RestoreBatch;
  Result<RestoreBatch> EncodeRestore(std::string_view session_id, std::span<const Event> events);
  // Inside the caller's transaction: the batch's blobs, events and usage.
  Status InsertRestored(PgConnection& c, std::string_view session_id, const RestoreBatch& batch,
                        const BlobSourceFn& blob_source);
  // InsertEventRecord, and InsertGuardedEventRecord when `guard` is given.
  Result<std::optional<Event>> InsertEventRecordGuarded(
      std::string_view session_id, EventType type, std::string_view text, std::string_view body,
      const std::optional<store::RecordGuard>& guard);
  // The events of the session's history that `query` asks for, in seq order,
  // with missing blobs flagged (and warned about). kNotFound for a missing session.
  Result<std::vector<Event>> QueryHistory(std::string_view session_id, const HistoryQuery& query);

  const PgLocation location_;
  const std::string ns_;  // the namespace every query is confined to
  const StoreOptions options_;
  PgPool pool_;
  // Blobs above a size in an S3 bucket ($SESSIONDB_S3_ENDPOINT); null: all in `bytes`.
  std::unique_ptr<ObjectTier> objects_;
  BulkLoadStatistics bulk_load_statistics_;
};

}  // namespace sessiondb::postgres
