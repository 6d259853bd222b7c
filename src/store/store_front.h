// The Store a caller opens: one front over a storage backend (backend.h).
// It applies, once for every backend, what the Store promises beyond
// storage: argument validation, read-only refusals, new ids, the title rules,
// message preparation (limits, attachments, blob digests), list paging,
// draft messages, the rows a restore writes, data URIs and blob hashing, the
// rules of a removal, a fork and a prune (log_rules.h), and what gc and
// verify decide. The backend then reads and writes rows in its own SQL.
// Thread-safety: as the backend (both are shared between threads).
#pragma once

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "core/mutex.h"
#include "core/secret_scan.h"
#include "sessiondb/store.h"
#include "store/backend.h"

namespace sessiondb::store {

class StoreFront final : public Store {
 public:
  // `options` with defaults applied (WithDefaults).
  StoreFront(std::unique_ptr<Backend> backend, StoreOptions options);

  Result<Session> CreateSession(const NewSession& request) override;
  Result<Session> GetSession(std::string_view id) override;
  Result<SessionPage> ListSessions(const ListOptions& options) override;
  Status RenameSession(std::string_view id, std::string_view title) override;
  Status SetArchived(std::string_view id, bool archived) override;
  Status DeleteSession(std::string_view id) override;
  Result<int64_t> PurgeArchived(int64_t before_ms) override;
  Result<std::optional<std::string>> GetActiveSession() override;
  Status SetActiveSession(std::string_view id) override;

  Status TrashSession(std::string_view id) override;
  Result<Session> RestoreFromTrash(std::string_view id) override;
  Result<ErasureReceipt> EmptyTrash(int64_t trashed_before_ms) override;
  Result<ErasureReceipt> Erase(const EraseRequest& request) override;
  Result<ErasureCheck> VerifyErased(const ErasureReceipt& receipt) override;
  Result<std::vector<LedgerEntry>> ReadLedger(const LedgerQuery& query) override;
  Result<RetentionPolicy> GetRetentionPolicy() override;
  Status SetRetentionPolicy(const RetentionPolicy& policy) override;
  Result<RetentionRun> ApplyRetention(bool dry_run) override;

  Result<AppendResult> Append(std::string_view session_id, const Message& message) override;
  Result<std::vector<AppendResult>> AppendBatch(std::string_view session_id,
                                                std::span<const Message> messages) override;
  Result<std::vector<Message>> ReadMessages(std::string_view session_id, int64_t from_seq,
                                            int64_t limit) override;
  Result<std::vector<Message>> ReadLastMessages(std::string_view session_id,
                                                int64_t count) override;
  Status VisitMessages(std::string_view session_id, const MessageVisitor& visit,
                       int64_t from_seq) override;
  Status RestoreSession(const Session& session, std::span<const Event> events,
                        const BlobSourceFn& blob_source) override;
  Status RestoreEvents(std::string_view session_id, std::span<const Event> events,
                       const BlobSourceFn& blob_source) override;

  Result<Session> ForkSession(std::string_view parent_id, int64_t at_seq,
                              const NewSession& child) override;
  Result<std::vector<Event>> ReadEvents(std::string_view session_id, int64_t from_seq,
                                        int64_t limit) override;
  Result<PruneReport> PruneCompaction(std::string_view session_id, int64_t compaction_seq) override;
  Result<Event> Rewind(std::string_view session_id, int64_t to_seq) override;
  Result<std::optional<Event>> RewindIfUnchanged(std::string_view session_id, int64_t to_seq,
                                                 int64_t expected_last_seq) override;
  Result<UsageReport> GetUsage(std::string_view session_id) override;
  Result<UsageSummary> GetUsageSummary(const UsageQuery& query) override;
  Result<std::vector<TurnUsage>> GetTurnUsage(std::string_view session_id,
                                              const std::string& prices_path) override;
  Result<Draft> OpenDraft(std::string_view session_id, Role role, std::string_view model) override;
  Status SaveDraft(const Draft& draft) override;
  Result<std::vector<Draft>> ListDrafts(std::string_view session_id) override;
  Result<AppendResult> FinishDraft(std::string_view draft_id, const Message& message) override;
  Status DiscardDraft(std::string_view draft_id) override;

  Result<std::string> ReadBlob(std::string_view sha256, bool verify) override;
  Result<std::unique_ptr<BlobReader>> OpenBlob(std::string_view sha256, int64_t offset) override;
  Result<std::string> ReadDataUri(const Resource& resource) override;

  Result<FileVersion> RecordFileVersion(const FileVersion& version,
                                        std::string_view content) override;
  Result<std::vector<FileVersion>> ListFileVersions(const FileVersionQuery& query) override;

  Result<GcReport> CollectGarbage(const GcOptions& options) override;
  Result<VerifyReport> Verify(const ProgressFn& progress) override;
  Result<StorageStats> Stats() override;
  Result<std::unique_ptr<IndexBackend>> OpenIndexBackend() override;
  Result<std::unique_ptr<IndexBackend>> OpenIndexBackendOnStoreConnection() override;

  Result<RedactionSettings> GetRedactionSettings() override;
  Status SetRedactionSettings(const RedactionSettings& settings) override;
  Result<std::vector<StoredSecret>> ScanSecrets() override;
  Result<RedactionReport> RedactStoredSecrets() override;

  // Loads the store's redaction settings and key (secret_redaction.h), which
  // StoreOptions::redact_secrets may override; Store::Open calls it once.
  Status LoadSecretRedaction();

  // The backend under this front, for tests and benchmarks that read a
  // backend's own diagnostics (group commit counts).
  Backend& backend() { return *backend_; }

 protected:
  Result<Event> AppendEventRecord(std::string_view session_id, EventType type,
                                  std::string_view text, std::string_view body) override;
  Result<std::optional<Event>> FindLastCompaction(std::string_view session_id,
                                                  int64_t upto_seq) override;
  Result<std::optional<Event>> FindResourceMessage(std::string_view session_id,
                                                   std::string_view resource_id) override;
  Result<std::vector<Event>> ReadRewinds(std::string_view session_id, int64_t upto_seq) override;

 private:
  int64_t Now() const { return options_.clock(); }
  std::string NewId() const;
  // kFailedPrecondition naming the store and why, when it is read-only.
  Status CheckWritable() const;
  // Each message redacted (when it holds secrets and redaction is on: the
  // copies go in `*redacted`, which must outlive the result), prepared
  // (PrepareMessage) and checked against the backend's own rules.
  Result<std::vector<PreparedMessage>> Prepare(std::span<const Message> messages,
                                               std::vector<Message>* redacted);
  // The redactor of what this Store writes; null when redaction is off.
  std::shared_ptr<const SecretRedactor> ActiveRedactor() const EXCLUDES(redaction_mu_);
  // `opened` with the active redactor set, which its code writes go through.
  Result<std::unique_ptr<IndexBackend>> WithActiveRedactor(
      Result<std::unique_ptr<IndexBackend>> opened) const EXCLUDES(redaction_mu_);
  // The redactor with the store's key and allow-list, on or off: what
  // ScanSecrets and RedactStoredSecrets use.
  std::shared_ptr<const SecretRedactor> StoreRedactor() const EXCLUDES(redaction_mu_);
  // `*text` with its secrets replaced when redaction is on.
  void RedactText(std::string* text) const;
  // `events`, or their redacted copies in `*redacted` when one holds a secret.
  std::span<const Event> RedactEvents(std::span<const Event> events,
                                      std::vector<Event>* redacted) const;
  // Marks the parts (and viewed resources) whose blob the store lacks as
  // missing, with a warning for each part: the rest of the history loads.
  Status FlagMissingBlobs(std::vector<Event>* events);
  Status FlagMissingBlobs(std::span<Message> messages);
  // Flags (and warns of) the parts of `*m` whose blob is not in `present`.
  void FlagMissingParts(const std::set<std::string>& present, Message* m);
  // Rewind and RewindIfUnchanged: with `expected_last_seq`, nullopt once the
  // log has moved past it; without, decided again while other rewinds land.
  Result<std::optional<Event>> RewindGuarded(std::string_view session_id, int64_t to_seq,
                                             std::optional<int64_t> expected_last_seq);
  // Session metadata as stored: a canonical JSON object whose "project" is
  // normal, or made from its "cwd" (core/project_path.h).
  Result<std::string> SessionMetadata(std::string_view metadata);
  // A title as stored (CleanTitle) that the backend can hold.
  Result<std::string> StorableTitle(std::string_view title);
  // Who the ledger records (StoreOptions::actor, its default applied).
  std::string Actor() const;
  // Completes `*receipt` (counts, blobs, store, actor, digest) inside the
  // erasure's transaction and appends its ledger entry there.
  Status SealReceipt(WriteTransaction& txn, const ErasedRows& rows,
                     const std::vector<BlobCandidate>& blobs, std::string_view action,
                     ErasureReceipt* receipt);
  // After an erasure's commit: deletes the blobs it freed (`freed`, the
  // candidates SealReceipt listed in the receipt), each by the name it was
  // stored under before the commit: an erasure of everything in an
  // encrypted PostgreSQL namespace replaces the key that names them.
  Status RemoveErasedBlobs(const ErasureReceipt& receipt, const std::vector<BlobCandidate>& freed);

  const std::unique_ptr<Backend> backend_;
  const StoreOptions options_;

  mutable Mutex redaction_mu_;
  std::shared_ptr<const SecretRedactor> redactor_ GUARDED_BY(redaction_mu_);
  bool redaction_on_ GUARDED_BY(redaction_mu_) = false;
  RedactionSettings redaction_settings_ GUARDED_BY(redaction_mu_);
};

}  // namespace sessiondb::store
