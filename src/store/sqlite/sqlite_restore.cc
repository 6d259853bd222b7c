// Restores on the embedded store: a whole session (RestoreSession) and more
// events of one (RestoreEvents), with their ids, seqs and times as given.
#include <set>

#include "blob/sha256.h"
#include "core/message_codec.h"
#include "core/text_rules.h"
#include "store/sqlite/sqlite_store.h"

namespace sessiondb::sqlite {

Result<SqliteStore::RestoreBatch> SqliteStore::PrepareRestore(std::string_view session_id,
                                                              std::span<const Event> events,
                                                              const BlobSourceFn& blob_source) {
  // Messages are prepared like appends; every descriptor is accepted: its
  // blob is fetched (or found lost) below, before the transaction that refers
  // to it. Other events are written as they are.
  RestoreBatch batch;
  batch.prepared.resize(events.size());
  batch.stored.resize(events.size());
  batch.stored_ids.resize(events.size());
  std::set<std::string> needed;
  for (size_t i = 0; i < events.size(); ++i) {
    // Only an inherited event needs a copy (its ids cleared): copying every
    // one cost as much as encoding it.
    std::optional<Event> copy;
    if (IsInherited(events[i], session_id)) copy = RestoredCopy(events[i], session_id);
    const Event& e = copy ? *copy : events[i];
    batch.message_count += e.type == EventType::kMessage;
    if (RestoresAsStored(e)) {
      ASSIGN_OR_RETURN(batch.stored[i], EncodeRestoredEvent(e));
      batch.stored_ids[i] = e.id.empty() ? NewId() : e.id;
      continue;
    }
    ASSIGN_OR_RETURN(PreparedMessage p,
                     PrepareMessage(
                         e.message, options_, Admission::kRestore,
                         [](std::string_view) { return true; }, [this] { return NewId(); }));
    needed.insert(p.referenced_sha256.begin(), p.referenced_sha256.end());
    batch.prepared[i] = std::move(p);
  }
  for (const std::string& sha : needed) {
    if (blobs_->Stat(sha)) continue;
    Result<std::string> bytes =
        blob_source ? blob_source(sha) : Result<std::string>(Err(Status::NotFound(sha)));
    if (!bytes && bytes.error().code() == StatusCode::kNotFound) {
      options_.warn("session " + std::string(session_id) + ": blob " + sha +
                    " is missing in the source; its descriptor is kept and reads as missing");
      continue;
    }
    if (!bytes) return Err(bytes.error());
    if (blob::Sha256Hex(*bytes) != sha) {
      return Err(Status::Corruption("the source's blob " + sha +
                                    " does not hash to its name; run `sessiondb verify` there"));
    }
    RETURN_IF_ERROR(blobs_->Put(sha, *bytes));
  }
  return batch;
}

Status SqliteStore::InsertRestoredLocked(std::string_view session_id, std::span<const Event> events,
                                         const RestoreBatch& batch) {
  ASSIGN_OR_RETURN(Statement insert,
                   db_->Prepare("INSERT INTO events (session_id, seq, id, ts_ms, type, role, "
                                "text, body) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)"));
  ASSIGN_OR_RETURN(Statement add_ref,
                   db_->Prepare("INSERT OR IGNORE INTO blob_refs (sha256, session_id, seq) "
                                "VALUES (?1, ?2, ?3)"));
  if (events.empty()) return Status::Ok();
  for (size_t i = 0; i < events.size(); ++i) {
    const Event& e = events[i];
    insert.Bind(1, session_id).Bind(2, e.seq).Bind(4, e.ts_ms).Bind(5, EventTypeName(e.type));
    if (e.type == EventType::kMessage) {
      insert.Bind(6, RoleName(e.message.role));
    } else {
      insert.BindNull(6);
    }
    const std::optional<PreparedMessage>& prepared = batch.prepared[i];
    if (!prepared) {
      insert.Bind(3, batch.stored_ids[i]).Bind(7, batch.stored[i].text);
      insert.BindOptional(8, batch.stored[i].body);
      RETURN_IF_ERROR(insert.Run());
      continue;
    }
    const Message& m = prepared->message();
    ASSIGN_OR_RETURN(std::optional<std::string> body, EncodeMessageBody(m));
    insert.Bind(3, prepared->id).Bind(7, prepared->text).BindOptional(8, body);
    if (Status s = insert.Run(); !s.ok()) {
      if (s.code() != StatusCode::kAlreadyExists) return s;
      return Status::AlreadyExists("event id '" + prepared->id + "' already exists in this store");
    }
    for (const std::string& sha : prepared->referenced_sha256) {
      add_ref.Bind(1, sha).Bind(2, session_id).Bind(3, e.seq);
      RETURN_IF_ERROR(add_ref.Run());
    }
    // Tokens an inherited turn spent were the parent's, and counted there.
    if (!IsInherited(e, session_id)) RETURN_IF_ERROR(AddUsageLocked(session_id, m, e.ts_ms));
  }
  // Recorded as search documents together, once inserted.
  return RecordDocumentsLocked(session_id, events.front().seq, events.back().seq);
}

// One statement for the run's documents; the full-text index takes them
// later, past its watermark (SqliteIndexBackend::IndexPendingText).
Status SqliteStore::RecordDocumentsLocked(std::string_view session_id, int64_t first_seq,
                                          int64_t last_seq) {
  ASSIGN_OR_RETURN(Statement docs,
                   db_->Prepare("INSERT INTO search_docs (session_id, seq) SELECT session_id, seq "
                                "FROM events WHERE session_id = ?1 AND seq BETWEEN ?2 AND ?3 "
                                "ORDER BY seq"));
  docs.Bind(1, session_id).Bind(2, first_seq).Bind(3, last_seq);
  return docs.Run();
}

Status SqliteStore::InsertRestoredSession(const store::SessionRow& row,
                                          std::span<const Event> events,
                                          const BlobSourceFn& blob_source) {
  ASSIGN_OR_RETURN(RestoreBatch batch, PrepareRestore(row.id, events, blob_source));
  std::lock_guard lock(mu_);
  ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(db_.get()));
  if (!row.parent_id.empty()) {
    // The parent may be a deleted one kept for its forks: it still counts.
    ASSIGN_OR_RETURN(Statement parent, db_->Prepare("SELECT last_seq FROM sessions WHERE id = ?1"));
    parent.Bind(1, row.parent_id);
    ASSIGN_OR_RETURN(bool found, parent.Step());
    if (!found || parent.ColumnInt(0) < row.fork_seq) {
      return MissingForkParent(row.id, row.parent_id, row.fork_seq);
    }
  }
  ASSIGN_OR_RETURN(Statement insert_session,
                   db_->Prepare("INSERT OR IGNORE INTO sessions (id, title, title_fixed, preview, "
                                "created_ms, updated_ms, message_count, last_seq, archived, "
                                "metadata, parent_id, fork_seq) "
                                "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)"));
  insert_session.Bind(1, row.id).Bind(2, row.title).Bind(3, int64_t{row.title_fixed});
  insert_session.Bind(4, row.preview).Bind(5, row.created_ms).Bind(6, row.updated_ms);
  insert_session.Bind(7, row.message_count).Bind(8, row.last_seq);
  insert_session.Bind(9, int64_t{row.archived}).Bind(10, row.metadata_json);
  if (row.parent_id.empty()) {
    insert_session.BindNull(11);
  } else {
    insert_session.Bind(11, row.parent_id);
  }
  insert_session.Bind(12, row.fork_seq);
  RETURN_IF_ERROR(insert_session.Run());
  if (db_->Changes() == 0) return SessionIdTaken(row.id);
  RETURN_IF_ERROR(InsertRestoredLocked(row.id, events, batch));
  return txn.Commit();
}

Status SqliteStore::InsertRestoredEvents(std::string_view session_id, std::span<const Event> events,
                                         const BlobSourceFn& blob_source,
                                         int64_t rewound_messages) {
  ASSIGN_OR_RETURN(RestoreBatch batch, PrepareRestore(session_id, events, blob_source));
  std::lock_guard lock(mu_);
  ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(db_.get()));
  IndexEntry entry;
  int64_t updated_ms = 0;
  {
    ASSIGN_OR_RETURN(Statement load,
                     db_->Prepare("SELECT last_seq, message_count, title_fixed, title, preview, "
                                  "updated_ms FROM sessions WHERE id = ?1 AND deleted = 0"));
    load.Bind(1, session_id);
    ASSIGN_OR_RETURN(bool found, load.Step());
    if (!found) return SessionNotFound(session_id);
    entry.last_seq = load.ColumnInt(0);
    entry.message_count = load.ColumnInt(1);
    entry.title_fixed = load.ColumnInt(2) != 0;
    entry.title = load.ColumnText(3);
    entry.preview = load.ColumnText(4);
    updated_ms = load.ColumnInt(5);
  }
  RETURN_IF_ERROR(ValidateRestoredRun(session_id, entry.last_seq, events));
  RETURN_IF_ERROR(InsertRestoredLocked(session_id, events, batch));
  ApplyRestoredToIndex(events, batch.message_count - rewound_messages, &entry, &updated_ms);
  ASSIGN_OR_RETURN(Statement update,
                   db_->Prepare("UPDATE sessions SET last_seq = ?2, message_count = ?3, "
                                "updated_ms = ?4, title = ?5, title_fixed = ?6, preview = ?7 "
                                "WHERE id = ?1"));
  update.Bind(1, session_id).Bind(2, entry.last_seq).Bind(3, entry.message_count);
  update.Bind(4, updated_ms).Bind(5, entry.title).Bind(6, int64_t{entry.title_fixed});
  update.Bind(7, entry.preview);
  RETURN_IF_ERROR(update.Run());
  return txn.Commit();
}

}  // namespace sessiondb::sqlite
