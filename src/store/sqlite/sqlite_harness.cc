// The agent harness on the embedded store: fork histories, events beyond
// messages, usage totals and drafts (forks and prunes run in the front over
// sqlite_write_transaction.cc). Schema: migration
// 1 -> 2 in schema.cc.
#include <algorithm>
#include <array>
#include <cstddef>
#include <nlohmann/json.hpp>
#include <span>
#include <string>

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

namespace {

// Decodes every row of `s` onto `*out`, each in place by `decode` (an Event
// or a Message is hundreds of bytes of members, which a move per row would
// copy). The columns are EVENT_COLUMNS, or MESSAGE_COLUMNS when `with_type`
// is false (the same, less `type`).
template <typename T, typename Decode>
Status DecodeRows(Statement& s, bool with_type, std::vector<T>* out, Decode decode) {
  const int t = with_type ? 1 : 0;  // the columns after `type` move by one
  while (true) {
    ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) return Status::Ok();
    EventRow r;
    r.seq = s.ColumnInt(0);
    r.id = s.ColumnText(1);
    r.ts_ms = s.ColumnInt(2);
    if (with_type) r.type = s.ColumnText(3);
    r.role = s.ColumnText(3 + t);
    r.text = s.ColumnText(4 + t);
    if (!s.ColumnIsNull(5 + t)) r.body = s.ColumnText(5 + t);
    r.session_id = s.ColumnText(6 + t);
    if (Status decoded = decode(r, &out->emplace_back()); !decoded.ok()) {
      out->pop_back();
      return decoded;
    }
  }
}

}  // namespace

Status SqliteStore::ReadEventRows(Statement& s, std::vector<Event>* out) {
  return DecodeRows(s, /*with_type=*/true, out, DecodeEventRowInto);
}

Status SqliteStore::ReadMessageRows(Statement& s, std::vector<Message>* out) {
  return DecodeRows(s, /*with_type=*/false, out, DecodeMessageRowInto);
}

namespace {

// The statement of a history read of one segment: ?1 session, ?2..?3 seqs,
// ?4 limit. Built once: the database caches statements by their text's address.
const char* HistorySql(store::HistoryFilter filter, bool newest_first) {
  static const std::array<std::string, 8> kSql = [] {
    std::array<std::string, 8> sql;
    for (size_t f = 0; f < 4; ++f) {
      for (size_t newest = 0; newest < 2; ++newest) {
        const auto filter = static_cast<store::HistoryFilter>(f);
        std::string& q = sql[f * 2 + newest];
        q = "SELECT " EVENT_COLUMNS " FROM events";
        if (filter == store::HistoryFilter::kRewinds ||
            filter == store::HistoryFilter::kNotMessages) {
          // The planner would rather walk the primary key back through the
          // whole log; the partial index holds only the few events that are
          // not messages.
          q += " INDEXED BY events_not_messages WHERE session_id = ?1 AND seq BETWEEN ?2 AND ?3 "
               "AND type <> 'message'";
        } else {
          q += " WHERE session_id = ?1 AND seq BETWEEN ?2 AND ?3";
        }
        if (filter == store::HistoryFilter::kMessages) q += " AND type = 'message'";
        if (filter == store::HistoryFilter::kRewinds) q += " AND type = 'rewind'";
        q += newest ? " ORDER BY seq DESC LIMIT ?4" : " ORDER BY seq LIMIT ?4";
      }
    }
    return sql;
  }();
  return kSql[static_cast<size_t>(filter) * 2 + (newest_first ? 1 : 0)].c_str();
}

// The same for ReadMessages: the messages of one segment, MESSAGE_COLUMNS.
const char* MessageHistorySql(bool newest_first) {
  static constexpr const char* kSql[2] = {
      "SELECT " MESSAGE_COLUMNS
      " FROM events WHERE session_id = ?1 AND seq BETWEEN ?2 AND ?3 "
      "AND type = 'message' ORDER BY seq LIMIT ?4",
      "SELECT " MESSAGE_COLUMNS
      " FROM events WHERE session_id = ?1 AND seq BETWEEN ?2 AND ?3 "
      "AND type = 'message' ORDER BY seq DESC LIMIT ?4",
  };
  return kSql[newest_first ? 1 : 0];
}

// How many rows a read of `segments` oldest first may return: at most one
// per seq of the range (fewer when only messages are read, which are nearly
// all of a log), capped so a huge range reserves no more than 2^20.
size_t ExpectedRows(std::span<const Segment> segments, const store::HistoryRead& read) {
  const int64_t expected = std::clamp<int64_t>(
      std::min(segments.back().to_seq, read.to_seq) - std::max<int64_t>(read.from_seq, 1) + 1, 0,
      int64_t{1} << 20);
  return static_cast<size_t>(read.limit < 0 ? expected : std::min(read.limit, expected));
}

// Reads the part of each segment of `segments` that `read` covers through
// `s` (a HistorySql or MessageHistorySql statement), in the order `read`
// asks, onto `*out` by `read_rows`, until read.limit rows have been added.
// Newest first, the rows added come back in seq order all the same.
template <typename T, typename ReadRows>
Status ReadSegments(std::span<const Segment> segments, const store::HistoryRead& read, Statement& s,
                    std::vector<T>* out, ReadRows read_rows) {
  const size_t first = out->size();
  const auto added = [&] { return static_cast<int64_t>(out->size() - first); };
  const auto full = [&] { return read.limit >= 0 && added() >= read.limit; };
  // Reads the part of `seg` the request covers, up to what `limit` still allows.
  auto read_segment = [&](const Segment& seg) -> Status {
    const int64_t lo = std::max(seg.from_seq, read.from_seq);
    const int64_t hi = std::min(seg.to_seq, read.to_seq);
    if (lo > hi) return Status::Ok();
    s.Bind(1, seg.session_id).Bind(2, lo).Bind(3, hi);
    s.Bind(4, read.limit < 0 ? int64_t{-1} : read.limit - added());
    RETURN_IF_ERROR(read_rows(s, out));
    s.Reset();
    return Status::Ok();
  };
  if (read.newest_first) {
    // Newest segment first, newest event first, until `limit` are found.
    for (auto it = segments.rbegin(); it != segments.rend() && !full(); ++it) {
      RETURN_IF_ERROR(read_segment(*it));
    }
    std::reverse(out->begin() + static_cast<std::ptrdiff_t>(first), out->end());
    return Status::Ok();
  }
  if (read.filter == store::HistoryFilter::kAll || read.filter == store::HistoryFilter::kMessages) {
    out->reserve(first + ExpectedRows(segments, read));
  }
  for (auto it = segments.begin(); it != segments.end() && !full(); ++it) {
    RETURN_IF_ERROR(read_segment(*it));
  }
  return Status::Ok();
}

}  // namespace

Result<std::vector<Event>> SqliteStore::ReadHistory(std::string_view session_id,
                                                    const store::HistoryRead& read) {
  std::vector<Event> events;
  std::lock_guard lock(mu_);
  ASSIGN_OR_RETURN(std::vector<Segment> segments, HistoryLocked(session_id));
  ASSIGN_OR_RETURN(Statement s, db_->Prepare(HistorySql(read.filter, read.newest_first)));
  RETURN_IF_ERROR(ReadSegments(
      segments, read, s, &events,
      [this](Statement& st, std::vector<Event>* out) { return ReadEventRows(st, out); }));
  return events;
}

Status SqliteStore::ReadMessages(std::string_view session_id, const store::HistoryRead& read,
                                 std::vector<Message>* out) {
  store::HistoryRead messages = read;
  messages.filter = store::HistoryFilter::kMessages;
  std::lock_guard lock(mu_);
  ASSIGN_OR_RETURN(std::vector<Segment> segments, HistoryLocked(session_id));
  ASSIGN_OR_RETURN(Statement s, db_->Prepare(MessageHistorySql(read.newest_first)));
  return ReadSegments(segments, messages, s, out, [this](Statement& st, std::vector<Message>* m) {
    return ReadMessageRows(st, m);
  });
}

namespace {

// Message rows copied out of SQLite, to be visited with the store's lock
// released: their text columns in one buffer (no allocation per row once it
// has grown), each row as offsets into it.
class MessageRowChunk {
 public:
  static constexpr int64_t kRows = 1024;

  void Clear() {
    bytes_.clear();
    rows_.clear();
  }
  // The current row of `s`, a MessageHistorySql statement.
  void Add(const Statement& s) {
    Row& r = rows_.emplace_back();
    r.seq = s.ColumnInt(0);
    r.id = Keep(s.ColumnText(1));
    r.ts_ms = s.ColumnInt(2);
    r.role = Keep(s.ColumnText(3));
    r.text = Keep(s.ColumnText(4));
    r.has_body = !s.ColumnIsNull(5);
    if (r.has_body) r.body = Keep(s.ColumnText(5));
  }
  int64_t size() const { return std::ssize(rows_); }
  int64_t last_seq() const { return rows_.back().seq; }
  // Row `i` as the codec reads it, viewing this chunk and `session_id`.
  EventRow Get(int64_t i, std::string_view session_id) const {
    const Row& r = rows_[static_cast<size_t>(i)];
    EventRow row{.id = View(r.id),
                 .session_id = session_id,
                 .seq = r.seq,
                 .ts_ms = r.ts_ms,
                 .role = View(r.role),
                 .text = View(r.text)};
    if (r.has_body) row.body = View(r.body);
    return row;
  }

 private:
  struct Span {
    size_t at = 0;
    size_t size = 0;
  };
  struct Row {
    int64_t seq = 0;
    int64_t ts_ms = 0;
    Span id, role, text, body;
    bool has_body = false;
  };
  Span Keep(std::string_view bytes) {
    const Span span{bytes_.size(), bytes.size()};
    bytes_.append(bytes);
    return span;
  }
  std::string_view View(Span span) const {
    return std::string_view(bytes_).substr(span.at, span.size);
  }

  std::string bytes_;
  std::vector<Row> rows_;
};

}  // namespace

Result<bool> SqliteStore::VisitMessages(std::string_view session_id, const store::HistoryRead& read,
                                        const MessageRowVisitor& visit) {
  std::vector<Segment> segments;
  {
    std::lock_guard lock(mu_);
    ASSIGN_OR_RETURN(segments, HistoryLocked(session_id));
  }
  MessageRowChunk chunk;
  Message built;  // the one message that needed building, reused
  for (const Segment& seg : segments) {
    int64_t lo = std::max(seg.from_seq, read.from_seq);
    const int64_t hi = std::min(seg.to_seq, read.to_seq);
    while (lo <= hi) {
      chunk.Clear();
      {
        std::lock_guard lock(mu_);
        ASSIGN_OR_RETURN(Statement s, db_->Prepare(MessageHistorySql(/*newest_first=*/false)));
        s.Bind(1, seg.session_id).Bind(2, lo).Bind(3, hi).Bind(4, MessageRowChunk::kRows);
        while (true) {
          ASSIGN_OR_RETURN(bool row, s.Step());
          if (!row) break;
          chunk.Add(s);
        }
        s.Reset();
      }
      for (int64_t i = 0; i < chunk.size(); ++i) {
        const EventRow row = chunk.Get(i, seg.session_id);
        MessageView view{
            .id = row.id, .session_id = row.session_id, .seq = row.seq, .ts_ms = row.ts_ms};
        Message* made = nullptr;
        if (!row.body) {  // one text part (DecodeMessageBody): nothing to build
          Result<Role> role = ParseRole(row.role);
          if (!role) {
            return Err(Status::Corruption("message " + std::string(row.id) + ": " +
                                          role.error().message()));
          }
          view.role = *role;
          view.text = row.text;
        } else {
          built = Message();
          RETURN_IF_ERROR(DecodeMessageRowInto(row, &built));
          view.role = built.role;
          view.message = made = &built;
        }
        if (!visit(view, made)) return false;
      }
      if (chunk.size() < MessageRowChunk::kRows) break;
      lo = chunk.last_seq() + 1;
    }
  }
  return true;
}

// ---- Events beyond messages -------------------------------------------------------

Result<Event> SqliteStore::InsertEventRecord(std::string_view session_id, EventType type,
                                             std::string_view text, std::string_view body) {
  ASSIGN_OR_RETURN(std::optional<Event> e,
                   InsertEventRecordGuarded(session_id, type, text, body, std::nullopt));
  return std::move(*e);
}

Result<std::optional<Event>> SqliteStore::InsertGuardedEventRecord(
    std::string_view session_id, EventType type, std::string_view text, std::string_view body,
    const store::RecordGuard& guard) {
  return InsertEventRecordGuarded(session_id, type, text, body, guard);
}

Result<std::optional<Event>> SqliteStore::InsertEventRecordGuarded(
    std::string_view session_id, EventType type, std::string_view text, std::string_view body,
    const std::optional<store::RecordGuard>& guard) {
  std::lock_guard lock(mu_);
  ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(db_.get()));
  ASSIGN_OR_RETURN(Session session, LoadSessionLocked(session_id));
  if (guard && guard->only_at_last_seq && session.last_seq != *guard->only_at_last_seq) {
    return std::optional<Event>();
  }
  if (guard && session.last_seq > guard->no_rewind_after) {
    ASSIGN_OR_RETURN(Statement later,
                     db_->Prepare("SELECT 1 FROM events INDEXED BY events_not_messages "
                                  "WHERE session_id = ?1 AND seq > ?2 AND type <> 'message' "
                                  "AND type = 'rewind' LIMIT 1"));
    later.Bind(1, session.id).Bind(2, guard->no_rewind_after);
    ASSIGN_OR_RETURN(bool rewound, later.Step());
    if (rewound) return std::optional<Event>();
  }
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
  RETURN_IF_ERROR(RecordDocumentsLocked(e.session_id, e.seq, e.seq));
  ASSIGN_OR_RETURN(Statement update,
                   db_->Prepare("UPDATE sessions SET last_seq = ?2, updated_ms = ?3, "
                                "message_count = coalesce(?4, message_count) WHERE id = ?1"));
  update.Bind(1, e.session_id).Bind(2, e.seq).Bind(3, e.ts_ms);
  if (guard) update.Bind(4, guard->message_count);
  RETURN_IF_ERROR(update.Run());
  RETURN_IF_ERROR(txn.Commit());
  return std::optional<Event>(std::move(e));
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

// ---- Usage ------------------------------------------------------------------------

Result<UsageReport> SqliteStore::LoadUsage(std::string_view session_id) {
  std::lock_guard lock(mu_);
  RETURN_IF_ERROR(LoadSessionLocked(session_id));
  ASSIGN_OR_RETURN(
      Statement s,
      db_->Prepare("SELECT provider, model, turns, input_tokens, output_tokens, "
                   "cached_tokens, reasoning_tokens, cache_write_tokens "
                   "FROM usage_totals WHERE session_id = ?1 ORDER BY provider, model"));
  s.Bind(1, session_id);
  UsageReport report;
  while (true) {
    ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) break;
    ModelUsage& m = report.by_model.emplace_back();
    m.provider = s.ColumnText(0);
    m.model = s.ColumnText(1);
    m.turns = s.ColumnInt(2);
    m.usage = {s.ColumnInt(3), s.ColumnInt(4), s.ColumnInt(5), s.ColumnInt(6), s.ColumnInt(7)};
    report.turns = SaturatingAdd(report.turns, m.turns);
    report.total = SaturatingAdd(report.total, m.usage);
  }
  return report;
}

Result<store::UsageDays> SqliteStore::LoadUsageDays(const store::UsageDaysFilter& filter) {
  // One statement for any list of ids (the statement cache is keyed by the
  // SQL's address): the ids as a JSON array, read by json_each.
  static constexpr const char* kSql =
      "SELECT u.session_id, u.day, u.provider, u.model, u.turns, u.input_tokens, "
      "u.output_tokens, u.cached_tokens, u.reasoning_tokens, u.cache_write_tokens, s.metadata "
      "FROM usage_days u JOIN sessions s ON s.id = u.session_id WHERE s.deleted = 0 "
      "AND (?1 = '' OR u.day >= ?1) AND (?2 = '' OR u.day <= ?2) "
      "AND (?3 = 0 OR u.session_id IN (SELECT value FROM json_each(?4))) "
      "ORDER BY u.session_id, u.day, u.provider, u.model";
  const std::string ids = nlohmann::json(filter.session_ids).dump();
  std::lock_guard lock(mu_);
  ASSIGN_OR_RETURN(Statement s, db_->Prepare(kSql));
  s.Bind(1, filter.since).Bind(2, filter.until);
  s.Bind(3, int64_t{!filter.session_ids.empty()}).Bind(4, ids);
  store::UsageDays out;
  while (true) {
    ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) break;
    store::UsageDayRow& r = out.rows.emplace_back();
    r.session_id = s.ColumnText(0);
    r.day = s.ColumnText(1);
    r.provider = s.ColumnText(2);
    r.model = s.ColumnText(3);
    r.turns = s.ColumnInt(4);
    r.usage = {s.ColumnInt(5), s.ColumnInt(6), s.ColumnInt(7), s.ColumnInt(8), s.ColumnInt(9)};
    if (!out.metadata_of.contains(r.session_id))
      out.metadata_of.emplace(r.session_id, s.ColumnText(10));
  }
  return out;
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
