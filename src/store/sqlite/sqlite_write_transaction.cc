// The primitives of a write transaction (store/write_transaction.h) on the
// embedded store. The whole transaction holds the store's mutex and SQLite's
// write lock (BEGIN IMMEDIATE), so a row lock argument changes nothing here
// and no other writer runs until the commit.
#include <filesystem>
#include <set>
#include <string>
#include <system_error>
#include <vector>

#include "core/message_codec.h"
#include "store/forget_rules.h"
#include "store/sqlite/sqlite_rows.h"
#include "store/sqlite/sqlite_store.h"

namespace sessiondb::sqlite {

// The file versions that belong to session ?1: those recorded under its id
// and, for an imported session, under the agent's own session id it carries.
// A fork carries its parent's metadata, but those versions are the
// parent's: only a root names its source.
#define FILE_VERSIONS_OF_SESSION                                           \
  "(agent_session = ?1 OR agent_session = (SELECT json_extract(metadata, " \
  "'$.source_session_id') FROM sessions WHERE id = ?1 AND parent_id IS NULL))"
// The code writes a session owns, the same way: its own (an import's, an
// MCP client's) and the hook's, which go under the agent's session id.
#define CODE_WRITES_OF_SESSION                                       \
  "(session_id = ?1 OR session_id = (SELECT json_extract(metadata, " \
  "'$.source_session_id') FROM sessions WHERE id = ?1 AND parent_id IS NULL))"
// Its search documents: its messages', and its code writes' (a code
// write's document carries the write's session id, and seq 0).
#define SEARCH_DOCS_OF_SESSION \
  "(session_id = ?1 OR code_id IN (SELECT id FROM code_writes WHERE " CODE_WRITES_OF_SESSION "))"

class SqliteWriteTransaction final : public store::WriteTransaction {
 public:
  explicit SqliteWriteTransaction(SqliteStore& store) : store_(store), db_(*store.db_) {}

  // A local transaction either commits or reports why: never unanswered.
  bool earlier_commit_may_have_landed() const override { return false; }

  Result<std::optional<Session>> LockSession(std::string_view id, store::RowLock) override {
    Result<Session> session = store_.LoadSessionLocked(id);
    if (session) return std::optional<Session>(std::move(*session));
    if (session.error().code() == StatusCode::kNotFound) return std::optional<Session>();
    return Err(session.error());
  }

  Result<std::vector<Session>> LockArchivedBefore(int64_t before_ms) override {
    ASSIGN_OR_RETURN(Statement s, db_.Prepare("SELECT " SESSION_COLUMNS " FROM sessions WHERE "
                                              "archived = 1 AND deleted = 0 AND updated_ms < ?1 "
                                              "ORDER BY id"));
    s.Bind(1, before_ms);
    std::vector<Session> sessions;
    while (true) {
      ASSIGN_OR_RETURN(bool row, s.Step());
      if (!row) break;
      sessions.push_back(SessionFromRow(s));
    }
    return sessions;
  }

  Result<std::optional<std::string>> LockDeletedSession(std::string_view id) override {
    ASSIGN_OR_RETURN(Statement s,
                     db_.Prepare("SELECT coalesce(parent_id, '') FROM sessions "
                                 "WHERE id = ?1 AND deleted = 1 AND trashed_ms IS NULL"));
    s.Bind(1, id);
    ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) return std::optional<std::string>();
    return std::optional<std::string>(std::string(s.ColumnText(0)));
  }

  Result<bool> HasForks(std::string_view id) override { return store_.HasForksLocked(id); }

  Status HideSession(std::string_view id) override {
    static constexpr const char* kHide[] = {
        "UPDATE sessions SET deleted = 1, trashed_ms = NULL WHERE id = ?1",
        "DELETE FROM meta WHERE key = 'active_session' AND value = ?1",
        "DELETE FROM drafts WHERE session_id = ?1",
    };
    for (const char* sql : kHide) {
      ASSIGN_OR_RETURN(Statement s, db_.Prepare(sql));
      s.Bind(1, id);
      RETURN_IF_ERROR(s.Run());
    }
    return Status::Ok();
  }

  Status EraseSession(std::string_view id) override { return store_.EraseSessionLocked(id); }

  Result<std::vector<Session>> LockAllSessions() override {
    return SelectSessions("SELECT " SESSION_COLUMNS " FROM sessions ORDER BY id", nullptr, 0);
  }

  Result<std::optional<Session>> LockTrashedSession(std::string_view id) override {
    ASSIGN_OR_RETURN(std::vector<Session> found,
                     SelectSessions("SELECT " SESSION_COLUMNS " FROM sessions WHERE id = ?1 "
                                    "AND trashed_ms IS NOT NULL",
                                    &id, 0));
    if (found.empty()) return std::optional<Session>();
    return std::optional<Session>(std::move(found.front()));
  }

  Result<std::vector<Session>> LockTrashedBefore(int64_t before_ms) override {
    return SelectSessions("SELECT " SESSION_COLUMNS
                          " FROM sessions WHERE trashed_ms IS NOT NULL "
                          "AND trashed_ms < ?2 ORDER BY id",
                          nullptr, before_ms);
  }

  Status MoveToTrash(std::string_view id, int64_t trashed_ms) override {
    ASSIGN_OR_RETURN(Statement s, db_.Prepare("UPDATE sessions SET deleted = 1, trashed_ms = ?2 "
                                              "WHERE id = ?1"));
    s.Bind(1, id).Bind(2, trashed_ms);
    RETURN_IF_ERROR(s.Run());
    ASSIGN_OR_RETURN(Statement active,
                     db_.Prepare("DELETE FROM meta WHERE key = 'active_session' AND value = ?1"));
    active.Bind(1, id);
    return active.Run();
  }

  Status TakeOutOfTrash(std::string_view id) override {
    ASSIGN_OR_RETURN(Statement s, db_.Prepare("UPDATE sessions SET deleted = 0, trashed_ms = NULL "
                                              "WHERE id = ?1 AND trashed_ms IS NOT NULL"));
    s.Bind(1, id);
    return s.Run();
  }

  Status EraseSessionRows(std::string_view id, store::ErasedRows* erased) override {
    RETURN_IF_ERROR(internal::ToStatus(CountSessionRows(id, erased)));
    // The triggers take the documents out of the full-text index and drop
    // their vectors and edits.
    ASSIGN_OR_RETURN(Statement writes,
                     db_.Prepare("DELETE FROM code_writes WHERE " CODE_WRITES_OF_SESSION));
    writes.Bind(1, id);
    RETURN_IF_ERROR(writes.Run());
    // Its file versions: those of the agent session it is (or was imported
    // from), with the references that kept their contents.
    static constexpr const char* kEraseVersions[] = {
        "DELETE FROM blob_refs WHERE session_id = ?2 AND seq IN (SELECT id FROM file_versions "
        "WHERE " FILE_VERSIONS_OF_SESSION ")",
        "DELETE FROM file_versions WHERE " FILE_VERSIONS_OF_SESSION,
    };
    for (const char* sql : kEraseVersions) {
      ASSIGN_OR_RETURN(Statement erase, db_.Prepare(sql));
      erase.Bind(1, id).Bind(2, kFileVersionRefSession);
      RETURN_IF_ERROR(erase.Run());
    }
    RETURN_IF_ERROR(store_.EraseSessionLocked(id));
    ++erased->sessions;
    return Status::Ok();
  }

  Result<bool> CountSessionRows(std::string_view id, store::ErasedRows* erased) override {
    static constexpr const char* kCounts =
        "SELECT (SELECT count(*) FROM events WHERE session_id = ?1), "
        "(SELECT count(*) FROM events WHERE session_id = ?1 AND type = 'message'), "
        "(SELECT count(*) FROM drafts WHERE session_id = ?1), "
        "(SELECT count(*) FROM usage_totals WHERE session_id = ?1) + "
        "(SELECT count(*) FROM usage_days WHERE session_id = ?1), "
        "(SELECT count(*) FROM code_writes WHERE " CODE_WRITES_OF_SESSION
        "), "
        "(SELECT count(*) FROM search_docs WHERE " SEARCH_DOCS_OF_SESSION
        "), "
        "(SELECT count(*) FROM embeddings WHERE doc_id IN "
        "  (SELECT doc_id FROM search_docs WHERE " SEARCH_DOCS_OF_SESSION "))";
    ASSIGN_OR_RETURN(Statement counts, db_.Prepare(kCounts));
    counts.Bind(1, id);
    ASSIGN_OR_RETURN(bool row, counts.Step());
    if (row) {
      erased->events += counts.ColumnInt(0);
      erased->messages += counts.ColumnInt(1);
      erased->drafts += counts.ColumnInt(2);
      erased->usage_rows += counts.ColumnInt(3);
      erased->code_writes += counts.ColumnInt(4);
      erased->search_documents += counts.ColumnInt(5);
      erased->embeddings += counts.ColumnInt(6);
    }
    counts.Reset();
    ASSIGN_OR_RETURN(Statement blobs,
                     db_.Prepare("SELECT DISTINCT sha256 FROM blob_refs WHERE session_id = ?1"));
    blobs.Bind(1, id);
    while (true) {
      ASSIGN_OR_RETURN(bool more, blobs.Step());
      if (!more) break;
      erased->blobs.emplace(blobs.ColumnText(0));
    }
    blobs.Reset();
    ASSIGN_OR_RETURN(
        Statement versions,
        db_.Prepare("SELECT sha256 FROM file_versions WHERE " FILE_VERSIONS_OF_SESSION));
    versions.Bind(1, id);
    while (true) {
      ASSIGN_OR_RETURN(bool more, versions.Step());
      if (!more) break;
      ++erased->file_versions;
      if (!versions.ColumnIsNull(0)) erased->blobs.emplace(versions.ColumnText(0));
    }
    versions.Reset();
    ASSIGN_OR_RETURN(Statement exists, db_.Prepare("SELECT 1 FROM sessions WHERE id = ?1"));
    exists.Bind(1, id);
    ASSIGN_OR_RETURN(bool present, exists.Step());
    exists.Reset();
    return present;
  }

  Status EraseCodeWrites(std::string_view project, store::ErasedRows* erased) override {
    // A folder holds its subfolders: "/src/app" holds "/src/app/lib".
    std::string prefix(project);
    if (!prefix.empty() && prefix.back() != '/') prefix += '/';
      // Static texts: the statement cache is keyed by the text's address.
#define CODE_WRITES_UNDER                                                  \
  " WHERE ?1 = '' OR project = ?1 OR substr(project, 1, length(?2)) = ?2 " \
  "OR substr(file_path, 1, length(?2)) = ?2"
    static constexpr const char* kCount =
        "WITH gone AS (SELECT id FROM code_writes" CODE_WRITES_UNDER
        ") SELECT (SELECT count(*) FROM gone), "
        "(SELECT count(*) FROM search_docs WHERE code_id IN gone), "
        "(SELECT count(*) FROM embeddings WHERE doc_id IN "
        "  (SELECT doc_id FROM search_docs WHERE code_id IN gone))";
    static constexpr const char* kRemove = "DELETE FROM code_writes" CODE_WRITES_UNDER;
    // The file versions under it go too, with the references that kept their
    // contents: the whole store's when `project` is empty.
    static constexpr const char* kVersions = "SELECT sha256 FROM file_versions" CODE_WRITES_UNDER;
    static constexpr const char* kRemoveVersions[] = {
        "DELETE FROM blob_refs WHERE session_id = ?3 AND seq IN (SELECT id FROM "
        "file_versions" CODE_WRITES_UNDER ")",
        "DELETE FROM file_versions" CODE_WRITES_UNDER,
    };
#undef CODE_WRITES_UNDER
    ASSIGN_OR_RETURN(Statement versions, db_.Prepare(kVersions));
    versions.Bind(1, project).Bind(2, prefix);
    while (true) {
      ASSIGN_OR_RETURN(bool more, versions.Step());
      if (!more) break;
      ++erased->file_versions;
      if (!versions.ColumnIsNull(0)) erased->blobs.emplace(versions.ColumnText(0));
    }
    versions.Reset();
    for (const char* sql : kRemoveVersions) {
      ASSIGN_OR_RETURN(Statement remove, db_.Prepare(sql));
      remove.Bind(1, project).Bind(2, prefix).Bind(3, kFileVersionRefSession);
      RETURN_IF_ERROR(remove.Run());
    }
    ASSIGN_OR_RETURN(Statement counts, db_.Prepare(kCount));
    counts.Bind(1, project).Bind(2, prefix);
    ASSIGN_OR_RETURN(bool row, counts.Step());
    if (row) {
      erased->code_writes += counts.ColumnInt(0);
      erased->search_documents += counts.ColumnInt(1);
      erased->embeddings += counts.ColumnInt(2);
    }
    counts.Reset();
    ASSIGN_OR_RETURN(Statement remove, db_.Prepare(kRemove));
    remove.Bind(1, project).Bind(2, prefix);
    return remove.Run();
  }

  Result<std::vector<store::BlobCandidate>> BlobsNoLongerReferenced(
      const std::set<std::string>& sha256s) override {
    ASSIGN_OR_RETURN(Statement referenced,
                     db_.Prepare("SELECT 1 FROM blob_refs WHERE sha256 = ?1 LIMIT 1"));
    std::vector<store::BlobCandidate> gone;
    for (const std::string& sha : sha256s) {
      referenced.Bind(1, sha);
      ASSIGN_OR_RETURN(bool used, referenced.Step());
      referenced.Reset();
      if (used) continue;
      Result<blob::BlobInfo> info = store_.blobs_->Stat(sha);
      if (info) gone.push_back({sha, info->size});
    }
    return gone;
  }

  Status ScrubDerivedIndexes() override {
    // FTS5 deletes by writing tombstones to a new segment: the erased words
    // stay in the old segments until they are merged, and 'optimize' merges
    // them all. Its cost grows with the whole index (docs/retention.md).
    RETURN_IF_ERROR(db_.Exec("INSERT INTO search_fts(search_fts) VALUES('optimize')"));
    return db_.Exec("DELETE FROM meta WHERE key LIKE 'hnsw:%'");
  }

  Result<int64_t> AppendLedgerEntry(const LedgerEntry& entry) override {
    ASSIGN_OR_RETURN(Statement s, db_.Prepare("INSERT INTO forget_ledger (ts_ms, actor, action, "
                                              "scope, counts, receipt_id, receipt_digest) "
                                              "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) RETURNING id"));
    s.Bind(1, entry.ts_ms).Bind(2, entry.actor).Bind(3, entry.action).Bind(4, entry.scope);
    s.Bind(5, store::EncodeCounts(entry.counts)).Bind(6, entry.receipt_id);
    s.Bind(7, entry.receipt_digest);
    ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) return Err(Status::Internal("the ledger gave no id to an entry"));
    const int64_t id = s.ColumnInt(0);
    s.Reset();
    return id;
  }

  Result<std::vector<Segment>> ReadHistorySegments(std::string_view id) override {
    return store_.HistoryLocked(id);
  }

  Result<int64_t> CountOtherEvents(std::span<const Segment> segments) override {
    ASSIGN_OR_RETURN(Statement others,
                     db_.Prepare("SELECT count(*) FROM events INDEXED BY events_not_messages "
                                 "WHERE session_id = ?1 AND seq BETWEEN ?2 AND ?3 "
                                 "AND type <> 'message'"));
    int64_t count = 0;
    for (const Segment& segment : segments) {
      others.Bind(1, segment.session_id).Bind(2, segment.from_seq).Bind(3, segment.to_seq);
      ASSIGN_OR_RETURN(bool row, others.Step());
      if (row) count += others.ColumnInt(0);
      others.Reset();
    }
    return count;
  }

  Result<std::vector<store::StoredMessageText>> ReadMessageTexts(const Segment& segment,
                                                                 int64_t limit) override {
    ASSIGN_OR_RETURN(Statement s, db_.Prepare("SELECT seq, role, text FROM events WHERE "
                                              "session_id = ?1 AND seq BETWEEN ?2 AND ?3 AND "
                                              "type = 'message' ORDER BY seq LIMIT ?4"));
    s.Bind(1, segment.session_id).Bind(2, segment.from_seq).Bind(3, segment.to_seq);
    s.Bind(4, limit);
    std::vector<store::StoredMessageText> texts;
    while (true) {
      ASSIGN_OR_RETURN(bool row, s.Step());
      if (!row) break;
      texts.push_back({.seq = s.ColumnInt(0),
                       .role = ParseRole(s.ColumnText(1)).value_or(Role::kUser),
                       .text = std::string(s.ColumnText(2))});
    }
    return texts;
  }

  Result<std::optional<Session>> InsertForkRow(const store::SessionRow& row) override {
    ASSIGN_OR_RETURN(Statement insert,
                     db_.Prepare("INSERT OR IGNORE INTO sessions (id, title, title_fixed, "
                                 "preview, created_ms, updated_ms, message_count, last_seq, "
                                 "metadata, parent_id, fork_seq) "
                                 "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)"));
    insert.Bind(1, row.id).Bind(2, row.title).Bind(3, int64_t{row.title_fixed});
    insert.Bind(4, row.preview).Bind(5, row.created_ms).Bind(6, row.updated_ms);
    insert.Bind(7, row.message_count).Bind(8, row.last_seq).Bind(9, row.metadata_json);
    insert.Bind(10, row.parent_id).Bind(11, row.fork_seq);
    RETURN_IF_ERROR(insert.Run());
    if (db_.Changes() == 0) return std::optional<Session>();
    return LockSession(row.id, store::RowLock::kShare);
  }

  Result<std::optional<Event>> ReadOwnEvent(std::string_view session_id, int64_t seq) override {
    ASSIGN_OR_RETURN(Statement s, db_.Prepare("SELECT " EVENT_COLUMNS " FROM events "
                                              "WHERE session_id = ?1 AND seq = ?2"));
    s.Bind(1, session_id).Bind(2, seq);
    std::vector<Event> found;
    RETURN_IF_ERROR(store_.ReadEventRows(s, &found));
    if (found.empty()) return std::optional<Event>();
    return std::optional<Event>(std::move(found.front()));
  }

  Result<std::vector<Event>> ReadOwnRewinds(std::string_view session_id, int64_t from_seq,
                                            int64_t to_seq) override {
    ASSIGN_OR_RETURN(Statement s, db_.Prepare("SELECT " EVENT_COLUMNS " FROM events "
                                              "INDEXED BY events_not_messages "
                                              "WHERE session_id = ?1 AND seq BETWEEN ?2 AND ?3 "
                                              "AND type <> 'message' AND type = 'rewind' "
                                              "ORDER BY seq"));
    s.Bind(1, session_id).Bind(2, from_seq).Bind(3, to_seq);
    std::vector<Event> found;
    RETURN_IF_ERROR(store_.ReadEventRows(s, &found));
    return found;
  }

  Result<std::vector<store::StoredMessageText>> ReadOwnMessages(std::string_view session_id,
                                                                int64_t from_seq,
                                                                int64_t to_seq) override {
    ASSIGN_OR_RETURN(Statement rows, db_.Prepare("SELECT seq, role, body, text FROM events "
                                                 "WHERE session_id = ?1 AND seq BETWEEN ?2 AND "
                                                 "?3 AND type = 'message' ORDER BY seq"));
    rows.Bind(1, session_id).Bind(2, from_seq).Bind(3, to_seq);
    std::vector<store::StoredMessageText> messages;
    while (true) {
      ASSIGN_OR_RETURN(bool row, rows.Step());
      if (!row) break;
      Message stored;
      std::optional<std::string_view> body;
      if (!rows.ColumnIsNull(2)) body = rows.ColumnText(2);
      RETURN_IF_ERROR(DecodeMessageBody(body, rows.ColumnText(3), &stored));
      messages.push_back({.seq = rows.ColumnInt(0),
                          .role = ParseRole(rows.ColumnText(1)).value_or(Role::kUser),
                          .pruned = stored.pruned,
                          .text = std::string(rows.ColumnText(3))});
    }
    return messages;
  }

  Status UpdateTitleAndPreview(std::string_view id, std::string_view title,
                               std::string_view preview) override {
    ASSIGN_OR_RETURN(Statement s,
                     db_.Prepare("UPDATE sessions SET title = ?2, preview = ?3 WHERE id = ?1"));
    s.Bind(1, id).Bind(2, title).Bind(3, preview);
    return s.Run();
  }

  Result<int64_t> ReplaceBodies(std::string_view session_id,
                                std::span<const store::BodyUpdate> updates) override {
    // The events trigger takes each old text out of the full-text index and
    // puts the new one in.
    ASSIGN_OR_RETURN(Statement s, db_.Prepare("UPDATE events SET text = ?4, body = ?3 "
                                              "WHERE session_id = ?1 AND seq = ?2"));
    int64_t changed = 0;
    for (const store::BodyUpdate& update : updates) {
      s.Bind(1, session_id).Bind(2, update.seq).BindOptional(3, update.body).Bind(4, update.text);
      RETURN_IF_ERROR(s.Run());
      changed += db_.Changes();
    }
    return changed;
  }

  Result<std::set<std::string>> DropBlobReferences(std::string_view session_id,
                                                   std::span<const int64_t> seqs) override {
    ASSIGN_OR_RETURN(Statement drop, db_.Prepare("DELETE FROM blob_refs WHERE session_id = ?1 "
                                                 "AND seq = ?2 RETURNING sha256"));
    std::set<std::string> named;
    for (int64_t seq : seqs) {
      drop.Bind(1, session_id).Bind(2, seq);
      while (true) {
        ASSIGN_OR_RETURN(bool row, drop.Step());
        if (!row) break;
        named.emplace(drop.ColumnText(0));
      }
      drop.Reset();
    }
    return named;
  }

 private:
  // The sessions `sql` selects; ?1 is `id` when given, ?2 `number`.
  Result<std::vector<Session>> SelectSessions(const char* sql, const std::string_view* id,
                                              int64_t number) {
    ASSIGN_OR_RETURN(Statement s, db_.Prepare(sql));
    if (id) s.Bind(1, *id);
    if (number != 0) s.Bind(2, number);
    std::vector<Session> sessions;
    while (true) {
      ASSIGN_OR_RETURN(bool row, s.Step());
      if (!row) break;
      sessions.push_back(SessionFromRow(s));
    }
    return sessions;
  }

  SqliteStore& store_;
  Database& db_;  // the store's, under its mutex for the whole transaction
};

Status SqliteStore::RunWriteTransaction(const store::WriteOptions& options,
                                        const store::WriteWork& work) {
  std::lock_guard lock(mu_);
  // Erasure means the words leave the file too: secure_delete zeroes freed
  // space in the pages the transaction rewrites, and the checkpoint after it
  // drops the WAL frames that still hold the old pages.
  struct SecureDelete {
    Database* db = nullptr;
    ~SecureDelete() {
      if (db) (void)db->Exec("PRAGMA secure_delete = OFF");
    }
  } secure;
  if (options.erases_text) {
    RETURN_IF_ERROR(db_->Exec("PRAGMA secure_delete = ON"));
    secure.db = db_.get();
  }
  {
    ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(db_.get()));
    SqliteWriteTransaction primitives(*this);
    RETURN_IF_ERROR(work(primitives));
    RETURN_IF_ERROR(txn.Commit());
  }
  // Best effort: a reader of another process may hold old frames a while
  // longer; the next checkpoint then drops them.
  // The checkpointer's pass would make this one give up: let it finish first.
  if (options.erases_text) {
    if (checkpointer_) checkpointer_->Quiesce();
    (void)db_->Exec("PRAGMA wal_checkpoint(TRUNCATE)");
  }
  return Status::Ok();
}

}  // namespace sessiondb::sqlite

namespace sessiondb::sqlite {

Status SqliteStore::ScrubAfterErasure() {
  // The saved vector graphs: their entries went with the erasure, so no
  // search loads them again; a crash before this leaves files the next
  // erasure removes.
  std::error_code ec;
  const std::filesystem::path index = std::filesystem::path(dir_) / "index";
  for (const auto& entry : std::filesystem::directory_iterator(index, ec)) {
    if (entry.path().extension() == ".hnsw") std::filesystem::remove(entry.path(), ec);
  }
  return Status::Ok();
}

}  // namespace sessiondb::sqlite
