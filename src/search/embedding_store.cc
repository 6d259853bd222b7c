#include "search/embedding_store.h"

#include <algorithm>
#include <vector>

#include "search/vector_codec.h"

namespace sessiondb::search {
namespace {

constexpr int kBatch = 256;
// Endpoints limit their input; the start of a long tool output says enough.
constexpr size_t kMaxEmbedBytes = 8192;

std::string Clip(std::string_view text) {
  if (text.size() <= kMaxEmbedBytes) return std::string(text);
  size_t cut = kMaxEmbedBytes;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  return std::string(text.substr(0, cut));
}

bool IsBlank(std::string_view text) {
  return text.find_first_not_of(" \t\r\n") == std::string_view::npos;
}

}  // namespace

Result<EmbedReport> EmbedPendingDocuments(store::IndexBackend* backend, Embedder* embedder,
                                          int64_t max_documents, const ProgressFn& progress) {
  EmbedReport report;
  report.model = embedder->Model();
  ASSIGN_OR_RETURN(int64_t pending, backend->CountPendingEmbeddings(report.model));
  const int64_t total = max_documents < 0 ? pending : std::min(pending, max_documents);
  if (progress) progress(0, total);
  int64_t last_doc_id = 0;
  while (max_documents < 0 || report.embedded < max_documents) {
    int64_t want = kBatch;
    if (max_documents >= 0) want = std::min(want, max_documents - report.embedded);
    ASSIGN_OR_RETURN(std::vector<store::DocumentText> docs,
                     backend->PendingDocuments(report.model, static_cast<int>(want)));
    if (docs.empty()) break;
    // Each batch starts past the last: a backend handing the same documents
    // back would otherwise keep this loop (and the embedder) busy forever.
    if (docs.front().doc_id <= last_doc_id) {
      return Err(Status::Internal("embedding catch-up did not advance past document " +
                                  std::to_string(last_doc_id)));
    }
    last_doc_id = docs.back().doc_id;
    // Only the texts with something in them go to the embedder.
    std::vector<std::string> to_embed;
    for (store::DocumentText& d : docs) {
      d.text = Clip(d.text);
      if (!IsBlank(d.text)) to_embed.push_back(d.text);
    }
    std::vector<std::vector<float>> vectors;
    if (!to_embed.empty()) {
      ASSIGN_OR_RETURN(vectors, embedder->Embed(to_embed));
    }
    if (vectors.size() != to_embed.size()) {
      return Err(Status::Internal("the embedder returned " + std::to_string(vectors.size()) +
                                  " vectors for " + std::to_string(to_embed.size()) + " texts"));
    }
    std::vector<store::EncodedVector> encoded;
    encoded.reserve(docs.size());
    size_t next = 0;
    for (const store::DocumentText& d : docs) {
      encoded.push_back(
          {d.doc_id, IsBlank(d.text) ? std::string() : EncodeVector(vectors[next++])});
    }
    RETURN_IF_ERROR(backend->PutVectors(report.model, encoded));
    report.embedded += static_cast<int64_t>(docs.size());
    if (progress) progress(std::min(report.embedded, total), total);
  }
  ASSIGN_OR_RETURN(report.remaining, backend->CountPendingEmbeddings(report.model));
  return report;
}

Result<int64_t> LoadVectors(store::IndexBackend* backend, const std::string& model,
                            int64_t after_doc_id, std::unique_ptr<VectorSet>* set) {
  // The scan calls back; the first vector that cannot join the set stops
  // what is added, and its error is returned once the scan is over.
  Status bad = Status::Ok();
  ASSIGN_OR_RETURN(
      int64_t last,
      backend->ScanVectors(model, after_doc_id, [&](int64_t doc_id, std::string_view encoded) {
        if (!bad.ok()) return;
        Result<std::vector<float>> v = DecodeVector(encoded);
        if (!v) {
          bad = v.error();
          return;
        }
        if (*set == nullptr) *set = std::make_unique<VectorSet>(static_cast<int>(v->size()));
        if (static_cast<int>(v->size()) != (*set)->dims()) {
          bad = Status::Corruption("stored vectors of model " + model +
                                   " differ in dimension; run `sessiondb reindex --embeddings`");
          return;
        }
        (*set)->Add(doc_id, *v);
      }));
  RETURN_IF_ERROR(bad);
  return last;
}

}  // namespace sessiondb::search
