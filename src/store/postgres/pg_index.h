// The IndexBackend of a PostgreSQL store (store/index_backend.h): full-text
// search over search_docs (tsvector, GIN, ts_rank_cd; snippets made here), vectors
// in bytea (searched through a graph cached per machine, pg_vector_cache.h,
// and an exact scan of the rest), and the code memory's tables, every query
// held to the store's namespace. It borrows the store's connection pool and retry
// loop, so it must not outlive the store.
//
// The tables are schema v3 (pg_schema.cc); what the index holds of a
// document, and why it is prepared in C++, is in pg_search_docs.h.
//
// In an encrypted namespace (pg_sealer.h) the server holds no content and
// runs no text function on it: the index holds keyed tokens, snippets are
// made here after opening the text, vectors and code-memory text are sealed
// and opened here, and what SQL cannot compare any more is compared here
// (a project filter, a churn prefix) or through keyed tokens (a file path,
// a function, a write's identity). docs/encryption.md says what it leaks.
// Thread-safety: none beyond the store's (one user at a time, like every
// IndexBackend); each call leases its own connection.
#pragma once

#include <optional>
#include <string>

#include "store/index_backend.h"
#include "store/postgres/pg_store.h"

namespace sessiondb::postgres {

// Inside the caller's transaction (or none): the ids of the namespace's code
// writes, in id order, whose project and file path, opened, `keep` accepts.
// What selects code writes by folder where SQL cannot: an encrypted
// namespace seals both (code_writes.file_path, .project), so e.g. erasing a
// project's writes picks them with this. Reads every write's row.
Result<std::vector<int64_t>> CodeWritesWhere(
    PgConnection& c, const std::string& ns,
    const std::function<bool(std::string_view project, std::string_view file_path)>& keep);

class PgIndex final : public store::IndexBackend {
 public:
  // `encrypted`: whether the store's namespace is (its connections' sealer).
  PgIndex(PgStore* store, bool encrypted) : store_(store), encrypted_(encrypted) {}

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
  Result<std::vector<PageDocument>> LoadPage(const store::TextQuery& query,
                                             std::span<const PageRequest> docs) override;
  Status RebuildKeywordIndex() override;
  // The namespace's search_vocab rows (schema version 8), kept by triggers in
  // the writers' transactions, each word's count spread over shards (one per
  // writer's connection), summed here. An encrypted namespace keeps none: its index
  // holds keyed tokens, and a table of its words would give them away.
  bool HasVocabulary() const override { return !encrypted_; }
  // A plaintext namespace answers from its vocabulary (every lexeme of the
  // word in search_vocab): a ranking query with a LIMIT of one would walk
  // the namespace's documents newest first for a word none holds.
  Result<bool> HoldsWord(const std::string& word) override;
  Result<std::vector<store::VocabularyWord>> VocabularyWords(std::string_view prefix,
                                                             int min_length, int max_length,
                                                             int limit) override;
  Result<store::TextIndexState> TextIndexProgress() override;
  Result<store::TextIndexState> IndexPendingText(int64_t max_documents) override;

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
  // The graph's coverage ("hnsw:<model>") is kept per machine beside the
  // graph, under the database's epoch for it (pg_vector_cache.h); every
  // other key in index_meta.
  Result<std::optional<std::string>> GetMeta(std::string_view key) override;
  Status SetMeta(std::string_view key, std::string_view value) override;
  // The namespace's per-machine cache folder (pg_vector_cache.h), found on
  // first use; empty (vectors scanned exactly) for an encrypted namespace,
  // whose sealer gives no key for files, or when no cache folder can be made.
  std::string FilesDirectory() const override;

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
  // The store's retry loop (PgStore::Run) on its pool.
  template <typename Fn>
  auto Run(Fn&& work) {
    return store_->Run(std::forward<Fn>(work));
  }
  const std::string& ns() const { return store_->ns_; }
  // Drops from `ranking` the documents that hold an excluded prefix of
  // `query`, which keyed tokens cannot exclude (pg_fulltext_query.h).
  Status DropExcludedPrefixes(const store::TextQuery& query, store::KeywordRanking* ranking);

  PgStore* store_;
  const bool encrypted_;
  // FilesDirectory(), once asked.
  mutable std::optional<std::string> files_directory_;
};

}  // namespace sessiondb::postgres
