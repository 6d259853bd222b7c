#include "search/embedding_store.h"

#include <algorithm>
#include <vector>

#include "search/vector_codec.h"

namespace sessiondb::search {
namespace {

constexpr int64_t kBatch = 256;
// Endpoints limit their input; the start of a long tool output says enough.
constexpr size_t kMaxEmbedBytes = 8192;

std::string Clip(std::string_view text) {
  if (text.size() <= kMaxEmbedBytes) return std::string(text);
  size_t cut = kMaxEmbedBytes;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  return std::string(text.substr(0, cut));
}

}  // namespace

Result<int64_t> CountPendingEmbeddings(sqlite::Database* db, const std::string& model) {
  ASSIGN_OR_RETURN(sqlite::Statement s,
                   db->Prepare("SELECT count(*) FROM search_docs WHERE doc_id > coalesce("
                               "(SELECT max(doc_id) FROM embeddings WHERE model = ?1), 0)"));
  s.Bind(1, std::string_view(model));
  ASSIGN_OR_RETURN(bool row, s.Step());
  return row ? std::max<int64_t>(0, s.ColumnInt(0)) : 0;
}

Result<EmbedReport> EmbedPendingDocuments(sqlite::Database* db, Embedder* embedder,
                                          int64_t max_documents, const ProgressFn& progress) {
  EmbedReport report;
  report.model = embedder->Model();
  ASSIGN_OR_RETURN(int64_t pending, CountPendingEmbeddings(db, report.model));
  const int64_t total = max_documents < 0 ? pending : std::min(pending, max_documents);
  if (progress) progress(0, total);
  int64_t cursor = 0;
  while (max_documents < 0 || report.embedded < max_documents) {
    std::vector<int64_t> ids;
    std::vector<std::string> texts;
    {
      ASSIGN_OR_RETURN(
          sqlite::Statement s,
          db->Prepare("SELECT d.doc_id, c.content || c.code FROM search_docs d"
                      " JOIN search_content c ON c.doc_id = d.doc_id"
                      " WHERE d.doc_id > ?1 AND NOT EXISTS (SELECT 1 FROM embeddings m"
                      "  WHERE m.doc_id = d.doc_id AND m.model = ?2)"
                      " ORDER BY d.doc_id LIMIT ?3"));
      int64_t want = kBatch;
      if (max_documents >= 0) want = std::min(want, max_documents - report.embedded);
      s.Bind(1, cursor).Bind(2, std::string_view(report.model)).Bind(3, want);
      while (true) {
        ASSIGN_OR_RETURN(bool row, s.Step());
        if (!row) break;
        ids.push_back(s.ColumnInt(0));
        texts.push_back(Clip(s.ColumnText(1)));
      }
    }
    if (ids.empty()) break;
    cursor = ids.back();
    // Only the texts with something in them go to the embedder.
    std::vector<std::string> to_embed;
    for (const std::string& t : texts) {
      if (t.find_first_not_of(" \t\r\n") != std::string::npos) to_embed.push_back(t);
    }
    std::vector<std::vector<float>> vectors;
    if (!to_embed.empty()) {
      ASSIGN_OR_RETURN(vectors, embedder->Embed(to_embed));
    }
    ASSIGN_OR_RETURN(sqlite::Transaction txn, sqlite::Transaction::Begin(db));
    ASSIGN_OR_RETURN(sqlite::Statement put,
                     db->Prepare("INSERT OR REPLACE INTO embeddings (doc_id, model, vector)"
                                 " SELECT ?1, ?2, ?3 WHERE EXISTS"
                                 " (SELECT 1 FROM search_docs WHERE doc_id = ?1)"));
    size_t next = 0;
    for (size_t i = 0; i < ids.size(); ++i) {
      const bool blank = texts[i].find_first_not_of(" \t\r\n") == std::string::npos;
      std::string stored = blank ? std::string() : EncodeVector(vectors[next++]);
      put.Bind(1, ids[i]).Bind(2, std::string_view(report.model)).BindBlob(3, stored);
      RETURN_IF_ERROR(put.Run());
    }
    RETURN_IF_ERROR(txn.Commit());
    report.embedded += static_cast<int64_t>(ids.size());
    if (progress) progress(std::min(report.embedded, total), total);
  }
  ASSIGN_OR_RETURN(report.remaining, CountPendingEmbeddings(db, report.model));
  return report;
}

Result<int64_t> LoadVectors(sqlite::Database* db, const std::string& model, int64_t after_doc_id,
                            std::unique_ptr<VectorSet>* set) {
  ASSIGN_OR_RETURN(sqlite::Statement s,
                   db->Prepare("SELECT doc_id, vector FROM embeddings"
                               " WHERE doc_id > ?1 AND model = ?2 AND length(vector) > 0"
                               " ORDER BY doc_id"));
  s.Bind(1, after_doc_id).Bind(2, std::string_view(model));
  int64_t last = after_doc_id;
  while (true) {
    ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) break;
    ASSIGN_OR_RETURN(std::vector<float> v, DecodeVector(s.ColumnBlob(1)));
    if (*set == nullptr) *set = std::make_unique<VectorSet>(static_cast<int>(v.size()));
    if (static_cast<int>(v.size()) != (*set)->dims()) {
      return Err(Status::Corruption("stored vectors of model " + model +
                                    " differ in dimension; run `sessiondb reindex --embeddings`"));
    }
    (*set)->Add(s.ColumnInt(0), v);
    last = s.ColumnInt(0);
  }
  return last;
}

}  // namespace sessiondb::search
