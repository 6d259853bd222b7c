#include "store/postgres/pg_schema.h"

#include <array>

namespace sessiondb::postgres {
namespace {

// Any fixed number: every sessiondb process takes this lock to migrate.
constexpr const char* kMigrationLock = "SELECT pg_advisory_xact_lock(7321500462100119201)";

// kMigrations[i] takes the schema from version i to version i + 1. Never edit
// a migration that has shipped; append a new one. Every table is keyed by
// namespace first: a store holds many namespaces that never see each other.
constexpr std::array<const char*, kPgSchemaVersion> kMigrations = {
    R"sql(
CREATE TABLE sessions (
  namespace     text NOT NULL,
  id            text NOT NULL,
  title         text NOT NULL,
  title_fixed   boolean NOT NULL DEFAULT false,
  preview       text NOT NULL DEFAULT '',
  created_ms    bigint NOT NULL,
  updated_ms    bigint NOT NULL,
  message_count bigint NOT NULL DEFAULT 0,
  last_seq      bigint NOT NULL DEFAULT 0,
  archived      boolean NOT NULL DEFAULT false,
  metadata      text NOT NULL DEFAULT '{}',
  PRIMARY KEY (namespace, id)
);
CREATE INDEX sessions_by_update ON sessions (namespace, updated_ms DESC, id DESC);

CREATE TABLE events (
  namespace  text NOT NULL,
  session_id text NOT NULL,
  seq        bigint NOT NULL,
  id         text NOT NULL,
  ts_ms      bigint NOT NULL,
  type       text NOT NULL,
  role       text,
  text       text NOT NULL DEFAULT '',
  body       text,
  PRIMARY KEY (namespace, session_id, seq)
);
CREATE UNIQUE INDEX events_by_id ON events (namespace, id);

-- Blobs are shared by every namespace: the same bytes are stored once.
CREATE TABLE blobs (
  sha256     text PRIMARY KEY,
  size       bigint NOT NULL,
  created_ms bigint NOT NULL,
  bytes      bytea NOT NULL
);
-- Images and archives are already compressed: store them as they are.
ALTER TABLE blobs ALTER COLUMN bytes SET STORAGE EXTERNAL;

CREATE TABLE blob_refs (
  namespace  text NOT NULL,
  sha256     text NOT NULL,
  session_id text NOT NULL,
  seq        bigint NOT NULL,
  PRIMARY KEY (namespace, sha256, session_id, seq)
);
CREATE INDEX blob_refs_by_session ON blob_refs (namespace, session_id, seq);
CREATE INDEX blob_refs_by_sha ON blob_refs (sha256);

CREATE TABLE active_sessions (
  namespace  text PRIMARY KEY,
  session_id text NOT NULL
);
)sql",
    // 1 -> 2: the agent harness. Fork origins and deleted parents kept for
    // their forks; an index over the few events that are not messages; usage
    // totals per session, provider and model (filled from the log); drafts.
    R"sql(
ALTER TABLE sessions ADD COLUMN parent_id text;
ALTER TABLE sessions ADD COLUMN fork_seq bigint NOT NULL DEFAULT 0;
-- true: deleted by the user but kept, hidden, because forks still read its events.
ALTER TABLE sessions ADD COLUMN deleted boolean NOT NULL DEFAULT false;
CREATE INDEX sessions_by_parent ON sessions (namespace, parent_id) WHERE parent_id IS NOT NULL;

CREATE INDEX events_not_messages ON events (namespace, session_id, seq) WHERE type <> 'message';

CREATE TABLE usage_totals (
  namespace        text NOT NULL,
  session_id       text NOT NULL,
  provider         text NOT NULL,
  model            text NOT NULL,
  turns            bigint NOT NULL,
  input_tokens     bigint NOT NULL,
  output_tokens    bigint NOT NULL,
  cached_tokens    bigint NOT NULL,
  reasoning_tokens bigint NOT NULL,
  PRIMARY KEY (namespace, session_id, provider, model)
);
-- The CASE keeps the cast away from rows that are not message bodies,
-- whatever order the planner evaluates the conditions in.
INSERT INTO usage_totals
SELECT namespace, session_id, coalesce(b ->> 'provider', ''), coalesce(b ->> 'model', ''),
       count(*),
       sum(coalesce((b -> 'usage' ->> 'input_tokens')::bigint, 0)),
       sum(coalesce((b -> 'usage' ->> 'output_tokens')::bigint, 0)),
       sum(coalesce((b -> 'usage' ->> 'cached_tokens')::bigint, 0)),
       sum(coalesce((b -> 'usage' ->> 'reasoning_tokens')::bigint, 0))
FROM (SELECT namespace, session_id,
             CASE WHEN type = 'message' AND body IS NOT NULL THEN body::jsonb END AS b
      FROM events) AS m
WHERE jsonb_typeof(b -> 'usage') = 'object'
GROUP BY 1, 2, 3, 4;

CREATE TABLE drafts (
  namespace  text NOT NULL,
  id         text NOT NULL,
  session_id text NOT NULL,
  role       text NOT NULL,
  text       text NOT NULL DEFAULT '',
  reasoning  text NOT NULL DEFAULT '',
  model      text NOT NULL DEFAULT '',
  created_ms bigint NOT NULL,
  updated_ms bigint NOT NULL,
  PRIMARY KEY (namespace, id)
);
CREATE INDEX drafts_by_session ON drafts (namespace, session_id, created_ms);
)sql",
};

}  // namespace

Status MigratePgSchema(PgConnection* conn, bool create, const std::string& where) {
  ASSIGN_OR_RETURN(PgTransaction txn, PgTransaction::Begin(conn));
  RETURN_IF_ERROR(conn->Run(kMigrationLock));
  ASSIGN_OR_RETURN(PgResult exists, conn->Exec("SELECT to_regclass('sessiondb_meta') IS NOT NULL"));
  int64_t current = 0;
  if (exists.Bool(0, 0)) {
    ASSIGN_OR_RETURN(PgResult v, conn->Exec("SELECT value FROM sessiondb_meta "
                                            "WHERE key = 'schema_version'"));
    if (v.rows() == 1) current = std::stoll(std::string(v.Text(0, 0)));
  } else if (!create) {
    return Status::NotFound("no sessiondb store in " + where +
                            "; run `sessiondb init` with this --store to create one");
  }
  if (current > kPgSchemaVersion) {
    return Status::FailedPrecondition(
        "the store at " + where + " was written by a newer sessiondb (schema version " +
        std::to_string(current) + "); this build reads up to version " +
        std::to_string(kPgSchemaVersion) + ". Upgrade sessiondb to open it.");
  }
  if (current == kPgSchemaVersion) return txn.Commit();

  RETURN_IF_ERROR(
      conn->Run("CREATE TABLE IF NOT EXISTS sessiondb_meta ("
                "key text PRIMARY KEY, value text NOT NULL)"));
  for (int64_t v = current; v < kPgSchemaVersion; ++v) {
    Status s = conn->RunScript(kMigrations[static_cast<size_t>(v)]);
    if (!s.ok()) {
      return Status(s.code(), "migrating " + where + " from schema version " + std::to_string(v) +
                                  " to " + std::to_string(v + 1) + " failed: " + s.message());
    }
  }
  PgParams p;
  p.Add(static_cast<int64_t>(kPgSchemaVersion));
  RETURN_IF_ERROR(
      conn->Run("INSERT INTO sessiondb_meta (key, value) VALUES "
                "('schema_version', $1) ON CONFLICT (key) DO UPDATE "
                "SET value = excluded.value",
                p));
  return txn.Commit();
}

}  // namespace sessiondb::postgres
