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
    // 2 -> 3: search and the agents' code memory (docs/postgres.md). One
    // document per event and per code write in search_docs, with its tsvector
    // ('simple' configuration: words as they are, no stemming, as FTS5's
    // unicode61 does). The store computes the searchable text in C++
    // (core/search_text, pg_search_docs.cc) because it parses message bodies
    // that jsonb refuses (\u0000); triggers only keep documents in step with
    // deletes and updates. Documents of events already in the log are added
    // here with a NULL tsv; opening the store indexes them.
    R"sql(
CREATE TABLE code_writes (
  namespace      text NOT NULL,
  id             bigint GENERATED ALWAYS AS IDENTITY,
  file_path      text NOT NULL,
  old_code       text NOT NULL DEFAULT '',
  new_code       text NOT NULL,
  language       text NOT NULL DEFAULT '',
  session_id     text NOT NULL DEFAULT '',
  project        text NOT NULL DEFAULT '',
  tool           text NOT NULL DEFAULT '',
  whole_file     boolean NOT NULL DEFAULT true,  -- false: new_code is a fragment (an edit)
  created_ms     bigint NOT NULL,
  content_sha256 text NOT NULL,  -- of path, old and new code: a write is kept once
  PRIMARY KEY (namespace, id),
  UNIQUE (namespace, content_sha256)
);
CREATE INDEX code_writes_by_file ON code_writes (namespace, file_path, created_ms);

-- Churn: one row per function a write touched ('' for the file itself).
CREATE TABLE code_edits (
  namespace  text NOT NULL,
  file_path  text NOT NULL,
  function   text NOT NULL,
  created_ms bigint NOT NULL,
  code_id    bigint NOT NULL
);
CREATE INDEX code_edits_by_file ON code_edits (namespace, file_path, function, created_ms);
CREATE INDEX code_edits_by_time ON code_edits (namespace, created_ms);
CREATE INDEX code_edits_by_code ON code_edits (namespace, code_id);

-- Agent hooks: which writes were already answered with context (deny once).
CREATE TABLE hook_seen (
  namespace  text NOT NULL,
  key        text NOT NULL,
  created_ms bigint NOT NULL,
  PRIMARY KEY (namespace, key)
);
CREATE INDEX hook_seen_by_time ON hook_seen (namespace, created_ms);

-- Watermarks and settings of the index and the memory.
CREATE TABLE index_meta (
  namespace text NOT NULL,
  key       text NOT NULL,
  value     text NOT NULL,
  PRIMARY KEY (namespace, key)
);

-- One row per searchable document: an event (code_id NULL) or a code write.
-- Ids are never reused, so "documents after N" means "written after N".
CREATE TABLE search_docs (
  namespace  text NOT NULL,
  doc_id     bigint GENERATED ALWAYS AS IDENTITY,
  session_id text NOT NULL,
  seq        bigint NOT NULL,  -- 0 for a code write
  code_id    bigint,
  tsv        tsvector,         -- NULL: not indexed yet
  PRIMARY KEY (namespace, doc_id)
);
CREATE UNIQUE INDEX search_docs_by_event ON search_docs (namespace, session_id, seq)
  WHERE code_id IS NULL;
CREATE UNIQUE INDEX search_docs_by_code ON search_docs (namespace, code_id)
  WHERE code_id IS NOT NULL;
-- GIN cannot lead with the namespace (without btree_gin): matches are held
-- to the namespace after the index finds them.
CREATE INDEX search_docs_tsv ON search_docs USING gin (tsv);
CREATE INDEX search_docs_unindexed ON search_docs (namespace, doc_id) WHERE tsv IS NULL;

-- Vectors of the documents, per embedding model; filled outside appends.
CREATE TABLE embeddings (
  namespace text NOT NULL,
  model     text NOT NULL,
  doc_id    bigint NOT NULL,
  vector    bytea NOT NULL,  -- empty: nothing to embed (empty text)
  PRIMARY KEY (namespace, model, doc_id)
);
CREATE INDEX embeddings_by_doc ON embeddings (namespace, doc_id);
-- Vectors are int8 and dense: compressing them gains nothing.
ALTER TABLE embeddings ALTER COLUMN vector SET STORAGE EXTERNAL;

-- Statement triggers with transition tables: a session of 100 000 events is
-- deleted with one join, not 100 000 lookups.
CREATE FUNCTION sessiondb_events_removed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM search_docs d USING removed_events g
  WHERE d.namespace = g.namespace AND d.session_id = g.session_id AND d.seq = g.seq
    AND d.code_id IS NULL;
  RETURN NULL;
END $$;
CREATE TRIGGER search_events_removed AFTER DELETE ON events
  REFERENCING OLD TABLE AS removed_events FOR EACH STATEMENT
  EXECUTE FUNCTION sessiondb_events_removed();

-- A changed text or body (prune) leaves the document to be indexed again by
-- the writer, in its transaction, and drops its vectors.
CREATE FUNCTION sessiondb_events_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  WITH changed AS (
    SELECT n.namespace, n.session_id, n.seq FROM new_events n
    JOIN old_events o ON o.namespace = n.namespace AND o.session_id = n.session_id
      AND o.seq = n.seq
    WHERE o.text IS DISTINCT FROM n.text OR o.body IS DISTINCT FROM n.body),
  docs AS (
    UPDATE search_docs d SET tsv = NULL FROM changed c
    WHERE d.namespace = c.namespace AND d.session_id = c.session_id AND d.seq = c.seq
      AND d.code_id IS NULL
    RETURNING d.namespace, d.doc_id)
  DELETE FROM embeddings m USING docs WHERE m.namespace = docs.namespace
    AND m.doc_id = docs.doc_id;
  RETURN NULL;
END $$;
CREATE TRIGGER search_events_changed AFTER UPDATE ON events
  REFERENCING OLD TABLE AS old_events NEW TABLE AS new_events FOR EACH STATEMENT
  EXECUTE FUNCTION sessiondb_events_changed();

CREATE FUNCTION sessiondb_code_writes_removed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM search_docs d USING removed_writes g
  WHERE d.namespace = g.namespace AND d.code_id = g.id;
  DELETE FROM code_edits e USING removed_writes g
  WHERE e.namespace = g.namespace AND e.code_id = g.id;
  RETURN NULL;
END $$;
CREATE TRIGGER search_code_writes_removed AFTER DELETE ON code_writes
  REFERENCING OLD TABLE AS removed_writes FOR EACH STATEMENT
  EXECUTE FUNCTION sessiondb_code_writes_removed();

CREATE FUNCTION sessiondb_search_docs_removed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM embeddings m USING removed_docs g
  WHERE m.namespace = g.namespace AND m.doc_id = g.doc_id;
  RETURN NULL;
END $$;
CREATE TRIGGER search_docs_removed AFTER DELETE ON search_docs
  REFERENCING OLD TABLE AS removed_docs FOR EACH STATEMENT
  EXECUTE FUNCTION sessiondb_search_docs_removed();

-- What was already in the log, oldest first so "newer" keeps its meaning.
INSERT INTO search_docs (namespace, session_id, seq)
SELECT namespace, session_id, seq FROM events ORDER BY ts_ms, namespace, session_id, seq;
)sql",
    // 3 -> 4: forgetting on purpose (docs/retention.md). The trash is the
    // deleted flag with the time the session went there (NULL: not in the
    // trash); the ledger of forgetting, per namespace, records each trash,
    // restore, delete, policy run and erasure, without content.
    R"sql(
ALTER TABLE sessions ADD COLUMN trashed_ms bigint;
CREATE INDEX sessions_in_trash ON sessions (namespace, trashed_ms) WHERE trashed_ms IS NOT NULL;

CREATE TABLE forget_ledger (
  namespace      text NOT NULL,
  id             bigint GENERATED ALWAYS AS IDENTITY,
  ts_ms          bigint NOT NULL,
  actor          text NOT NULL,
  action         text NOT NULL,
  scope          text NOT NULL,
  counts         text NOT NULL DEFAULT '',  -- "kind=n,kind=n" (LedgerEntry::counts)
  receipt_id     text NOT NULL DEFAULT '',
  receipt_digest text NOT NULL DEFAULT '',
  PRIMARY KEY (namespace, id)
);
)sql",
    // 4 -> 5: encrypted namespaces (docs/encryption.md). Their blobs and
    // references are named by a keyed digest (PgSealer::BlobName); `digest`
    // keeps the SHA-256 sealed under that name, so gc, verify and erasure can
    // still answer in digests. NULL in plaintext rows, whose name is the digest.
    R"sql(
ALTER TABLE blobs ADD COLUMN digest text;
ALTER TABLE blob_refs ADD COLUMN digest text;
)sql",
    // 5 -> 6: blobs in object storage (docs/postgres.md). A blob kept in a
    // bucket has `bytes` empty and `location` = its object's key; an upload
    // not yet named by a row, and the object of a deleted row (token ''),
    // are recorded in blob_uploads so gc deletes an object only when no
    // transaction can still name it (pg_object_blobs.h).
    R"sql(
ALTER TABLE blobs ADD COLUMN location text;
CREATE INDEX blobs_by_location ON blobs (location) WHERE location IS NOT NULL;
CREATE TABLE blob_uploads (
  key      text NOT NULL,
  token    text NOT NULL,
  since_ms bigint NOT NULL,
  PRIMARY KEY (key, token)
);
)sql",
    // 6 -> 7: usage and cost (docs/usage.md). Cache writes counted apart
    // (stored bodies never had them: 0); usage per session, UTC day,
    // provider and model, which prices each turn by its day, filled from the
    // log: a session's own turns, not those a fork inherited (seq <=
    // fork_seq). A sealed body (an encrypted namespace's) is not read here:
    // its turns count from the next append on (docs/usage.md).
    R"sql(
ALTER TABLE usage_totals ADD COLUMN cache_write_tokens bigint NOT NULL DEFAULT 0;
CREATE TABLE usage_days (
  namespace          text NOT NULL,
  session_id         text NOT NULL,
  day                text NOT NULL,
  provider           text NOT NULL,
  model              text NOT NULL,
  turns              bigint NOT NULL,
  input_tokens       bigint NOT NULL,
  output_tokens      bigint NOT NULL,
  cached_tokens      bigint NOT NULL,
  reasoning_tokens   bigint NOT NULL,
  cache_write_tokens bigint NOT NULL,
  PRIMARY KEY (namespace, session_id, day, provider, model)
);
CREATE INDEX usage_days_by_day ON usage_days (namespace, day);
INSERT INTO usage_days
SELECT namespace, session_id, day, coalesce(b ->> 'provider', ''), coalesce(b ->> 'model', ''),
       count(*),
       sum(coalesce((b -> 'usage' ->> 'input_tokens')::bigint, 0)),
       sum(coalesce((b -> 'usage' ->> 'output_tokens')::bigint, 0)),
       sum(coalesce((b -> 'usage' ->> 'cached_tokens')::bigint, 0)),
       sum(coalesce((b -> 'usage' ->> 'reasoning_tokens')::bigint, 0)),
       sum(coalesce((b -> 'usage' ->> 'cache_write_tokens')::bigint, 0))
FROM (SELECT e.namespace, e.session_id,
             to_char(to_timestamp(e.ts_ms / 1000) AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day,
             CASE WHEN e.type = 'message' AND left(e.body, 1) = '{' THEN e.body::jsonb END AS b
      FROM events e JOIN sessions s ON s.namespace = e.namespace AND s.id = e.session_id
      WHERE e.seq > s.fork_seq) AS m
WHERE jsonb_typeof(b -> 'usage') = 'object'
GROUP BY 1, 2, 3, 4, 5;
)sql",
    // 7 -> 8: search that forgives (docs/postgres.md). English stemming
    // without stop words (Snowball's English stemmer, the 'simple' parser
    // and mappings otherwise): "fails" finds "fail", "failed", "failing", and
    // a question's "how" is still a word. Plaintext namespaces' documents are
    // left to be indexed again (tsv NULL: opening the store indexes them from
    // the log, pg_store.cc); an encrypted namespace's keyed tokens cannot be
    // stemmed and stay as they are. The vocabulary of each plaintext
    // namespace (its lexemes and how many documents hold each), for typo
    // correction, is kept by statement triggers on search_docs, in the
    // writers' transactions; an encrypted namespace gets no rows (only
    // removals reach them), so no word of it is stored in the clear. Each
    // word's count is spread over 64 shards, a connection taking the next
    // of a sequence the first time it writes (kept in a setting of its
    // session): two writers then seldom wait on one row ("the", "build"),
    // where one row per word made every writer of a namespace wait for the
    // one before it to commit.
    //
    // Objects of the same names left by a schema dropped by hand (tables
    // only) are replaced: none of them holds anything the log cannot give.
    R"sql(
DROP TEXT SEARCH CONFIGURATION IF EXISTS sessiondb_english;
DROP TEXT SEARCH DICTIONARY IF EXISTS sessiondb_english_stem;
DROP TABLE IF EXISTS search_vocab;
DROP SEQUENCE IF EXISTS sessiondb_vocab_shard;
CREATE SEQUENCE sessiondb_vocab_shard CYCLE MAXVALUE 63 MINVALUE 0 START 0;
CREATE TEXT SEARCH DICTIONARY sessiondb_english_stem (TEMPLATE = snowball, Language = english);
CREATE TEXT SEARCH CONFIGURATION sessiondb_english (COPY = simple);
ALTER TEXT SEARCH CONFIGURATION sessiondb_english
  ALTER MAPPING FOR asciiword, word, asciihword, hword, hword_asciipart, hword_part
  WITH sessiondb_english_stem;

UPDATE search_docs d SET tsv = NULL WHERE tsv IS NOT NULL AND NOT EXISTS (SELECT 1
  FROM index_meta m WHERE m.namespace = d.namespace AND m.key = 'encryption:envelope');

CREATE TABLE search_vocab (
  namespace text NOT NULL,
  word      text COLLATE "C" NOT NULL,
  shard     smallint NOT NULL,
  docs      bigint NOT NULL,
  PRIMARY KEY (namespace, word, shard)
);

-- Adds `docs` (negative: removes) to each word in this connection's shard,
-- in the key's order so that two writers never wait on each other's rows in
-- a cycle; with `removes`, a word no document holds any more (its shards
-- sum to nothing) is deleted (an append skips that look).
CREATE OR REPLACE FUNCTION sessiondb_vocab_apply(ns text[], words text[], docs bigint[], removes boolean)
RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  my_shard smallint := nullif(current_setting('sessiondb.vocab_shard', true), '')::smallint;
BEGIN
  IF my_shard IS NULL THEN
    my_shard := nextval('sessiondb_vocab_shard')::smallint;
    PERFORM set_config('sessiondb.vocab_shard', my_shard::text, false);
  END IF;
  INSERT INTO search_vocab AS v (namespace, word, shard, docs)
  SELECT u.n, u.w, my_shard, u.d FROM unnest(ns, words, docs) AS u(n, w, d) ORDER BY u.n, u.w
  ON CONFLICT (namespace, word, shard) DO UPDATE SET docs = v.docs + excluded.docs;
  IF removes THEN
    DELETE FROM search_vocab v USING unnest(ns, words) AS u(n, w)
    WHERE v.namespace = u.n AND v.word = u.w
      AND (SELECT sum(t.docs) FROM search_vocab t WHERE t.namespace = u.n AND t.word = u.w) <= 0;
  END IF;
END $$;

-- Whether a namespace's words may be counted: a plaintext namespace's, and
-- one's being decrypted in place (its documents are written in the clear);
-- never an encrypted one's nor one's being encrypted (pg_namespace_convert:
-- the envelope, and the conversion's kind, in index_meta).
CREATE OR REPLACE FUNCTION sessiondb_vocab_kept(ns text) RETURNS boolean LANGUAGE sql STABLE AS $$
  SELECT CASE
    WHEN EXISTS (SELECT 1 FROM index_meta WHERE namespace = ns AND key = 'encryption:convert')
    THEN EXISTS (SELECT 1 FROM index_meta WHERE namespace = ns AND key = 'encryption:convert'
                 AND starts_with(value, 'decrypt' || chr(10)))
    ELSE NOT EXISTS (SELECT 1 FROM index_meta WHERE namespace = ns
                     AND key = 'encryption:envelope')
  END
$$;

-- Lexemes of documents added (+1) and removed (-1); added ones only where
-- sessiondb_vocab_kept, asked once per namespace of the statement. Only lexemes of 3 to 66 characters: a corrected word
-- has 4 to 64, and a replacement is at most 2 edits away (the hottest rows,
-- "a", "is", "to", are never needed).
CREATE OR REPLACE FUNCTION sessiondb_vocab_docs_added() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM sessiondb_vocab_apply(array_agg(g.namespace), array_agg(g.word), array_agg(g.docs),
                                false)
  FROM (SELECT n.namespace, l.lexeme AS word, count(*) AS docs
        FROM new_docs n CROSS JOIN LATERAL unnest(n.tsv) AS l
        WHERE n.tsv IS NOT NULL AND length(l.lexeme) BETWEEN 3 AND 66
          AND n.namespace IN (SELECT k.namespace FROM (SELECT DISTINCT namespace FROM new_docs) k
                              WHERE sessiondb_vocab_kept(k.namespace))
        GROUP BY 1, 2) g
  HAVING count(*) > 0;
  RETURN NULL;
END $$;
CREATE OR REPLACE FUNCTION sessiondb_vocab_docs_removed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM sessiondb_vocab_apply(array_agg(g.namespace), array_agg(g.word), array_agg(g.docs),
                                true)
  FROM (SELECT o.namespace, l.lexeme AS word, -count(*) AS docs
        FROM old_docs o CROSS JOIN LATERAL unnest(o.tsv) AS l
        WHERE o.tsv IS NOT NULL AND length(l.lexeme) BETWEEN 3 AND 66 GROUP BY 1, 2) g
  HAVING count(*) > 0;
  RETURN NULL;
END $$;
CREATE OR REPLACE FUNCTION sessiondb_vocab_docs_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM sessiondb_vocab_apply(array_agg(g.namespace), array_agg(g.word), array_agg(g.docs),
                                bool_or(g.docs < 0))
  FROM (SELECT c.namespace, c.word, sum(c.d)::bigint AS docs FROM (
          SELECT n.namespace, l.lexeme AS word, 1 AS d
          FROM new_docs n CROSS JOIN LATERAL unnest(n.tsv) AS l
          WHERE n.tsv IS NOT NULL AND length(l.lexeme) BETWEEN 3 AND 66
            AND n.namespace IN (SELECT k.namespace FROM (SELECT DISTINCT namespace FROM new_docs) k
                                WHERE sessiondb_vocab_kept(k.namespace))
          UNION ALL
          SELECT o.namespace, l.lexeme, -1
          FROM old_docs o CROSS JOIN LATERAL unnest(o.tsv) AS l
          WHERE o.tsv IS NOT NULL AND length(l.lexeme) BETWEEN 3 AND 66) c
        GROUP BY 1, 2 HAVING sum(c.d) <> 0) g
  HAVING count(*) > 0;
  RETURN NULL;
END $$;
CREATE TRIGGER search_vocab_docs_added AFTER INSERT ON search_docs
  REFERENCING NEW TABLE AS new_docs FOR EACH STATEMENT
  EXECUTE FUNCTION sessiondb_vocab_docs_added();
CREATE TRIGGER search_vocab_docs_removed AFTER DELETE ON search_docs
  REFERENCING OLD TABLE AS old_docs FOR EACH STATEMENT
  EXECUTE FUNCTION sessiondb_vocab_docs_removed();
CREATE TRIGGER search_vocab_docs_changed AFTER UPDATE ON search_docs
  REFERENCING OLD TABLE AS old_docs NEW TABLE AS new_docs FOR EACH STATEMENT
  EXECUTE FUNCTION sessiondb_vocab_docs_changed();
)sql",
    // 8 -> 9: file versions, the code checkpoints (docs/memory.md), as the
    // embedded store keeps them (its schema 9 -> 10): a file's content as a
    // tool call found it and as it left it, kept as a blob named by a
    // blob reference of session kFileVersionRefSession (seq = id), so gc,
    // verify and a namespace's right to read the blob see it as a message's.
    // Ids come from one identity shared by every namespace: increasing in the
    // order recorded, never reused, not dense within a namespace.
    R"sql(
CREATE TABLE file_versions (
  namespace     text NOT NULL,
  id            bigint GENERATED ALWAYS AS IDENTITY,
  agent_session text NOT NULL,
  tool_use_id   text NOT NULL DEFAULT '',
  file_path     text NOT NULL,
  phase         text NOT NULL,  -- 'before' or 'after'
  sha256        text,           -- NULL: no file at the path
  size          bigint NOT NULL DEFAULT 0,
  tool          text NOT NULL DEFAULT '',
  source        text NOT NULL DEFAULT '',
  project       text NOT NULL DEFAULT '',
  created_ms    bigint NOT NULL,
  PRIMARY KEY (namespace, id)
);
CREATE INDEX file_versions_by_file ON file_versions (namespace, file_path, id);
CREATE INDEX file_versions_by_session ON file_versions (namespace, agent_session, id);
CREATE UNIQUE INDEX file_versions_once ON file_versions
  (namespace, agent_session, tool_use_id, file_path, phase) WHERE tool_use_id <> '';
)sql",
    // 9 -> 10: file versions in an encrypted namespace (docs/encryption.md).
    // `sealed` holds the version's path, project, tool and digest sealed as
    // one JSON object under its id; file_path and project then hold keyed
    // equality tokens (so the indexes and the unique key still work), tool
    // '' and sha256 the blob's keyed name. NULL in a plaintext namespace,
    // whose columns hold the values themselves.
    R"sql(
ALTER TABLE file_versions ADD COLUMN sealed text;
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
