// The agent harness on the embedded store: fork histories, events beyond
// messages, compaction prune, usage totals and drafts. Schema: migration
// 1 -> 2 in schema.cc.
#include <algorithm>

#include "core/event_codec.h"
#include "core/message_codec.h"
#include "core/text_rules.h"
#include "store/sqlite/sqlite_rows.h"
#include "store/sqlite/sqlite_store.h"

namespace sessiondb::sqlite {
namespace {

Draft DraftFromRow(const Statement& s) {
  Draft d;
  d.id = s.ColumnText(0);
  d.session_id = s.ColumnText(1);
  d.role = ParseRole(s.ColumnText(2)).value_or(Role::kAssistant);
  d.text = s.ColumnText(3);
  d.reasoning = s.ColumnText(4);
  d.model = s.ColumnText(5);
  d.created_ms = s.ColumnInt(6);
  d.updated_ms = s.ColumnInt(7);
  return d;
}

#define DRAFT_COLUMNS "id, session_id, role, text, reasoning, model, created_ms, updated_ms"

}  // namespace

// ---- Histories ----------------------------------------------------------------

Result<std::vector<Segment>> SqliteStore::HistoryLocked(std::string_view session_id) {
  ASSIGN_OR_RETURN(Session session, LoadSessionLocked(session_id));
  std::vector<ChainLink> chain = {
      {session.id, session.parent_id, session.fork_seq, session.last_seq}};
  // Ancestors may be deleted sessions kept for their forks: read them anyway.
  ASSIGN_OR_RETURN(Statement s, db_->Prepare("SELECT coalesce(parent_id, ''), fork_seq, last_seq "
                                             "FROM sessions WHERE id = ?1"));
  while (!chain.back().parent_id.empty()) {
    const std::string id = chain.back().parent_id;
    s.Bind(1, id);
    ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) {
      return Err(Status::Corruption("session " + chain.back().id + " was forked from " + id +
                                    ", which is gone; run `sessiondb verify`"));
    }
    chain.push_back({id, std::string(s.ColumnText(0)), s.ColumnInt(1), s.ColumnInt(2)});
    s.Reset();
  }
  return HistorySegments(chain);
}

Status SqliteStore::ReadEventRows(Statement& s, std::vector<Event>* out) {
  while (true) {
    ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) return Status::Ok();
    EventRow r;
    r.seq = s.ColumnInt(0);
    r.id = s.ColumnText(1);
    r.ts_ms = s.ColumnInt(2);
    r.type = s.ColumnText(3);
    r.role = s.ColumnText(4);
    r.text = s.ColumnText(5);
    if (!s.ColumnIsNull(6)) r.body = s.ColumnText(6);
    r.session_id = s.ColumnText(7);
    ASSIGN_OR_RETURN(Event e, DecodeEventRow(r));
    out->push_back(std::move(e));
  }
}

Result<std::vector<Event>> SqliteStore::ReadHistory(std::string_view session_id,
                                                    const store::HistoryRead& read) {
  const int64_t from_seq = read.from_seq;
  const int64_t limit = read.limit;
  const bool messages_only = read.messages_only;
  std::vector<Event> events;
  if (read.newest_first) {
    std::lock_guard lock(mu_);
    ASSIGN_OR_RETURN(std::vector<Segment> segments, HistoryLocked(session_id));
    // Newest segment first, newest event first, until `limit` are found.
    ASSIGN_OR_RETURN(
        Statement s,
        db_->Prepare(messages_only ? "SELECT " EVENT_COLUMNS " FROM events WHERE session_id = ?1 "
                                     "AND seq BETWEEN ?2 AND ?3 AND type = 'message' "
                                     "ORDER BY seq DESC LIMIT ?4"
                                   : "SELECT " EVENT_COLUMNS " FROM events WHERE session_id = ?1 "
                                     "AND seq BETWEEN ?2 AND ?3 ORDER BY seq DESC LIMIT ?4"));
    for (auto it = segments.rbegin(); it != segments.rend(); ++it) {
      if (limit >= 0 && std::ssize(events) >= limit) break;
      const int64_t lo = std::max(it->from_seq, from_seq);
      if (lo > it->to_seq) continue;
      s.Bind(1, it->session_id).Bind(2, lo).Bind(3, it->to_seq);
      s.Bind(4, limit < 0 ? int64_t{-1} : limit - std::ssize(events));
      RETURN_IF_ERROR(ReadEventRows(s, &events));
      s.Reset();
    }
    std::reverse(events.begin(), events.end());
  } else {
    std::lock_guard lock(mu_);
    ASSIGN_OR_RETURN(std::vector<Segment> segments, HistoryLocked(session_id));
    const int64_t expected = std::clamp<int64_t>(
        segments.back().to_seq - std::max<int64_t>(from_seq, 1) + 1, 0, int64_t{1} << 20);
    events.reserve(static_cast<size_t>(limit < 0 ? expected : std::min(limit, expected)));
    ASSIGN_OR_RETURN(
        Statement s,
        db_->Prepare(messages_only ? "SELECT " EVENT_COLUMNS " FROM events WHERE session_id = ?1 "
                                     "AND seq BETWEEN ?2 AND ?3 AND type = 'message' "
                                     "ORDER BY seq LIMIT ?4"
                                   : "SELECT " EVENT_COLUMNS " FROM events WHERE session_id = ?1 "
                                     "AND seq BETWEEN ?2 AND ?3 ORDER BY seq LIMIT ?4"));
    for (const Segment& seg : segments) {
      const int64_t lo = std::max(seg.from_seq, from_seq);
      if (lo > seg.to_seq) continue;
      if (limit >= 0 && std::ssize(events) >= limit) break;
      s.Bind(1, seg.session_id).Bind(2, lo).Bind(3, seg.to_seq);
      s.Bind(4, limit < 0 ? int64_t{-1} : limit - std::ssize(events));
      RETURN_IF_ERROR(ReadEventRows(s, &events));
      s.Reset();
    }
  }
  return events;
}

// ---- Forks ----------------------------------------------------------------------

Result<Session> SqliteStore::InsertFork(std::string_view parent_id, int64_t at_seq,
                                        const store::ForkRow& child) {
  const std::string& id = child.id;
  const std::string& title = child.title;

  std::lock_guard lock(mu_);
  ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(db_.get()));
  ASSIGN_OR_RETURN(Session parent, LoadSessionLocked(parent_id));
  RETURN_IF_ERROR(ValidateForkPoint(parent, at_seq));
  const std::string& metadata = child.metadata_json ? *child.metadata_json : parent.metadata_json;
  ASSIGN_OR_RETURN(std::vector<Segment> all, HistoryLocked(parent_id));
  const std::vector<Segment> inherited = SegmentsUpTo(std::move(all), at_seq);

  // Messages inherited = seqs minus the few other events, which an index
  // finds without reading the log.
  IndexEntry entry;
  entry.last_seq = at_seq;
  entry.message_count = at_seq;
  {
    ASSIGN_OR_RETURN(Statement others,
                     db_->Prepare("SELECT count(*) FROM events INDEXED BY events_not_messages "
                                  "WHERE session_id = ?1 AND seq BETWEEN ?2 AND ?3 "
                                  "AND type <> 'message'"));
    for (const Segment& seg : inherited) {
      others.Bind(1, seg.session_id).Bind(2, seg.from_seq).Bind(3, seg.to_seq);
      ASSIGN_OR_RETURN(bool row, others.Step());
      if (row) entry.message_count -= others.ColumnInt(0);
      others.Reset();
    }
  }
  {
    // Title and preview come from the first inherited messages, as they
    // would have for a session that had received them.
    ASSIGN_OR_RETURN(Statement first,
                     db_->Prepare("SELECT role, text FROM events WHERE session_id = ?1 AND "
                                  "seq BETWEEN ?2 AND ?3 AND type = 'message' "
                                  "ORDER BY seq LIMIT ?4"));
    int scanned = 0;
    IndexEntry derived;
    for (const Segment& seg : inherited) {
      if (scanned >= kForkIndexScan || (derived.title_fixed && !derived.preview.empty())) break;
      first.Bind(1, seg.session_id).Bind(2, seg.from_seq).Bind(3, seg.to_seq);
      first.Bind(4, kForkIndexScan - scanned);
      while (true) {
        ASSIGN_OR_RETURN(bool row, first.Step());
        if (!row) break;
        ++scanned;
        ApplyMessageToIndex(ParseRole(first.ColumnText(0)).value_or(Role::kUser),
                            first.ColumnText(1), &derived);
      }
      first.Reset();
    }
    static_cast<TitleAndPreview&>(entry) =
        ForkTitleAndPreview(parent.title, at_seq, title, derived);
  }

  ASSIGN_OR_RETURN(Statement insert,
                   db_->Prepare("INSERT OR IGNORE INTO sessions (id, title, title_fixed, preview, "
                                "created_ms, updated_ms, message_count, last_seq, metadata, "
                                "parent_id, fork_seq) "
                                "VALUES (?1, ?2, ?3, ?4, ?5, ?5, ?6, ?7, ?8, ?9, ?7)"));
  insert.Bind(1, id).Bind(2, entry.title).Bind(3, int64_t{entry.title_fixed});
  insert.Bind(4, entry.preview).Bind(5, child.created_ms).Bind(6, entry.message_count);
  insert.Bind(7, at_seq).Bind(8, metadata).Bind(9, parent.id);
  RETURN_IF_ERROR(insert.Run());
  if (db_->Changes() == 0) return Err(SessionIdTaken(id));
  RETURN_IF_ERROR(txn.Commit());
  return LoadSessionLocked(id);
}

// ---- Events beyond messages -------------------------------------------------------

Result<Event> SqliteStore::InsertEventRecord(std::string_view session_id, EventType type,
                                             std::string_view text, std::string_view body) {
  std::lock_guard lock(mu_);
  ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(db_.get()));
  ASSIGN_OR_RETURN(Session session, LoadSessionLocked(session_id));
  Event e;
  e.id = NewId();
  e.session_id = session.id;
  e.seq = session.last_seq + 1;
  e.ts_ms = Now();
  e.type = type;
  {
    ASSIGN_OR_RETURN(Statement insert,
                     db_->Prepare("INSERT INTO events (session_id, seq, id, ts_ms, type, text, "
                                  "body) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)"));
    insert.Bind(1, e.session_id).Bind(2, e.seq).Bind(3, e.id).Bind(4, e.ts_ms);
    insert.Bind(5, EventTypeName(type)).Bind(6, text).Bind(7, body);
    RETURN_IF_ERROR(insert.Run());
  }
  ASSIGN_OR_RETURN(Statement update, db_->Prepare("UPDATE sessions SET last_seq = ?2, "
                                                  "updated_ms = ?3 WHERE id = ?1"));
  update.Bind(1, e.session_id).Bind(2, e.seq).Bind(3, e.ts_ms);
  RETURN_IF_ERROR(update.Run());
  RETURN_IF_ERROR(txn.Commit());
  return e;
}

Result<std::optional<Event>> SqliteStore::FindLastCompaction(std::string_view session_id,
                                                             int64_t upto_seq) {
  std::vector<Event> found;
  {
    std::lock_guard lock(mu_);
    ASSIGN_OR_RETURN(std::vector<Segment> all, HistoryLocked(session_id));
    const std::vector<Segment> segments = SegmentsUpTo(std::move(all), upto_seq);
    // The planner would rather walk the primary key back through the whole
    // log; the partial index holds only the few events that are not messages.
    ASSIGN_OR_RETURN(Statement s,
                     db_->Prepare("SELECT " EVENT_COLUMNS " FROM events INDEXED BY "
                                  "events_not_messages WHERE session_id = ?1 AND seq BETWEEN ?2 "
                                  "AND ?3 AND type <> 'message' AND type = 'compaction' "
                                  "ORDER BY seq DESC LIMIT 1"));
    for (auto it = segments.rbegin(); it != segments.rend() && found.empty(); ++it) {
      s.Bind(1, it->session_id).Bind(2, it->from_seq).Bind(3, it->to_seq);
      RETURN_IF_ERROR(ReadEventRows(s, &found));
      s.Reset();
    }
  }
  if (found.empty()) return std::optional<Event>();
  return std::optional<Event>(std::move(found.front()));
}

Result<std::optional<Event>> SqliteStore::FindResourceMessage(std::string_view session_id,
                                                              std::string_view resource_id) {
  std::vector<Event> candidates;
  {
    std::lock_guard lock(mu_);
    ASSIGN_OR_RETURN(std::vector<Segment> segments, HistoryLocked(session_id));
    ASSIGN_OR_RETURN(Statement s, db_->Prepare("SELECT " EVENT_COLUMNS " FROM events "
                                               "WHERE session_id = ?1 AND seq BETWEEN ?2 AND ?3 "
                                               "AND type = 'message' AND body IS NOT NULL "
                                               "AND instr(body, ?4) > 0 ORDER BY seq"));
    for (const Segment& seg : segments) {
      s.Bind(1, seg.session_id).Bind(2, seg.from_seq).Bind(3, seg.to_seq).Bind(4, resource_id);
      RETURN_IF_ERROR(ReadEventRows(s, &candidates));
      s.Reset();
    }
  }
  for (Event& e : candidates) {
    for (const Part& p : e.message.parts) {
      if (p.resource && p.resource->resource_id == resource_id) {
        return std::optional<Event>(std::move(e));
      }
    }
  }
  return std::optional<Event>();
}

Status SqliteStore::RemoveUnreferencedBlobsLocked(const std::vector<std::string>& candidates,
                                                  PruneReport* report) {
  if (candidates.empty()) return Status::Ok();
  // As in CollectGarbage: deleting under the write lock cannot strand an
  // append, which re-checks its blobs inside its own transaction.
  ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(db_.get()));
  ASSIGN_OR_RETURN(Statement referenced,
                   db_->Prepare("SELECT 1 FROM blob_refs WHERE sha256 = ?1 LIMIT 1"));
  for (const std::string& sha : candidates) {
    referenced.Bind(1, sha);
    ASSIGN_OR_RETURN(bool used, referenced.Step());
    referenced.Reset();
    if (used) continue;
    auto info = blobs_->Stat(sha);
    if (!info) continue;
    if (Status s = blobs_->Remove(sha); !s.ok()) {
      return Status(s.code(),
                    "the messages were pruned, but a blob could not be deleted (`sessiondb gc` "
                    "deletes it later): " +
                        s.message());
    }
    ++report->blobs_deleted;
    report->bytes_freed += info->size;
  }
  return txn.Commit();
}

Result<PruneReport> SqliteStore::PruneCompaction(std::string_view session_id,
                                                 int64_t compaction_seq) {
  PruneReport report;
  std::lock_guard lock(mu_);
  // Erasure means the words leave the file too: secure_delete zeroes freed
  // space in the pages we rewrite, and the checkpoint below drops the WAL
  // frames that still hold the old pages.
  RETURN_IF_ERROR(db_->Exec("PRAGMA secure_delete = ON"));
  struct SecureDeleteOff {
    Database* db;
    ~SecureDeleteOff() { (void)db->Exec("PRAGMA secure_delete = OFF"); }
  } restore{db_.get()};
  ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(db_.get()));
  ASSIGN_OR_RETURN(Session session, LoadSessionLocked(session_id));
  std::vector<Event> found;
  {
    ASSIGN_OR_RETURN(Statement s, db_->Prepare("SELECT " EVENT_COLUMNS " FROM events "
                                               "WHERE session_id = ?1 AND seq = ?2"));
    s.Bind(1, session.id).Bind(2, compaction_seq);
    RETURN_IF_ERROR(ReadEventRows(s, &found));
  }
  if (found.empty() || found.front().type != EventType::kCompaction) {
    return Err(Status::InvalidArgument("event " + std::to_string(compaction_seq) + " of session " +
                                       session.id +
                                       " is not a compaction this session recorded; "
                                       "`sessiondb events` lists them"));
  }
  const Compaction& c = found.front().compaction;
  // Only this session's own events: what it inherited belongs to its parent.
  const int64_t lo = std::max(c.from_seq, session.fork_seq + 1);
  const int64_t hi = c.to_seq;

  std::vector<std::string> unreferenced;
  {
    ASSIGN_OR_RETURN(Statement shas,
                     db_->Prepare("SELECT DISTINCT sha256 FROM blob_refs "
                                  "WHERE session_id = ?1 AND seq BETWEEN ?2 AND ?3"));
    shas.Bind(1, session.id).Bind(2, lo).Bind(3, hi);
    while (true) {
      ASSIGN_OR_RETURN(bool row, shas.Step());
      if (!row) break;
      unreferenced.emplace_back(shas.ColumnText(0));
    }
  }
  {
    ASSIGN_OR_RETURN(Statement rows, db_->Prepare("SELECT seq, role, body, text FROM events "
                                                  "WHERE session_id = ?1 AND seq BETWEEN ?2 AND ?3 "
                                                  "AND type = 'message'"));
    rows.Bind(1, session.id).Bind(2, lo).Bind(3, hi);
    std::vector<std::pair<int64_t, Role>> targets;
    std::vector<std::pair<Role, std::string>> texts;
    while (true) {
      ASSIGN_OR_RETURN(bool row, rows.Step());
      if (!row) break;
      Message stored;
      std::optional<std::string_view> body;
      if (!rows.ColumnIsNull(2)) body = rows.ColumnText(2);
      RETURN_IF_ERROR(DecodeMessageBody(body, rows.ColumnText(3), &stored));
      if (stored.pruned) continue;  // pruned by an earlier compaction
      const Role role = ParseRole(rows.ColumnText(1)).value_or(Role::kUser);
      targets.emplace_back(rows.ColumnInt(0), role);
      texts.emplace_back(role, std::string(rows.ColumnText(3)));
    }
    rows.Reset();
    std::string title = session.title;
    std::string preview = session.preview;
    ScrubPrunedTexts(texts, c.summary, &title, &preview);
    if (title != session.title || preview != session.preview) {
      ASSIGN_OR_RETURN(Statement index, db_->Prepare("UPDATE sessions SET title = ?2, "
                                                     "preview = ?3 WHERE id = ?1"));
      index.Bind(1, session.id).Bind(2, title).Bind(3, preview);
      RETURN_IF_ERROR(index.Run());
    }
    ASSIGN_OR_RETURN(Statement stub, db_->Prepare("UPDATE events SET text = '', body = ?3 "
                                                  "WHERE session_id = ?1 AND seq = ?2"));
    for (const auto& [seq, role] : targets) {
      Message pruned;
      pruned.role = role;
      pruned.pruned = true;
      ASSIGN_OR_RETURN(std::optional<std::string> body, EncodeMessageBody(pruned));
      stub.Bind(1, session.id).Bind(2, seq).BindOptional(3, body);
      RETURN_IF_ERROR(stub.Run());
      ++report.events_pruned;
    }
  }
  {
    ASSIGN_OR_RETURN(Statement drop, db_->Prepare("DELETE FROM blob_refs WHERE session_id = ?1 "
                                                  "AND seq BETWEEN ?2 AND ?3"));
    drop.Bind(1, session.id).Bind(2, lo).Bind(3, hi);
    RETURN_IF_ERROR(drop.Run());
  }
  RETURN_IF_ERROR(txn.Commit());
  // The blob files go only after the commit: removed before it, a crash or a
  // failed commit would leave the messages unpruned and their images gone.
  // A crash between the two leaves unreferenced blobs, which gc collects.
  RETURN_IF_ERROR(RemoveUnreferencedBlobsLocked(unreferenced, &report));
  // Best effort: a reader of another process may hold old frames a while
  // longer; the next checkpoint then drops them.
  (void)db_->Exec("PRAGMA wal_checkpoint(TRUNCATE)");
  return report;
}

// ---- Usage ------------------------------------------------------------------------

Result<UsageReport> SqliteStore::LoadUsage(std::string_view session_id) {
  std::lock_guard lock(mu_);
  RETURN_IF_ERROR(LoadSessionLocked(session_id));
  ASSIGN_OR_RETURN(Statement s,
                   db_->Prepare("SELECT provider, model, turns, input_tokens, output_tokens, "
                                "cached_tokens, reasoning_tokens FROM usage_totals "
                                "WHERE session_id = ?1 ORDER BY provider, model"));
  s.Bind(1, session_id);
  UsageReport report;
  while (true) {
    ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) break;
    ModelUsage& m = report.by_model.emplace_back();
    m.provider = s.ColumnText(0);
    m.model = s.ColumnText(1);
    m.turns = s.ColumnInt(2);
    m.usage = {s.ColumnInt(3), s.ColumnInt(4), s.ColumnInt(5), s.ColumnInt(6)};
    report.turns = SaturatingAdd(report.turns, m.turns);
    report.total = SaturatingAdd(report.total, m.usage);
  }
  return report;
}

// ---- Drafts -----------------------------------------------------------------------

Status SqliteStore::InsertDraft(const Draft& d) {
  std::lock_guard lock(mu_);
  RETURN_IF_ERROR(LoadSessionLocked(d.session_id));
  ASSIGN_OR_RETURN(Statement s, db_->Prepare("INSERT INTO drafts (id, session_id, role, model, "
                                             "created_ms, updated_ms) "
                                             "VALUES (?1, ?2, ?3, ?4, ?5, ?6)"));
  s.Bind(1, d.id).Bind(2, d.session_id).Bind(3, RoleName(d.role)).Bind(4, d.model);
  s.Bind(5, d.created_ms).Bind(6, d.updated_ms);
  return s.Run();
}

Status SqliteStore::UpdateDraft(const Draft& draft, int64_t updated_ms) {
  std::lock_guard lock(mu_);
  ASSIGN_OR_RETURN(Statement s, db_->Prepare("UPDATE drafts SET text = ?2, reasoning = ?3, "
                                             "updated_ms = ?4 WHERE id = ?1"));
  s.Bind(1, draft.id).Bind(2, draft.text).Bind(3, draft.reasoning).Bind(4, updated_ms);
  RETURN_IF_ERROR(s.Run());
  if (db_->Changes() == 0) return store::DraftNotFound(draft.id);
  return Status::Ok();
}

Result<std::vector<Draft>> SqliteStore::SelectDrafts(std::string_view session_id) {
  std::lock_guard lock(mu_);
  RETURN_IF_ERROR(LoadSessionLocked(session_id));
  ASSIGN_OR_RETURN(Statement s, db_->Prepare("SELECT " DRAFT_COLUMNS " FROM drafts "
                                             "WHERE session_id = ?1 ORDER BY created_ms, id"));
  s.Bind(1, session_id);
  std::vector<Draft> out;
  while (true) {
    ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) break;
    out.push_back(DraftFromRow(s));
  }
  return out;
}

Result<Draft> SqliteStore::LoadDraft(std::string_view draft_id) {
  std::lock_guard lock(mu_);
  ASSIGN_OR_RETURN(Statement s, db_->Prepare("SELECT " DRAFT_COLUMNS " FROM drafts WHERE id = ?1"));
  s.Bind(1, draft_id);
  ASSIGN_OR_RETURN(bool row, s.Step());
  if (!row) return Err(store::DraftNotFound(draft_id));
  return DraftFromRow(s);
}

Status SqliteStore::RemoveDraft(std::string_view draft_id) {
  std::lock_guard lock(mu_);
  ASSIGN_OR_RETURN(Statement s, db_->Prepare("DELETE FROM drafts WHERE id = ?1"));
  s.Bind(1, draft_id);
  RETURN_IF_ERROR(s.Run());
  if (db_->Changes() == 0) return store::DraftNotFound(draft_id);
  return Status::Ok();
}

}  // namespace sessiondb::sqlite
