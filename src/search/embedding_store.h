// Vectors of the index's documents, kept by the backend (IndexBackend's
// PendingDocuments, PutVectors, ScanVectors): computing the pending ones in
// batches, and loading them for a scan.
// Thread-safety: none (the backend's).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "search/embedder.h"
#include "search/vector_index.h"
#include "sessiondb/search.h"
#include "sessiondb/status.h"
#include "store/index_backend.h"

namespace sessiondb::search {

// Embeds pending documents in batches (each kept in one transaction), oldest
// first, at most `max_documents` (-1: all).
Result<EmbedReport> EmbedPendingDocuments(store::IndexBackend* backend, Embedder* embedder,
                                          int64_t max_documents, const ProgressFn& progress);

// Adds to `set` the vectors of `model` with doc_id > after_doc_id (creating
// the set with the vectors' dimension when it is null); returns the largest
// doc_id seen (after_doc_id when none). kCorruption when a vector does not
// decode or differs in dimension from the others.
Result<int64_t> LoadVectors(store::IndexBackend* backend, const std::string& model,
                            int64_t after_doc_id, std::unique_ptr<VectorSet>* set);

}  // namespace sessiondb::search
