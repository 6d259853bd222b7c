#include "import_floor.h"

#include <chrono>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "interop/import_sink.h"
#include "store/sqlite/schema.h"
#include "store/sqlite/search_text.h"
#include "store/sqlite/sqlite_db.h"

namespace sessiondb::bench {
namespace {

namespace fs = std::filesystem;
using sqlite::Database;
using sqlite::Statement;

// Where an import ends a run.
const interop::RunLimits kRun;

struct Row {
  std::string session_id;
  int64_t seq = 0;
  std::string id;
  int64_t ts_ms = 0;
  std::string type;
  std::optional<std::string> role;
  std::string text;
  std::optional<std::string> body;
  std::string search_text;
  std::string random_id;
};

class Stopwatch {
 public:
  double Seconds() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }

 private:
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

// One way of writing the rows: which schema, which ids, whether indexed.
struct Variant {
  const char* file;
  bool search = true;
  bool rowid_events = false;
  bool random_ids = false;
  double* seconds = nullptr;
};

// The events table of schema v4 rebuilt as a rowid table, with the same
// columns, keys and indexes. Its triggers go with the old table: the rows are
// indexed for search by IndexRows, as a restore's are.
constexpr char kRowidEvents[] = R"sql(
DROP TABLE events;
CREATE TABLE events (
  session_id TEXT NOT NULL,
  seq        INTEGER NOT NULL,
  id         TEXT NOT NULL,
  ts_ms      INTEGER NOT NULL,
  type       TEXT NOT NULL,
  role       TEXT,
  text       TEXT NOT NULL DEFAULT '',
  body       TEXT,
  UNIQUE (session_id, seq)
);
CREATE UNIQUE INDEX events_by_id ON events (id);
CREATE INDEX events_not_messages ON events (session_id, seq) WHERE type <> 'message';
)sql";

// A fresh database with the store's schema, opened as SqliteStore::Open opens
// a durable store.
Result<std::unique_ptr<Database>> OpenScratch(const fs::path& path, bool rowid_events) {
  for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(path.string() + suffix);
  ASSIGN_OR_RETURN(std::unique_ptr<Database> db, Database::Open(path.string(), 5000));
  RETURN_IF_ERROR(db->Exec("PRAGMA journal_mode = WAL"));
  RETURN_IF_ERROR(db->Exec("PRAGMA synchronous = FULL"));
  RETURN_IF_ERROR(db->Exec("PRAGMA cache_size = -32768; PRAGMA temp_store = MEMORY"));
  RETURN_IF_ERROR(sqlite::MigrateSchema(db.get(), path.string()));
  if (rowid_events) RETURN_IF_ERROR(db->Exec(kRowidEvents));
  // Schema v6: no trigger fires on the inserts; documents are recorded per
  // run (IndexRows), as a restore records them.
  return db;
}

Status InsertRows(Database* db, const std::vector<Row>& rows, bool random_ids) {
  ASSIGN_OR_RETURN(Statement insert,
                   db->Prepare("INSERT INTO events (session_id, seq, id, ts_ms, type, role, "
                               "text, body) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)"));
  for (const Row& r : rows) {
    insert.Bind(1, r.session_id).Bind(2, r.seq).Bind(3, random_ids ? r.random_id : r.id);
    insert.Bind(4, r.ts_ms).Bind(5, r.type);
    insert.BindOptional(6, r.role).Bind(7, r.text).BindOptional(8, r.body);
    RETURN_IF_ERROR(insert.Run());
  }
  return Status::Ok();
}

// What SqliteStore::IndexEventsLocked writes for these rows (one session's
// consecutive seqs at a time).
Status IndexRows(Database* db, const std::vector<Row>& rows) {
  ASSIGN_OR_RETURN(Statement docs,
                   db->Prepare("INSERT INTO search_docs (session_id, seq) SELECT session_id, seq "
                               "FROM events WHERE session_id = ?1 AND seq BETWEEN ?2 AND ?3 "
                               "ORDER BY seq"));
  ASSIGN_OR_RETURN(Statement find,
                   db->Prepare("SELECT doc_id, seq FROM search_docs WHERE session_id = ?1 "
                               "AND seq BETWEEN ?2 AND ?3 AND code_id IS NULL"));
  ASSIGN_OR_RETURN(
      Statement fts,
      db->Prepare("INSERT INTO search_fts (rowid, content, code) VALUES (?1, ?2, '')"));
  size_t begin = 0;
  while (begin < rows.size()) {
    size_t end = begin + 1;
    while (end < rows.size() && rows[end].session_id == rows[begin].session_id) ++end;
    const int64_t first = rows[begin].seq, last = rows[end - 1].seq;
    docs.Bind(1, rows[begin].session_id).Bind(2, first).Bind(3, last);
    RETURN_IF_ERROR(docs.Run());
    find.Bind(1, rows[begin].session_id).Bind(2, first).Bind(3, last);
    std::vector<std::pair<int64_t, int64_t>> doc_ids;
    for (;;) {
      ASSIGN_OR_RETURN(bool row, find.Step());
      if (!row) break;
      doc_ids.emplace_back(find.ColumnInt(0), find.ColumnInt(1));
    }
    find.Reset();
    for (const auto& [doc_id, seq] : doc_ids) {
      fts.Bind(1, doc_id).Bind(2, rows[begin + static_cast<size_t>(seq - first)].search_text);
      RETURN_IF_ERROR(fts.Run());
    }
    begin = end;
  }
  return Status::Ok();
}

Status WriteRun(Database* db, const Variant& v, const std::vector<Row>& rows) {
  Stopwatch watch;
  ASSIGN_OR_RETURN(sqlite::Transaction txn, sqlite::Transaction::Begin(db));
  RETURN_IF_ERROR(InsertRows(db, rows, v.random_ids));
  if (v.search) RETURN_IF_ERROR(IndexRows(db, rows));
  RETURN_IF_ERROR(txn.Commit());
  *v.seconds += watch.Seconds();
  return Status::Ok();
}

// Writes every event of `source` into a fresh database the way `v` says, a
// run at a time, and adds the seconds the writes took to *v.seconds; the
// variant that measures rows_and_search also counts what it indexed.
Status WriteVariant(Database* source, const fs::path& scratch_dir, const Variant& v,
                    ImportFloor* floor) {
  const bool count = v.seconds == &floor->rows_and_search;
  ASSIGN_OR_RETURN(std::unique_ptr<Database> db, OpenScratch(scratch_dir / v.file, v.rowid_events));
  ASSIGN_OR_RETURN(Statement read,
                   source->Prepare("SELECT session_id, seq, id, ts_ms, type, role, text, body "
                                   "FROM events ORDER BY session_id, seq"));
  std::vector<Row> run;
  int64_t run_text = 0;
  auto write = [&]() -> Status {
    RETURN_IF_ERROR(WriteRun(db.get(), v, run));
    run.clear();
    run_text = 0;
    return Status::Ok();
  };
  for (;;) {
    ASSIGN_OR_RETURN(bool more, read.Step());
    if (!more) break;
    Row r;
    r.session_id = read.ColumnText(0);
    r.seq = read.ColumnInt(1);
    r.id = read.ColumnText(2);
    r.ts_ms = read.ColumnInt(3);
    r.type = read.ColumnText(4);
    if (!read.ColumnIsNull(5)) r.role = std::string(read.ColumnText(5));
    r.text = read.ColumnText(6);
    if (!read.ColumnIsNull(7)) r.body = std::string(read.ColumnText(7));
    if (v.search) r.search_text = sqlite::SearchText(r.text, r.body.value_or(""));
    // A hash, as imported ids were before ImportedEventId ordered them.
    if (v.random_ids) r.random_id = interop::StableEventId(r.session_id, r.id);
    if (count) {
      ++floor->events;
      floor->search_text_bytes += static_cast<int64_t>(r.search_text.size());
    }
    run_text += static_cast<int64_t>(r.text.size() + (r.body ? r.body->size() : 0));
    run.push_back(std::move(r));
    if (run.size() >= kRun.events || run_text >= kRun.text_bytes) {
      RETURN_IF_ERROR(write());
    }
  }
  if (!run.empty()) RETURN_IF_ERROR(write());
  // Closing checkpoints what the log still holds: part of the work, as in
  // the import's own figure.
  Stopwatch watch;
  db.reset();
  *v.seconds += watch.Seconds();
  for (const char* suffix : {"", "-wal", "-shm"}) {
    fs::remove((scratch_dir / v.file).string() + suffix);
  }
  return Status::Ok();
}

}  // namespace

Result<ImportFloor> MeasureImportFloor(const fs::path& store_db, const fs::path& scratch_dir) {
  ImportFloor floor;
  const Variant variants[] = {
      {.file = "search.db", .seconds = &floor.rows_and_search},
      {.file = "rows.db", .search = false, .seconds = &floor.rows},
      {.file = "rowid.db", .rowid_events = true, .seconds = &floor.rowid_events},
      {.file = "random.db", .random_ids = true, .seconds = &floor.random_ids},
  };
  ASSIGN_OR_RETURN(std::unique_ptr<Database> source, Database::Open(store_db.string(), 5000));
  // One after another, so that no variant's writes wait on another's.
  for (const Variant& v : variants) {
    RETURN_IF_ERROR(WriteVariant(source.get(), scratch_dir, v, &floor));
  }
  return floor;
}

}  // namespace sessiondb::bench
