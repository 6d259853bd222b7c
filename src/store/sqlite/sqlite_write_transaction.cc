// The primitives of a write transaction (store/write_transaction.h) on the
// embedded store. The whole transaction holds the store's mutex and SQLite's
// write lock (BEGIN IMMEDIATE), so a row lock argument changes nothing here
// and no other writer runs until the commit.
#include <set>
#include <string>
#include <vector>

#include "core/message_codec.h"
#include "store/sqlite/sqlite_rows.h"
#include "store/sqlite/sqlite_store.h"

namespace sessiondb::sqlite {

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
    ASSIGN_OR_RETURN(Statement s, db_.Prepare("SELECT coalesce(parent_id, '') FROM sessions "
                                              "WHERE id = ?1 AND deleted = 1"));
    s.Bind(1, id);
    ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) return std::optional<std::string>();
    return std::optional<std::string>(std::string(s.ColumnText(0)));
  }

  Result<bool> HasForks(std::string_view id) override { return store_.HasForksLocked(id); }

  Status HideSession(std::string_view id) override {
    static constexpr const char* kHide[] = {
        "UPDATE sessions SET deleted = 1 WHERE id = ?1",
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
