#include "store/sqlite/schema.h"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <random>
#include <thread>

#include "sessiondb/store.h"

namespace sessiondb::sqlite {
namespace {

// The searchable text of an event row (NEW or OLD in a trigger, e in a view):
// see store/sqlite/search_text.h.
#define SEARCH_TEXT(row) "sessiondb_search_text(" row ".text, " row ".body)"

// The searchable text of a code write: its path, then the code it wrote.
#define CODE_TEXT(row) row ".file_path || char(10) || " row ".new_code"

// kMigrations[i] takes the schema from version i to version i + 1.
// Never edit a migration that has shipped; append a new one.
constexpr std::array<const char*, kSchemaVersion> kMigrations = {
    // 0 -> 1: sessions, the event log, blob references, store settings.
    R"sql(
CREATE TABLE meta (
  key   TEXT PRIMARY KEY,
  value TEXT NOT NULL
) WITHOUT ROWID;

CREATE TABLE sessions (
  id            TEXT PRIMARY KEY,
  title         TEXT NOT NULL,
  title_fixed   INTEGER NOT NULL DEFAULT 0,  -- 1 once set by a first message or a rename
  preview       TEXT NOT NULL DEFAULT '',
  created_ms    INTEGER NOT NULL,
  updated_ms    INTEGER NOT NULL,
  message_count INTEGER NOT NULL DEFAULT 0,
  last_seq      INTEGER NOT NULL DEFAULT 0,
  archived      INTEGER NOT NULL DEFAULT 0,
  metadata      TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX sessions_by_update ON sessions (updated_ms DESC, id DESC);

-- The append-only log, clustered by session so a session reads sequentially.
-- body is NULL for a message that is one plain text part (then text is all of it).
CREATE TABLE events (
  session_id TEXT NOT NULL,
  seq        INTEGER NOT NULL,
  id         TEXT NOT NULL,
  ts_ms      INTEGER NOT NULL,
  type       TEXT NOT NULL,
  role       TEXT,
  text       TEXT NOT NULL DEFAULT '',
  body       TEXT,
  PRIMARY KEY (session_id, seq)
) WITHOUT ROWID;
CREATE UNIQUE INDEX events_by_id ON events (id);

-- Which events refer to which blobs: garbage collection and verify read this.
CREATE TABLE blob_refs (
  sha256     TEXT NOT NULL,
  session_id TEXT NOT NULL,
  seq        INTEGER NOT NULL,
  PRIMARY KEY (sha256, session_id, seq)
) WITHOUT ROWID;
CREATE INDEX blob_refs_by_session ON blob_refs (session_id, seq);
)sql",
    // 1 -> 2: the agent harness. Fork origins and deleted parents kept for
    // their forks; an index over the few events that are not messages; usage
    // totals per session, provider and model (filled from the log); drafts.
    R"sql(
ALTER TABLE sessions ADD COLUMN parent_id TEXT;
ALTER TABLE sessions ADD COLUMN fork_seq INTEGER NOT NULL DEFAULT 0;
-- 1: deleted by the user but kept, hidden, because forks still read its events.
ALTER TABLE sessions ADD COLUMN deleted INTEGER NOT NULL DEFAULT 0;
CREATE INDEX sessions_by_parent ON sessions (parent_id) WHERE parent_id IS NOT NULL;

CREATE INDEX events_not_messages ON events (session_id, seq) WHERE type <> 'message';

CREATE TABLE usage_totals (
  session_id       TEXT NOT NULL,
  provider         TEXT NOT NULL,
  model            TEXT NOT NULL,
  turns            INTEGER NOT NULL,
  input_tokens     INTEGER NOT NULL,
  output_tokens    INTEGER NOT NULL,
  cached_tokens    INTEGER NOT NULL,
  reasoning_tokens INTEGER NOT NULL,
  PRIMARY KEY (session_id, provider, model)
) WITHOUT ROWID;
INSERT INTO usage_totals
SELECT session_id, coalesce(json_extract(body, '$.provider'), ''),
       coalesce(json_extract(body, '$.model'), ''), count(*),
       sum(coalesce(json_extract(body, '$.usage.input_tokens'), 0)),
       sum(coalesce(json_extract(body, '$.usage.output_tokens'), 0)),
       sum(coalesce(json_extract(body, '$.usage.cached_tokens'), 0)),
       sum(coalesce(json_extract(body, '$.usage.reasoning_tokens'), 0))
FROM events
WHERE type = 'message' AND body IS NOT NULL AND json_type(body, '$.usage') = 'object'
GROUP BY 1, 2, 3;

CREATE TABLE drafts (
  id         TEXT PRIMARY KEY,
  session_id TEXT NOT NULL,
  role       TEXT NOT NULL,
  text       TEXT NOT NULL DEFAULT '',
  reasoning  TEXT NOT NULL DEFAULT '',
  model      TEXT NOT NULL DEFAULT '',
  created_ms INTEGER NOT NULL,
  updated_ms INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX drafts_by_session ON drafts (session_id, created_ms);
)sql",
    // 2 -> 3: search and the agents' code memory (docs/search.md). One
    // full-text index over events and code writes, kept in step by triggers in
    // the writer's own transaction; its text is read back through a view, so
    // it is not stored twice. Embeddings are filled later, outside appends.
    R"sql(
CREATE TABLE code_writes (
  id             INTEGER PRIMARY KEY,
  file_path      TEXT NOT NULL,
  old_code       TEXT NOT NULL DEFAULT '',
  new_code       TEXT NOT NULL,
  language       TEXT NOT NULL DEFAULT '',
  session_id     TEXT NOT NULL DEFAULT '',
  project        TEXT NOT NULL DEFAULT '',
  tool           TEXT NOT NULL DEFAULT '',
  whole_file     INTEGER NOT NULL DEFAULT 1,  -- 0: new_code is a fragment (an edit)
  created_ms     INTEGER NOT NULL,
  content_sha256 TEXT NOT NULL UNIQUE   -- of path, old and new code: a write is kept once
);
CREATE INDEX code_writes_by_file ON code_writes (file_path, created_ms);

-- Churn: one row per function a write touched ('' for the file itself).
CREATE TABLE code_edits (
  file_path  TEXT NOT NULL,
  function   TEXT NOT NULL,
  created_ms INTEGER NOT NULL,
  code_id    INTEGER NOT NULL
);
CREATE INDEX code_edits_by_file ON code_edits (file_path, function, created_ms);
CREATE INDEX code_edits_by_time ON code_edits (created_ms);

-- Agent hooks: which writes were already answered with context (deny once).
CREATE TABLE hook_seen (
  key        TEXT PRIMARY KEY,
  created_ms INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX hook_seen_by_time ON hook_seen (created_ms);

-- One row per searchable document: an event (code_id NULL) or a code write.
-- Ids are never reused, so "documents after N" means "written after N".
CREATE TABLE search_docs (
  doc_id     INTEGER PRIMARY KEY AUTOINCREMENT,
  session_id TEXT NOT NULL,
  seq        INTEGER NOT NULL,     -- 0 for a code write
  code_id    INTEGER
);
CREATE UNIQUE INDEX search_docs_by_event ON search_docs (session_id, seq) WHERE code_id IS NULL;
CREATE UNIQUE INDEX search_docs_by_code ON search_docs (code_id) WHERE code_id IS NOT NULL;

CREATE VIEW search_content (doc_id, content, code) AS
SELECT d.doc_id,
       CASE WHEN d.code_id IS NULL THEN )sql" SEARCH_TEXT("e") R"sql( ELSE '' END,
       CASE WHEN d.code_id IS NULL THEN '' ELSE )sql" CODE_TEXT("c") R"sql( END
FROM search_docs d
LEFT JOIN events e ON d.code_id IS NULL AND e.session_id = d.session_id AND e.seq = d.seq
LEFT JOIN code_writes c ON c.id = d.code_id;

-- Two columns, so a query can be held to the code memory ("code : (...)")
-- without walking every message that matches. '_' is part of a word, so
-- snake_case identifiers are one term.
CREATE VIRTUAL TABLE search_fts USING fts5(
  content, code, content = 'search_content', content_rowid = 'doc_id',
  tokenize = "unicode61 remove_diacritics 2 tokenchars '_'");

-- Vectors of the documents, per embedding model; filled outside appends.
CREATE TABLE embeddings (
  doc_id INTEGER PRIMARY KEY,
  model  TEXT NOT NULL,
  vector BLOB NOT NULL              -- empty: nothing to embed (empty text)
);
CREATE INDEX embeddings_by_model ON embeddings (model, doc_id);

CREATE TRIGGER search_event_added AFTER INSERT ON events BEGIN
  INSERT INTO search_docs (session_id, seq) VALUES (NEW.session_id, NEW.seq);
  INSERT INTO search_fts (rowid, content, code)
    VALUES (last_insert_rowid(), )sql" SEARCH_TEXT("NEW") R"sql(, '');
END;
CREATE TRIGGER search_event_removed AFTER DELETE ON events BEGIN
  INSERT INTO search_fts (search_fts, rowid, content, code)
    SELECT 'delete', doc_id, )sql" SEARCH_TEXT("OLD") R"sql(, '' FROM search_docs
    WHERE session_id = OLD.session_id AND seq = OLD.seq AND code_id IS NULL;
  DELETE FROM search_docs WHERE session_id = OLD.session_id AND seq = OLD.seq AND code_id IS NULL;
END;
CREATE TRIGGER search_event_changed AFTER UPDATE OF text, body ON events BEGIN
  INSERT INTO search_fts (search_fts, rowid, content, code)
    SELECT 'delete', doc_id, )sql" SEARCH_TEXT("OLD") R"sql(, '' FROM search_docs
    WHERE session_id = OLD.session_id AND seq = OLD.seq AND code_id IS NULL;
  INSERT INTO search_fts (rowid, content, code)
    SELECT doc_id, )sql" SEARCH_TEXT("NEW") R"sql(, '' FROM search_docs
    WHERE session_id = NEW.session_id AND seq = NEW.seq AND code_id IS NULL;
  DELETE FROM embeddings WHERE doc_id IN (SELECT doc_id FROM search_docs
    WHERE session_id = NEW.session_id AND seq = NEW.seq AND code_id IS NULL);
END;
CREATE TRIGGER search_code_added AFTER INSERT ON code_writes BEGIN
  INSERT INTO search_docs (session_id, seq, code_id) VALUES (NEW.session_id, 0, NEW.id);
  INSERT INTO search_fts (rowid, content, code)
    VALUES (last_insert_rowid(), '', )sql" CODE_TEXT("NEW") R"sql();
END;
CREATE TRIGGER search_code_removed AFTER DELETE ON code_writes BEGIN
  INSERT INTO search_fts (search_fts, rowid, content, code)
    SELECT 'delete', doc_id, '', )sql" CODE_TEXT(
        "OLD") R"sql( FROM search_docs WHERE code_id = OLD.id;
  DELETE FROM search_docs WHERE code_id = OLD.id;
  DELETE FROM code_edits WHERE code_id = OLD.id;
END;
CREATE TRIGGER search_doc_removed AFTER DELETE ON search_docs BEGIN
  DELETE FROM embeddings WHERE doc_id = OLD.doc_id;
END;

-- What was already in the log.
INSERT INTO search_docs (session_id, seq) SELECT session_id, seq FROM events;
INSERT INTO search_fts (search_fts) VALUES ('rebuild');
)sql",
    // 3 -> 4: a writer that inserts many events at once (a restore, an
    // import) can index them itself, in one statement after the inserts,
    // while sessiondb_event_index_deferred() says so on its connection. Per
    // row, the trigger costs an FTS5 flush to disk at every statement
    // savepoint: a segment per event, then merges.
    R"sql(
DROP TRIGGER search_event_added;
CREATE TRIGGER search_event_added AFTER INSERT ON events
WHEN sessiondb_event_index_deferred() = 0 BEGIN
  INSERT INTO search_docs (session_id, seq) VALUES (NEW.session_id, NEW.seq);
  INSERT INTO search_fts (rowid, content, code)
    VALUES (last_insert_rowid(), )sql" SEARCH_TEXT("NEW") R"sql(, '');
END;
)sql",
    // 4 -> 5: the full-text index follows the log. A write only records its
    // document (a row of search_docs, an append to a B-tree); the FTS5 index
    // reads the documents past its watermark later, many at once
    // (sqlite_index_catch_up.cc), in a transaction of its own that moves the
    // watermark with the index. Per-row FTS5 inserts cost each write ~17 WAL
    // pages and capped batched appends at ~12k messages/s.
    //
    // search_content, the external content FTS5 reads (rebuild, snippets,
    // integrity-check), holds only the indexed documents, so the index and
    // its content always agree; search_pending_content is every document.
    // Removing or changing a document touches the index only when it was
    // indexed: FTS5's 'delete' of a row it never held would corrupt it.
    R"sql(
CREATE TABLE search_progress (
  id           INTEGER PRIMARY KEY CHECK (id = 1),
  fts_through  INTEGER NOT NULL     -- every doc_id <= this is in search_fts
);
INSERT INTO search_progress (id, fts_through) SELECT 1, coalesce(max(doc_id), 0) FROM search_docs;

DROP VIEW search_content;
CREATE VIEW search_pending_content (doc_id, content, code) AS
SELECT d.doc_id,
       CASE WHEN d.code_id IS NULL THEN )sql" SEARCH_TEXT("e") R"sql( ELSE '' END,
       CASE WHEN d.code_id IS NULL THEN '' ELSE )sql" CODE_TEXT("c") R"sql( END
FROM search_docs d
LEFT JOIN events e ON d.code_id IS NULL AND e.session_id = d.session_id AND e.seq = d.seq
LEFT JOIN code_writes c ON c.id = d.code_id;
CREATE VIEW search_content (doc_id, content, code) AS
SELECT doc_id, content, code FROM search_pending_content
WHERE doc_id <= (SELECT fts_through FROM search_progress);

DROP TRIGGER search_event_added;
CREATE TRIGGER search_event_added AFTER INSERT ON events
WHEN sessiondb_event_index_deferred() = 0 BEGIN
  INSERT INTO search_docs (session_id, seq) VALUES (NEW.session_id, NEW.seq);
END;
DROP TRIGGER search_event_removed;
CREATE TRIGGER search_event_removed AFTER DELETE ON events BEGIN
  INSERT INTO search_fts (search_fts, rowid, content, code)
    SELECT 'delete', doc_id, )sql" SEARCH_TEXT("OLD") R"sql(, '' FROM search_docs
    WHERE session_id = OLD.session_id AND seq = OLD.seq AND code_id IS NULL
      AND doc_id <= (SELECT fts_through FROM search_progress);
  DELETE FROM search_docs WHERE session_id = OLD.session_id AND seq = OLD.seq AND code_id IS NULL;
END;
DROP TRIGGER search_event_changed;
CREATE TRIGGER search_event_changed AFTER UPDATE OF text, body ON events BEGIN
  INSERT INTO search_fts (search_fts, rowid, content, code)
    SELECT 'delete', doc_id, )sql" SEARCH_TEXT("OLD") R"sql(, '' FROM search_docs
    WHERE session_id = OLD.session_id AND seq = OLD.seq AND code_id IS NULL
      AND doc_id <= (SELECT fts_through FROM search_progress);
  INSERT INTO search_fts (rowid, content, code)
    SELECT doc_id, )sql" SEARCH_TEXT("NEW") R"sql(, '' FROM search_docs
    WHERE session_id = NEW.session_id AND seq = NEW.seq AND code_id IS NULL
      AND doc_id <= (SELECT fts_through FROM search_progress);
  DELETE FROM embeddings WHERE doc_id IN (SELECT doc_id FROM search_docs
    WHERE session_id = NEW.session_id AND seq = NEW.seq AND code_id IS NULL);
END;
DROP TRIGGER search_code_added;
CREATE TRIGGER search_code_added AFTER INSERT ON code_writes BEGIN
  INSERT INTO search_docs (session_id, seq, code_id) VALUES (NEW.session_id, 0, NEW.id);
END;
DROP TRIGGER search_code_removed;
CREATE TRIGGER search_code_removed AFTER DELETE ON code_writes BEGIN
  INSERT INTO search_fts (search_fts, rowid, content, code)
    SELECT 'delete', doc_id, '', )sql" CODE_TEXT(
        "OLD") R"sql( FROM search_docs WHERE code_id = OLD.id
      AND doc_id <= (SELECT fts_through FROM search_progress);
  DELETE FROM search_docs WHERE code_id = OLD.id;
  DELETE FROM code_edits WHERE code_id = OLD.id;
END;
)sql",
    // 5 -> 6: every writer of events records their documents itself, one
    // INSERT ... SELECT per batch (SqliteStore::RecordDocumentsLocked). An
    // AFTER INSERT trigger on events, even one whose WHEN is false, makes
    // each row's INSERT a statement that may write twice, so SQLite keeps a
    // statement journal of every page it touches: measured (bench/
    // sessiondb_bench, batch_import's layout floors), 26k rows/s with the
    // trigger against 62-78k without it, same rows, same disk.
    R"sql(
DROP TRIGGER search_event_added;
)sql",
    // 6 -> 7: forgetting on purpose (docs/retention.md). The trash is the
    // deleted flag with the time the session went there (NULL: not in the
    // trash; a deleted session kept for its forks has none); the ledger of
    // forgetting records each trash, restore, delete, policy run and erasure,
    // without content, and no erasure removes its rows.
    R"sql(
ALTER TABLE sessions ADD COLUMN trashed_ms INTEGER;
CREATE INDEX sessions_in_trash ON sessions (trashed_ms) WHERE trashed_ms IS NOT NULL;

CREATE TABLE forget_ledger (
  id             INTEGER PRIMARY KEY AUTOINCREMENT,
  ts_ms          INTEGER NOT NULL,
  actor          TEXT NOT NULL,
  action         TEXT NOT NULL,
  scope          TEXT NOT NULL,
  counts         TEXT NOT NULL DEFAULT '',  -- "kind=n,kind=n" (LedgerEntry::counts)
  receipt_id     TEXT NOT NULL DEFAULT '',
  receipt_digest TEXT NOT NULL DEFAULT ''
);
)sql",
    // 7 -> 8: search that forgives (docs/search.md). English stemming: the
    // full-text index is made again with FTS5's porter tokenizer over the
    // same unicode61 one, so "fails" finds "fail", "failed", "failing"; and
    // its vocabulary (fts5vocab, every term with the documents holding it)
    // is readable for typo correction. The index is rebuilt from the log
    // here, as far as the watermark: what it held before, it holds again;
    // what was pending stays pending.
    R"sql(
DROP TABLE search_fts;
CREATE VIRTUAL TABLE search_fts USING fts5(
  content, code, content = 'search_content', content_rowid = 'doc_id',
  tokenize = "porter unicode61 remove_diacritics 2 tokenchars '_'");
INSERT INTO search_fts (search_fts) VALUES ('rebuild');
CREATE VIRTUAL TABLE search_vocab USING fts5vocab(search_fts, 'row');
)sql",
    // 8 -> 9: usage and cost (docs/usage.md). Cache writes counted apart
    // (stored bodies never had them: 0); usage per session, UTC day,
    // provider and model, which prices each turn by its day, filled from the
    // log: a session's own turns, not those a fork inherited (seq <= fork_seq).
    R"sql(
ALTER TABLE usage_totals ADD COLUMN cache_write_tokens INTEGER NOT NULL DEFAULT 0;
CREATE TABLE usage_days (
  session_id         TEXT NOT NULL,
  day                TEXT NOT NULL,  -- YYYY-MM-DD, UTC
  provider           TEXT NOT NULL,
  model              TEXT NOT NULL,
  turns              INTEGER NOT NULL,
  input_tokens       INTEGER NOT NULL,
  output_tokens      INTEGER NOT NULL,
  cached_tokens      INTEGER NOT NULL,
  reasoning_tokens   INTEGER NOT NULL,
  cache_write_tokens INTEGER NOT NULL,
  PRIMARY KEY (session_id, day, provider, model)
) WITHOUT ROWID;
CREATE INDEX usage_days_by_day ON usage_days (day);
INSERT INTO usage_days
SELECT e.session_id, strftime('%Y-%m-%d', e.ts_ms / 1000, 'unixepoch'),
       coalesce(json_extract(e.body, '$.provider'), ''),
       coalesce(json_extract(e.body, '$.model'), ''), count(*),
       sum(coalesce(json_extract(e.body, '$.usage.input_tokens'), 0)),
       sum(coalesce(json_extract(e.body, '$.usage.output_tokens'), 0)),
       sum(coalesce(json_extract(e.body, '$.usage.cached_tokens'), 0)),
       sum(coalesce(json_extract(e.body, '$.usage.reasoning_tokens'), 0)),
       sum(coalesce(json_extract(e.body, '$.usage.cache_write_tokens'), 0))
FROM events e JOIN sessions s ON s.id = e.session_id
WHERE e.type = 'message' AND e.body IS NOT NULL AND json_type(e.body, '$.usage') = 'object'
  AND e.seq > s.fork_seq
GROUP BY 1, 2, 3, 4;
)sql",
    // 9 -> 10: file versions, the code checkpoints (docs/memory.md): a file's
    // content as a tool call found it and as it left it, kept as a blob named
    // by a blob reference of session kFileVersionRefSession (seq = id).
    R"sql(
CREATE TABLE file_versions (
  id            INTEGER PRIMARY KEY,
  agent_session TEXT NOT NULL,
  tool_use_id   TEXT NOT NULL DEFAULT '',
  file_path     TEXT NOT NULL,
  phase         TEXT NOT NULL,          -- 'before' or 'after'
  sha256        TEXT,                   -- NULL: no file at the path
  size          INTEGER NOT NULL DEFAULT 0,
  tool          TEXT NOT NULL DEFAULT '',
  source        TEXT NOT NULL DEFAULT '',
  project       TEXT NOT NULL DEFAULT '',
  created_ms    INTEGER NOT NULL
);
CREATE INDEX file_versions_by_file ON file_versions (file_path, id);
CREATE INDEX file_versions_by_session ON file_versions (agent_session, id);
CREATE UNIQUE INDEX file_versions_once ON file_versions
  (agent_session, tool_use_id, file_path, phase) WHERE tool_use_id <> '';
)sql",
};

#undef SEARCH_TEXT
#undef CODE_TEXT

Status NewerVersionError(const std::string& path, int64_t version) {
  return Status::FailedPrecondition(
      "the store at " + path + " was written by a newer sessiondb (schema version " +
      std::to_string(version) + "); this build reads up to version " +
      std::to_string(kSchemaVersion) + ". Upgrade sessiondb to open it.");
}

}  // namespace

Status MigrateSchema(Database* db, const std::string& path) {
  ASSIGN_OR_RETURN(std::optional<int64_t> version, db->QueryInt("PRAGMA user_version"));
  int64_t current = version.value_or(0);
  if (current > kSchemaVersion) return NewerVersionError(path, current);
  if (current == kSchemaVersion) return Status::Ok();

  ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(db));
  // Another process may have migrated while we waited for the write lock.
  ASSIGN_OR_RETURN(version, db->QueryInt("PRAGMA user_version"));
  current = version.value_or(0);
  if (current > kSchemaVersion) return NewerVersionError(path, current);
  for (int64_t v = current; v < kSchemaVersion; ++v) {
    Status s = db->Exec(kMigrations[static_cast<size_t>(v)]);
    if (!s.ok()) {
      return Status(s.code(), "migrating " + path + " from schema version " + std::to_string(v) +
                                  " to " + std::to_string(v + 1) + " failed: " + s.message());
    }
  }
  RETURN_IF_ERROR(db->Exec("PRAGMA user_version = " + std::to_string(kSchemaVersion)));
  return txn.Commit();
}

namespace {

// Puts the database in WAL mode unless it is already. kBusy when another
// connection's lock kept it from switching (SQLite then reports the mode it
// stayed in, or SQLITE_BUSY without calling the busy handler).
Status SwitchToWal(Database* db) {
  {
    ASSIGN_OR_RETURN(Statement mode, db->Prepare("PRAGMA journal_mode"));
    ASSIGN_OR_RETURN(bool row, mode.Step());
    if (row && mode.ColumnText(0) == "wal") return Status::Ok();
  }
  ASSIGN_OR_RETURN(Statement set, db->Prepare("PRAGMA journal_mode = WAL"));
  ASSIGN_OR_RETURN(bool row, set.Step());
  if (row && set.ColumnText(0) == "wal") return Status::Ok();
  return Status::Busy("PRAGMA journal_mode = WAL: the database stayed in '" +
                      std::string(row ? set.ColumnText(0) : "?") +
                      "' mode while another connection held it");
}

}  // namespace

Status PrepareForWriting(Database* db, const std::string& path, int busy_timeout_ms) {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point deadline = Clock::now() + std::chrono::milliseconds(busy_timeout_ms);
  std::minstd_rand jitter(static_cast<unsigned>(getpid()) ^
                          static_cast<unsigned>(Clock::now().time_since_epoch().count()));
  std::chrono::microseconds backoff(1000);
  while (true) {
    Status s = SwitchToWal(db);
    if (s.ok()) s = MigrateSchema(db, path);
    if (s.ok() || s.code() != StatusCode::kBusy || Clock::now() >= deadline) return s;
    // Processes that collided once should not collide again in step.
    const auto pause = backoff + std::chrono::microseconds(jitter() % backoff.count());
    std::this_thread::sleep_for(std::min<Clock::duration>(pause, deadline - Clock::now()));
    backoff = std::min(backoff * 2, std::chrono::microseconds(50'000));
  }
}

}  // namespace sessiondb::sqlite
