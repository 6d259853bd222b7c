// Vectors of the index's documents, kept in the `embeddings` table: which
// are pending, computing them in batches, and loading them for a scan.
#pragma once

#include <cstdint>
#include <string>

#include "search/embedder.h"
#include "search/vector_index.h"
#include "sessiondb/search.h"
#include "sessiondb/status.h"
#include "store/sqlite/sqlite_db.h"

namespace sessiondb::search {

// Documents written after the newest one with a vector of `model`: those
// Embed has not reached yet (it goes oldest first). A cheap count, read by
// every vector search.
Result<int64_t> CountPendingEmbeddings(sqlite::Database* db, const std::string& model);

// Embeds pending documents in batches (one transaction each), oldest first,
// at most `max_documents` (-1: all).
Result<EmbedReport> EmbedPendingDocuments(sqlite::Database* db, Embedder* embedder,
                                          int64_t max_documents, const ProgressFn& progress);

// Adds to `set` the vectors of `model` with doc_id > after_doc_id (creating
// the set with the vectors' dimension when it is null); returns the largest
// doc_id seen (after_doc_id when none).
Result<int64_t> LoadVectors(sqlite::Database* db, const std::string& model, int64_t after_doc_id,
                            std::unique_ptr<VectorSet>* set);

}  // namespace sessiondb::search
