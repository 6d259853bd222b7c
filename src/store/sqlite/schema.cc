#include "store/sqlite/schema.h"

#include <array>

#include "sessiondb/store.h"

namespace sessiondb::sqlite {
namespace {

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
};

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

}  // namespace sessiondb::sqlite
