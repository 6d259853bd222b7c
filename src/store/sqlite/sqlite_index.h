// The embedded store's IndexBackend: the full-text index (FTS5 over
// search_docs and the search_content view), vectors (embeddings), the code
// memory (code_writes, code_edits, hook_seen) and meta, all tables of the
// store's own database (store/sqlite/schema.cc), which the schema's triggers
// keep in step with the store's writes.
//
// It reads and writes on a connection of its own next to the Store's (WAL
// lets them), so search and the hooks add no lock to the Store's appends.
// Files: sqlite_index.cc (opening, documents, meta), sqlite_index_keyword.cc
// (ranking, filters, snippets), sqlite_index_vectors.cc, sqlite_index_memory.cc.
//
// Thread-safety: none (one connection); see store/index_backend.h.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "store/index_backend.h"
#include "store/sqlite/sqlite_db.h"
#include "store/sqlite/wal_checkpointer.h"

namespace sessiondb::sqlite {

class SqliteIndexBackend final : public store::IndexBackend {
 public:
  // Opens `store_dir`/sessiondb.db (which the Store has brought to the
  // current schema) with the store's busy timeout; read-only when the store
  // is (then every write fails with kFailedPrecondition). Its files are
  // written through `file_system` (the store's; null: the real one), and
  // sealed with `files_key` when it is set (an encrypted store's
  // data_key.Derive("vector-index")); unset: in plaintext, as before.
  static Result<std::unique_ptr<store::IndexBackend>> Open(
      const std::string& store_dir, int busy_timeout_ms, bool read_only, FileSystem* file_system,
      std::optional<cipher::SecretKey> files_key = std::nullopt);
  // The same on the store's own connection `db`, for a process that uses the
  // store and its index from one thread at a time (the Claude Code hook): no
  // second connection, so no second reading of the schema (about a tenth of
  // the hook's CPU). `db` must outlive the backend; the store's lock does not
  // cover the backend's calls, which is why one thread is required.
  static std::unique_ptr<store::IndexBackend> OpenShared(
      const std::string& store_dir, Database* db, FileSystem* file_system,
      std::optional<cipher::SecretKey> files_key = std::nullopt);

  std::string Expression(const store::TextQuery& query) const override;
  Result<store::KeywordRanking> RankKeyword(const store::TextQuery& query,
                                            const SearchFilter& filter,
                                            int64_t max_candidates) override;
  Result<store::FilteredDocs> DocsPassingFilter(const SearchFilter& filter) override;
  Result<std::vector<int64_t>> CandidatesPassingFilter(
      const SearchFilter& filter, std::span<const int64_t> candidates) override;
  Result<bool> LoadHitDetails(int64_t doc_id, SearchHit* hit) override;
  Result<store::Snippet> MatchSnippet(const store::TextQuery& query, int64_t doc_id) override;
  Result<std::optional<std::string>> ReadDocumentText(int64_t doc_id) override;
  // As the default, with the page's snippets read in one walk of the
  // matches (MatchSnippets).
  Result<std::vector<PageDocument>> LoadPage(const store::TextQuery& query,
                                             std::span<const PageRequest> docs) override;
  Status RebuildKeywordIndex() override;
  bool HasVocabulary() const override { return true; }
  // One match found by FTS5 alone, unranked: a ranking counts the word's
  // documents first, a walk of all its postings the first time a word is
  // seen (about 30 ms for a word in every message of a million), which a
  // typo check on each word of a query would pay.
  Result<bool> HoldsWord(const std::string& word) override;
  Result<std::vector<store::VocabularyWord>> VocabularyWords(std::string_view prefix,
                                                             int min_length, int max_length,
                                                             int limit) override;
  Result<store::TextIndexState> TextIndexProgress() override;
  Result<store::TextIndexState> IndexPendingText(int64_t max_documents) override;
  Result<store::TextIndexState> TryIndexPendingText(int64_t max_documents) override;

  Result<int64_t> CountPendingEmbeddings(const std::string& model) override;
  Result<std::vector<store::DocumentText>> PendingDocuments(const std::string& model,
                                                            int limit) override;
  Status PutVectors(const std::string& model,
                    std::span<const store::EncodedVector> vectors) override;
  Result<int64_t> ScanVectors(
      const std::string& model, int64_t after_doc_id,
      const std::function<void(int64_t doc_id, std::string_view encoded)>& visit) override;
  Result<int64_t> VectorCount(const std::string& model) override;
  Status ClearVectors() override;

  Result<std::optional<std::string>> GetMeta(std::string_view key) override;
  Status SetMeta(std::string_view key, std::string_view value) override;
  std::string FilesDirectory() const override;
  FileSystem& file_system() override { return *file_system_; }
  const cipher::SecretKey* FilesKey() const override { return files_key_ ? &*files_key_ : nullptr; }

  Result<std::optional<std::string>> LastWholeFile(std::string_view file_path) override;
  Result<RecordedWrite> InsertCodeWrite(const store::StoredCodeWrite& write,
                                        const std::vector<std::string>& functions) override;
  Result<std::optional<store::KeptCodeWrite>> CodeWriteOfDocument(int64_t doc_id) override;
  Result<store::EditCounts> CountEdits(std::string_view file_path, std::string_view function,
                                       int64_t since_30d_ms, int64_t since_24h_ms) override;
  Result<std::vector<ChurnEntry>> CountHotspots(std::string_view path_prefix, bool functions,
                                                int limit, int64_t since_30d_ms,
                                                int64_t since_24h_ms) override;
  Result<bool> FirstSighting(std::string_view key, int64_t now_ms, int64_t capacity) override;
  Result<std::vector<store::StoredToolCall>> ToolCallsAfter(int64_t after_doc_id,
                                                            int limit) override;
  Result<int64_t> NewestDocument() override;

 private:
  // True when no match of a query can fail `filter` (the kinds aside, which
  // the MATCH expression holds): then RankKeyword reads FTS5 alone.
  Result<bool> EveryMatchPassesFilter(const SearchFilter& filter);
  // MatchSnippet's answer for each of `doc_ids` that matches `query`, by
  // document id; the others are left out.
  Result<std::unordered_map<int64_t, store::Snippet>> MatchSnippets(const store::TextQuery& query,
                                                                    std::vector<int64_t> doc_ids);

  SqliteIndexBackend(std::string store_dir, std::unique_ptr<Database> owned_db, Database* db,
                     FileSystem* file_system)
      : store_dir_(std::move(store_dir)),
        owned_db_(std::move(owned_db)),
        db_(db),
        file_system_(file_system ? file_system : FileSystem::Default()) {}

  const std::string store_dir_;
  // The connection of its own; null when it shares the store's (OpenShared).
  const std::unique_ptr<Database> owned_db_;
  Database* const db_;  // owned_db_, or the store's connection
  // Checkpoints the WAL that catch-ups and embeddings write off their commit
  // path, as the store's writer does (null when read-only, and on the
  // store's connection, whose own checkpointer sees these commits). After
  // owned_db_: it is stopped before the connection it hooks closes.
  std::unique_ptr<WalCheckpointer> checkpointer_;
  FileSystem* const file_system_;
  // Seals the saved HNSW graph; unset for a plaintext store.
  std::optional<cipher::SecretKey> files_key_;
  // Whether any session was deleted, as of the database's version: read from
  // the sessions table again only once something changed (a scan of every
  // session, ~1 ms of each query at 10,000 sessions).
  struct DeletedSessions {
    int64_t data_version = -1;  // PRAGMA data_version: commits by other connections
    int64_t own_changes = -1;   // and this connection's own
    bool any = false;
  } deleted_sessions_;
};

}  // namespace sessiondb::sqlite
