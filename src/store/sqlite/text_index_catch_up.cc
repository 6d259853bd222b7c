// The full-text index's catch-up on the embedded store (see the header).
#include "store/sqlite/text_index_catch_up.h"

#include <algorithm>
#include <string>

namespace sessiondb::sqlite {

Result<store::TextIndexState> TextIndexStateOf(Database& db) {
  ASSIGN_OR_RETURN(Statement s,
                   db.Prepare("SELECT p.fts_through, (SELECT count(*) FROM search_docs"
                              " WHERE doc_id > p.fts_through) FROM search_progress p"));
  ASSIGN_OR_RETURN(bool row, s.Step());
  if (!row)
    return Err(Status::Corruption("the search_progress row is missing; run `sessiondb reindex`"));
  return store::TextIndexState{.indexed_through = s.ColumnInt(0), .pending = s.ColumnInt(1)};
}

namespace {

// FTS5 writes its in-memory terms out as a new segment when they pass its
// "hashsize" (1 MiB by default), so a bulk batch (kBulkTextIndexBatch, about
// 1 KiB of terms per message) would become some 60 segments, each merged
// again later. Large enough for one segment per batch; the memory is held
// only while a catch-up runs. A setting of the index itself, so it is written
// once, by the first catch-up that finds it different (stores of any version).
constexpr int64_t kFts5HashSize = int64_t{96} << 20;

Status EnsureHashSize(Database& db) {
  ASSIGN_OR_RETURN(std::optional<int64_t> now,
                   db.QueryInt("SELECT v FROM search_fts_config WHERE k = 'hashsize'"));
  if (now == kFts5HashSize) return Status::Ok();
  ASSIGN_OR_RETURN(Statement set,
                   db.Prepare("INSERT INTO search_fts (search_fts, rank) VALUES ('hashsize', ?1)"));
  set.Bind(1, kFts5HashSize);
  return set.Run();
}

}  // namespace

Result<store::TextIndexState> IndexPendingTextOn(Database& db, int64_t max_documents) {
  if (!db.read_only_reason().empty()) {
    return Err(Status::FailedPrecondition("the full-text index cannot catch up: " +
                                          db.read_only_reason()));
  }
  // BEGIN IMMEDIATE: the watermark read below is the one this transaction
  // moves, so two catch-ups (a search and the server's indexer) never index
  // the same document; the second finds the first's watermark.
  ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(&db));
  ASSIGN_OR_RETURN(std::optional<int64_t> from,
                   db.QueryInt("SELECT fts_through FROM search_progress"));
  if (!from)
    return Err(Status::Corruption("the search_progress row is missing; run `sessiondb reindex`"));
  RETURN_IF_ERROR(EnsureHashSize(db));
  int64_t through = *from;
  {
    ASSIGN_OR_RETURN(Statement last,
                     db.Prepare("SELECT max(doc_id) FROM (SELECT doc_id FROM search_docs"
                                " WHERE doc_id > ?1 ORDER BY doc_id LIMIT ?2)"));
    last.Bind(1, *from).Bind(2, std::max<int64_t>(max_documents, 1));
    ASSIGN_OR_RETURN(bool row, last.Step());
    if (row && !last.ColumnIsNull(0)) through = last.ColumnInt(0);
  }
  if (through > *from) {
    // One statement for the whole batch: FTS5 builds one segment of it in
    // memory and writes it once, instead of a segment (and merges) per row.
    ASSIGN_OR_RETURN(Statement index,
                     db.Prepare("INSERT INTO search_fts (rowid, content, code)"
                                " SELECT doc_id, coalesce(content, ''), coalesce(code, '')"
                                " FROM search_pending_content"
                                " WHERE doc_id > ?1 AND doc_id <= ?2 ORDER BY doc_id"));
    index.Bind(1, *from).Bind(2, through);
    RETURN_IF_ERROR(index.Run());
    ASSIGN_OR_RETURN(Statement move, db.Prepare("UPDATE search_progress SET fts_through = ?1"));
    move.Bind(1, through);
    RETURN_IF_ERROR(move.Run());
  }
  ASSIGN_OR_RETURN(std::optional<int64_t> pending,
                   db.QueryInt("SELECT count(*) FROM search_docs WHERE doc_id > "
                               "(SELECT fts_through FROM search_progress)"));
  RETURN_IF_ERROR(txn.Commit());
  return store::TextIndexState{.indexed_through = through, .pending = pending.value_or(0)};
}

Result<store::TextIndexState> TryIndexPendingTextOn(Database& db, int64_t max_documents) {
  // A busy timeout of 0 makes Transaction::Begin a try of the writer lock
  // and BEGIN IMMEDIATE fail at once on SQLite's lock; the connection's own
  // timeout comes back for its other work whatever happens.
  ASSIGN_OR_RETURN(std::optional<int64_t> timeout, db.QueryInt("PRAGMA busy_timeout"));
  RETURN_IF_ERROR(db.Exec("PRAGMA busy_timeout = 0"));
  Result<store::TextIndexState> state = IndexPendingTextOn(db, max_documents);
  Status restored = db.Exec("PRAGMA busy_timeout = " + std::to_string(timeout.value_or(0)));
  if (state && !restored.ok()) return Err(restored);
  return state;
}

}  // namespace sessiondb::sqlite
