// SqliteIndexBackend's vectors: the embeddings table (one vector per document
// and model, encoded by search/vector_codec; empty for a document with no
// text), what is pending, and the scan that loads them.
#include <algorithm>

#include "store/sqlite/sqlite_index.h"

namespace sessiondb::sqlite {

Result<int64_t> SqliteIndexBackend::CountPendingEmbeddings(const std::string& model) {
  ASSIGN_OR_RETURN(Statement s,
                   db_->Prepare("SELECT count(*) FROM search_docs WHERE doc_id > coalesce("
                                "(SELECT max(doc_id) FROM embeddings WHERE model = ?1), 0)"));
  s.Bind(1, std::string_view(model));
  ASSIGN_OR_RETURN(bool row, s.Step());
  return row ? std::max<int64_t>(0, s.ColumnInt(0)) : 0;
}

Result<std::vector<store::DocumentText>> SqliteIndexBackend::PendingDocuments(
    const std::string& model, int limit) {
  // After the newest vector of the model (embeddings_by_model finds it), so a
  // batch costs the same at the end of a long catch-up as at its start.
  ASSIGN_OR_RETURN(Statement s,
                   db_->Prepare("SELECT d.doc_id, c.content || c.code FROM search_docs d"
                                " JOIN search_pending_content c ON c.doc_id = d.doc_id"
                                " WHERE d.doc_id > coalesce((SELECT max(doc_id) FROM embeddings"
                                "  WHERE model = ?1), 0)"
                                " ORDER BY d.doc_id LIMIT ?2"));
  s.Bind(1, std::string_view(model)).Bind(2, int64_t{std::max(limit, 0)});
  std::vector<store::DocumentText> out;
  while (true) {
    ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) break;
    out.push_back({s.ColumnInt(0), std::string(s.ColumnText(1))});
  }
  return out;
}

Status SqliteIndexBackend::PutVectors(const std::string& model,
                                      std::span<const store::EncodedVector> vectors) {
  ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(db_));
  // A document deleted since it was read gets no vector (its row would
  // outlive it: the trigger that drops vectors has already run).
  ASSIGN_OR_RETURN(Statement put,
                   db_->Prepare("INSERT OR REPLACE INTO embeddings (doc_id, model, vector)"
                                " SELECT ?1, ?2, ?3 WHERE EXISTS"
                                " (SELECT 1 FROM search_docs WHERE doc_id = ?1)"));
  for (const store::EncodedVector& v : vectors) {
    put.Bind(1, v.doc_id).Bind(2, std::string_view(model)).BindBlob(3, v.encoded);
    RETURN_IF_ERROR(put.Run());
  }
  return txn.Commit();
}

Result<int64_t> SqliteIndexBackend::ScanVectors(
    const std::string& model, int64_t after_doc_id,
    const std::function<void(int64_t doc_id, std::string_view encoded)>& visit) {
  ASSIGN_OR_RETURN(Statement s,
                   db_->Prepare("SELECT doc_id, vector FROM embeddings"
                                " WHERE doc_id > ?1 AND model = ?2 AND length(vector) > 0"
                                " ORDER BY doc_id"));
  s.Bind(1, after_doc_id).Bind(2, std::string_view(model));
  int64_t last = after_doc_id;
  while (true) {
    ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) break;
    last = s.ColumnInt(0);
    visit(last, s.ColumnBlob(1));
  }
  return last;
}

Result<int64_t> SqliteIndexBackend::VectorCount(const std::string& model) {
  ASSIGN_OR_RETURN(Statement s, db_->Prepare("SELECT count(*) FROM embeddings WHERE model = ?1"
                                             " AND length(vector) > 0"));
  s.Bind(1, std::string_view(model));
  ASSIGN_OR_RETURN(bool row, s.Step());
  return row ? s.ColumnInt(0) : 0;
}

Status SqliteIndexBackend::ClearVectors() {
  ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(db_));
  RETURN_IF_ERROR(db_->Exec("DELETE FROM embeddings; DELETE FROM meta WHERE key LIKE 'hnsw:%'"));
  return txn.Commit();
}

}  // namespace sessiondb::sqlite
