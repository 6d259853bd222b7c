// SqliteIndexBackend: its connection, the documents (hit details, text, the
// newest id) and meta. The rest is in sqlite_index_keyword.cc,
// sqlite_index_vectors.cc and sqlite_index_memory.cc.
#include "store/sqlite/sqlite_index.h"

#include <filesystem>
#include <mutex>
#include <optional>

#include "store/sqlite/fts5_query.h"
#include "store/sqlite/sqlite_store.h"
#include "store/sqlite/text_index_catch_up.h"

namespace sessiondb::sqlite {

namespace fs = std::filesystem;

Result<std::unique_ptr<store::IndexBackend>> SqliteStore::OpenIndexBackend() {
  return SqliteIndexBackend::Open(dir_, options_.busy_timeout_ms, !read_only_reason_.empty(),
                                  options_.file_system, VectorIndexKey());
}

Result<std::unique_ptr<store::IndexBackend>> SqliteStore::OpenIndexBackendOnStoreConnection() {
  std::lock_guard lock(mu_);
  return SqliteIndexBackend::OpenShared(dir_, db_.get(), options_.file_system, VectorIndexKey());
}

std::optional<cipher::SecretKey> SqliteStore::VectorIndexKey() const {
  // The saved vector index is sealed under the store's key, like its pages.
  if (!data_key_) return std::nullopt;
  return data_key_->Derive("vector-index");
}

Result<std::unique_ptr<store::IndexBackend>> SqliteIndexBackend::Open(
    const std::string& store_dir, int busy_timeout_ms, bool read_only, FileSystem* file_system,
    std::optional<cipher::SecretKey> files_key) {
  const fs::path db_path = fs::path(store_dir) / kEmbeddedDatabaseFile;
  ASSIGN_OR_RETURN(std::unique_ptr<Database> db,
                   Database::Open(db_path.string(), busy_timeout_ms,
                                  read_only ? Access::kReadOnly : Access::kAuto));
  // The Store set WAL mode (it is persistent) and the schema; a read-only
  // connection may not touch either.
  if (db->read_only_reason().empty()) RETURN_IF_ERROR(db->Exec("PRAGMA journal_mode = WAL"));
  // Code writes and embeddings can be recomputed; a power loss may lose the
  // last ones, never corrupt the database (WAL, synchronous NORMAL).
  RETURN_IF_ERROR(db->Exec("PRAGMA synchronous = NORMAL"));
  RETURN_IF_ERROR(db->Exec("PRAGMA cache_size = -65536; PRAGMA temp_store = MEMORY"));
  const bool writable = db->read_only_reason().empty();
  Database* const connection = db.get();
  auto backend = std::unique_ptr<SqliteIndexBackend>(
      new SqliteIndexBackend(store_dir, std::move(db), connection, file_system));
  backend->files_key_ = std::move(files_key);
  // A bulk catch-up's commits would otherwise copy the WAL into the database
  // file themselves (8 % of it). Checkpoints sync the file as the store's do.
  if (writable) {
    backend->checkpointer_ =
        WalCheckpointer::Attach(connection->handle(), db_path.string(), /*durable=*/true);
  }
  return std::unique_ptr<store::IndexBackend>(std::move(backend));
}

std::unique_ptr<store::IndexBackend> SqliteIndexBackend::OpenShared(
    const std::string& store_dir, Database* db, FileSystem* file_system,
    std::optional<cipher::SecretKey> files_key) {
  // The store's connection keeps its own settings (WAL, its synchronous mode)
  // and its checkpointer, which sees this backend's commits as its own.
  auto backend = std::unique_ptr<SqliteIndexBackend>(
      new SqliteIndexBackend(store_dir, nullptr, db, file_system));
  backend->files_key_ = std::move(files_key);
  return backend;
}

std::string SqliteIndexBackend::Expression(const store::TextQuery& query) const {
  return Fts5Expression(query);
}

Result<bool> SqliteIndexBackend::LoadHitDetails(int64_t doc_id, SearchHit* hit) {
  ASSIGN_OR_RETURN(Statement s,
                   db_->Prepare("SELECT d.session_id, d.seq, d.code_id, e.id, e.type, e.role,"
                                " e.ts_ms, s.title, s.deleted, c.file_path, c.created_ms,"
                                " s.trashed_ms IS NOT NULL"
                                " FROM search_docs d"
                                " LEFT JOIN events e ON d.code_id IS NULL"
                                "  AND e.session_id = d.session_id AND e.seq = d.seq"
                                " LEFT JOIN sessions s ON s.id = d.session_id"
                                " LEFT JOIN code_writes c ON c.id = d.code_id"
                                " WHERE d.doc_id = ?1"));
  s.Bind(1, doc_id);
  ASSIGN_OR_RETURN(bool row, s.Step());
  if (!row) return false;
  hit->session_id = std::string(s.ColumnText(0));
  hit->seq = s.ColumnInt(1);
  hit->session_title = std::string(s.ColumnText(7));
  if (!s.ColumnIsNull(2)) {
    hit->kind = HitKind::kCodeWrite;
    hit->code_id = s.ColumnInt(2);
    hit->file_path = std::string(s.ColumnText(9));
    hit->time_ms = s.ColumnInt(10);
    // A code write recorded for a trashed session is hidden until it is restored.
    return !s.ColumnIsNull(9) && s.ColumnInt(11) == 0;
  }
  if (s.ColumnIsNull(3) || s.ColumnIsNull(8) || s.ColumnInt(8) != 0) return false;
  hit->event_id = std::string(s.ColumnText(3));
  std::string_view type = s.ColumnText(4);
  hit->kind = type == "compaction"      ? HitKind::kCompaction
              : type == "resource_view" ? HitKind::kResourceView
                                        : HitKind::kMessage;
  if (!s.ColumnIsNull(5)) {
    Result<Role> role = ParseRole(s.ColumnText(5));
    if (role) hit->role = *role;
  }
  hit->time_ms = s.ColumnInt(6);
  return true;
}

Result<std::optional<std::string>> SqliteIndexBackend::ReadDocumentText(int64_t doc_id) {
  ASSIGN_OR_RETURN(
      Statement s,
      db_->Prepare("SELECT content || code FROM search_pending_content WHERE doc_id = ?1"));
  s.Bind(1, doc_id);
  ASSIGN_OR_RETURN(bool row, s.Step());
  if (!row) return std::optional<std::string>();
  return std::optional<std::string>(std::string(s.ColumnText(0)));
}

Result<store::TextIndexState> SqliteIndexBackend::TextIndexProgress() {
  return TextIndexStateOf(*db_);
}

Result<store::TextIndexState> SqliteIndexBackend::IndexPendingText(int64_t max_documents) {
  return IndexPendingTextOn(*db_, max_documents);
}

Result<store::TextIndexState> SqliteIndexBackend::TryIndexPendingText(int64_t max_documents) {
  return TryIndexPendingTextOn(*db_, max_documents);
}

Result<int64_t> SqliteIndexBackend::NewestDocument() {
  ASSIGN_OR_RETURN(std::optional<int64_t> newest,
                   db_->QueryInt("SELECT coalesce(max(doc_id), 0) FROM search_docs"));
  return newest.value_or(0);
}

Result<std::optional<std::string>> SqliteIndexBackend::GetMeta(std::string_view key) {
  ASSIGN_OR_RETURN(Statement s, db_->Prepare("SELECT value FROM meta WHERE key = ?1"));
  s.Bind(1, key);
  ASSIGN_OR_RETURN(bool row, s.Step());
  if (!row) return std::optional<std::string>();
  return std::optional<std::string>(std::string(s.ColumnText(0)));
}

Status SqliteIndexBackend::SetMeta(std::string_view key, std::string_view value) {
  ASSIGN_OR_RETURN(Statement s,
                   db_->Prepare("INSERT OR REPLACE INTO meta (key, value) VALUES (?1, ?2)"));
  s.Bind(1, key).Bind(2, value);
  return s.Run();
}

std::string SqliteIndexBackend::FilesDirectory() const {
  return (fs::path(store_dir_) / "index").string();
}

}  // namespace sessiondb::sqlite
