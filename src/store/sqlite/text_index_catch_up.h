// The embedded store's half of "the index follows the log" (schema version
// 5): writers only record documents (rows of search_docs); these read the
// documents past the watermark (search_progress.fts_through) into FTS5, many
// per statement, in one transaction with the watermark. Used by the index
// backend (searches, the server's worker, imports, reindex) and by a
// writable store when it closes, so a process that wrote and never searched
// leaves the index caught up for readers (a read-only store cannot index).
//
// Thread-safety: as the Database's (one connection, its owner's lock).
#pragma once

#include <cstdint>

#include "store/index_backend.h"
#include "store/sqlite/sqlite_db.h"

namespace sessiondb::sqlite {

// Where the full-text index stands: its watermark and the documents after it.
Result<store::TextIndexState> TextIndexStateOf(Database& db);

// Indexes at most `max_documents` pending documents, oldest first, in one
// write transaction that also moves the watermark (see
// IndexBackend::IndexPendingText). kFailedPrecondition on a read-only
// connection.
Result<store::TextIndexState> IndexPendingTextOn(Database& db, int64_t max_documents);

// The same without waiting for another writer: kBusy at once when another
// connection (of this process or another) holds the store's write lock.
Result<store::TextIndexState> TryIndexPendingTextOn(Database& db, int64_t max_documents);

}  // namespace sessiondb::sqlite
