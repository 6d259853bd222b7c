// The agent harness on this backend: a session's history through its fork
// ancestors, events that are not messages, usage totals and drafts (forks,
// prunes and removals run in the front over pg_write_transaction.cc).
//
// A fork copies nothing: its row names its parent and the seq it forked at,
// and its history is read as ranges of its ancestors' logs (segments), each a
// range scan of the events primary key.
#include <algorithm>
#include <array>
#include <cstddef>
#include <set>
#include <utility>

#include "core/event_codec.h"
#include "core/message_codec.h"
#include "core/search_text.h"
#include "core/text_rules.h"
#include "store/postgres/pg_search_docs.h"
#include "store/postgres/pg_store_internal.h"
#include "store/store_common.h"

namespace sessiondb::postgres {
namespace {

// The columns OpenedEventRow::Read reads, in its order.
#define SESSIONDB_EVENT_COLUMNS "id, session_id, seq, ts_ms, type, role, text, body"

// An events row whose text and body are opened: `row` views `r`, or, when
// sealed, the opened values this holds (so it is neither copied nor moved).
class OpenedEventRow {
 public:
  OpenedEventRow(const OpenedEventRow&) = delete;
  OpenedEventRow& operator=(const OpenedEventRow&) = delete;
  OpenedEventRow() = default;

  // Reads row `row` of `r` (SESSIONDB_EVENT_COLUMNS); kCorruption naming the
  // event's text or body when it does not open.
  Status Read(const PgSealer& sealer, const PgResult& r, int row) {
    row_ = EventRow{.id = r.Text(row, 0),
                    .session_id = r.Text(row, 1),
                    .seq = r.Int(row, 2),
                    .ts_ms = r.Int(row, 3),
                    .type = r.Text(row, 4),
                    .role = r.Text(row, 5),
                    .text = r.Text(row, 6)};
    if (!r.IsNull(row, 7)) row_.body = r.Text(row, 7);
    if (!sealer.encrypted()) return Status::Ok();
    ASSIGN_OR_RETURN(text_, sealer.OpenText(PgColumn::kEventText, row_.id, row_.text));
    row_.text = text_;
    if (row_.body) {
      ASSIGN_OR_RETURN(body_, sealer.OpenText(PgColumn::kEventBody, row_.id, *row_.body));
      row_.body = body_;
    }
    return Status::Ok();
  }
  const EventRow& row() const { return row_; }

 private:
  EventRow row_;
  std::string text_, body_;
};

// The query that reads one segment: $1 namespace, $2 session, seqs $3..$4,
// at most $5 rows (NULL: all).
const char* SegmentSql(EventFilter filter, bool newest_first) {
  static const std::array<std::string, 10> kSql = [] {
    static constexpr const char* kFilters[] = {
        "",
        " AND type = 'message'",
        // The first condition lets the planner use the index of non-messages.
        " AND type <> 'message' AND type = 'compaction'",
        " AND type <> 'message' AND type = 'rewind'",
        " AND type <> 'message'",
    };
    std::array<std::string, 10> sql;
    for (size_t f = 0; f < 5; ++f) {
      for (size_t newest = 0; newest < 2; ++newest) {
        sql[f * 2 + newest] = std::string("SELECT " SESSIONDB_EVENT_COLUMNS
                                          " FROM events WHERE namespace = $1 AND "
                                          "session_id = $2 AND seq >= $3 AND seq <= $4") +
                              kFilters[f] + (newest ? " ORDER BY seq DESC" : " ORDER BY seq") +
                              " LIMIT $5";
      }
    }
    return sql;
  }();
  return kSql[static_cast<size_t>(filter) * 2 + (newest_first ? 1 : 0)].c_str();
}

Result<Draft> DraftFromRow(const PgSealer& sealer, const PgResult& r, int row) {
  Draft d;
  d.id = r.Text(row, 0);
  d.session_id = r.Text(row, 1);
  d.role = ParseRole(r.Text(row, 2)).value_or(Role::kAssistant);
  ASSIGN_OR_RETURN(d.text, sealer.OpenText(PgColumn::kDraftText, d.id, r.Text(row, 3)));
  ASSIGN_OR_RETURN(d.reasoning, sealer.OpenText(PgColumn::kDraftReasoning, d.id, r.Text(row, 4)));
  d.model = r.Text(row, 5);
  d.created_ms = r.Int(row, 6);
  d.updated_ms = r.Int(row, 7);
  return d;
}

}  // namespace

// ---- History ------------------------------------------------------------------

Result<std::vector<Segment>> ResolveHistory(PgConnection& c, const std::string& ns,
                                            std::string_view session_id) {
  // The session, its parent, its parent's parent...: deleted ancestors
  // included, since a fork still reads what it inherited from them.
  PgParams p;
  p.Add(ns).Add(session_id);
  ASSIGN_OR_RETURN(
      PgResult r,
      c.Exec("WITH RECURSIVE chain (id, parent_id, fork_seq, last_seq, depth) AS ("
             "SELECT id, parent_id, fork_seq, last_seq, 0 FROM sessions "
             "WHERE namespace = $1 AND id = $2 AND NOT deleted "
             "UNION ALL SELECT s.id, s.parent_id, s.fork_seq, s.last_seq, chain.depth + 1 "
             "FROM chain JOIN sessions s ON s.namespace = $1 AND s.id = chain.parent_id "
             "WHERE chain.depth < 100000) "
             "SELECT id, coalesce(parent_id, ''), fork_seq, last_seq FROM chain ORDER BY depth",
             p));
  if (r.rows() == 0) return Err(SessionNotFound(session_id));
  std::vector<ChainLink> chain;
  chain.reserve(static_cast<size_t>(r.rows()));
  for (int i = 0; i < r.rows(); ++i) {
    chain.push_back(
        {std::string(r.Text(i, 0)), std::string(r.Text(i, 1)), r.Int(i, 2), r.Int(i, 3)});
  }
  if (!chain.back().parent_id.empty()) {
    return Err(Status::Corruption("session " + chain.back().id + " was forked from " +
                                  chain.back().parent_id +
                                  ", which is gone; run `sessiondb verify`"));
  }
  return HistorySegments(chain);
}

namespace {

// Rows a history read asks the server for at once; the seq's column in
// SESSIONDB_EVENT_COLUMNS.
constexpr int64_t kHistoryPageRows = 2000;
constexpr int kSeqColumn = 2;

// Reads the rows of `history` that `query` asks for onto `*out` (after what
// it holds), each decoded in place by `decode(row, element)`: an Event or a
// Message is hundreds of bytes of members, which a copy per row would move.
template <typename T, typename Decode>
Status ReadSegmentRows(PgConnection& c, const std::string& ns, const std::vector<Segment>& history,
                       const HistoryQuery& query, std::vector<T>* out, Decode decode) {
  const size_t first = out->size();
  const auto added = [&] { return static_cast<int64_t>(out->size() - first); };
  const auto full = [&] { return query.limit >= 0 && added() >= query.limit; };
  const char* sql = SegmentSql(query.filter, query.newest_first);
  auto read = [&](const Segment& segment) -> Status {
    int64_t lo = std::max(segment.from_seq, query.from_seq);
    int64_t hi = std::min(segment.to_seq, query.upto_seq);
    // A page at a time: the planner then always walks the primary key in
    // order (for a whole 10,000-message session it chose a scan and a sort
    // spilled to disk, 3 to 7 times slower), and a long session never sits
    // in one result in memory. The next page is asked for before this one
    // is decoded, so the server reads it meanwhile (a page's decoding is
    // about a third of its time).
    auto ask = [&](int64_t already) -> Result<int64_t> {
      if (lo > hi || (query.limit >= 0 && already >= query.limit)) return int64_t{0};
      const int64_t want =
          query.limit < 0 ? kHistoryPageRows : std::min(kHistoryPageRows, query.limit - already);
      PgParams p;
      p.Add(ns).Add(segment.session_id).Add(lo).Add(hi).Add(want);
      RETURN_IF_ERROR(c.Send(sql, p));
      return want;
    };
    // A page still in flight when a row fails to decode is taken and
    // dropped, so the connection is ready for what comes next.
    struct Drain {
      PgConnection& c;
      ~Drain() {
        if (c.in_flight()) (void)c.Receive();
      }
    } drain{c};
    ASSIGN_OR_RETURN(int64_t asked, ask(added()));
    while (asked > 0) {
      ASSIGN_OR_RETURN(PgResult r, c.Receive());
      const int64_t got = r.rows();
      const int64_t was_asked = std::exchange(asked, 0);
      if (got == was_asked) {
        const int64_t last_seq = r.Int(r.rows() - 1, kSeqColumn);
        if (query.newest_first) {
          hi = last_seq - 1;
        } else {
          lo = last_seq + 1;
        }
        ASSIGN_OR_RETURN(asked, ask(added() + got));
      }
      out->reserve(out->size() + static_cast<size_t>(got));
      OpenedEventRow row;
      for (int i = 0; i < got; ++i) {
        RETURN_IF_ERROR(row.Read(c.sealer(), r, i));
        if (Status decoded = decode(row.row(), &out->emplace_back()); !decoded.ok()) {
          out->pop_back();
          return decoded;
        }
      }
    }
    return Status::Ok();
  };
  if (query.newest_first) {
    for (auto it = history.rbegin(); it != history.rend() && !full(); ++it) {
      RETURN_IF_ERROR(read(*it));
    }
    std::reverse(out->begin() + static_cast<std::ptrdiff_t>(first), out->end());
  } else {
    for (auto it = history.begin(); it != history.end() && !full(); ++it) {
      RETURN_IF_ERROR(read(*it));
    }
  }
  return Status::Ok();
}

}  // namespace

Result<std::vector<Event>> ReadSegments(PgConnection& c, const std::string& ns,
                                        const std::vector<Segment>& history,
                                        const HistoryQuery& query) {
  std::vector<Event> out;
  RETURN_IF_ERROR(ReadSegmentRows(c, ns, history, query, &out, DecodeEventRowInto));
  return out;
}

Result<std::vector<Event>> PgStore::ReadHistory(std::string_view session_id,
                                                const store::HistoryRead& read) {
  EventFilter filter = EventFilter::kAll;
  switch (read.filter) {
    case store::HistoryFilter::kAll:
      break;
    case store::HistoryFilter::kMessages:
      filter = EventFilter::kMessages;
      break;
    case store::HistoryFilter::kRewinds:
      filter = EventFilter::kRewinds;
      break;
    case store::HistoryFilter::kNotMessages:
      filter = EventFilter::kNotMessages;
      break;
  }
  return QueryHistory(session_id, {.from_seq = read.from_seq,
                                   .upto_seq = read.to_seq,
                                   .limit = read.limit,
                                   .filter = filter,
                                   .newest_first = read.newest_first});
}

Result<std::vector<Event>> PgStore::QueryHistory(std::string_view session_id,
                                                 const HistoryQuery& query) {
  return Run([&](PgConnection& c) -> Result<std::vector<Event>> {
    ASSIGN_OR_RETURN(std::vector<Segment> history, ResolveHistory(c, ns_, session_id));
    return ReadSegments(c, ns_, history, query);
  });
}

Status PgStore::ReadMessages(std::string_view session_id, const store::HistoryRead& read,
                             std::vector<Message>* out) {
  const size_t first = out->size();
  return Run([&](PgConnection& c) -> Status {
    out->erase(out->begin() + static_cast<std::ptrdiff_t>(first), out->end());  // a retry
    ASSIGN_OR_RETURN(std::vector<Segment> history, ResolveHistory(c, ns_, session_id));
    return ReadSegmentRows(c, ns_, history,
                           {.from_seq = read.from_seq,
                            .upto_seq = read.to_seq,
                            .limit = read.limit,
                            .filter = EventFilter::kMessages,
                            .newest_first = read.newest_first},
                           out, DecodeMessageRowInto);
  });
}

Result<std::set<std::string>> PgStore::PresentBlobs(const std::vector<std::string>& sha256s) {
  return Run([&](PgConnection& c) -> Result<std::set<std::string>> {
    // Present for this namespace only: a digest another namespace holds
    // reads as missing here, as one nobody holds does. Asked by the names
    // they are stored under (keyed digests when encrypted).
    const BlobNames named = NameBlobs(c.sealer(), sha256s);
    PgParams p;
    p.Add(PgArray(named.names)).Add(ns_);
    ASSIGN_OR_RETURN(PgResult r,
                     c.Exec("SELECT b.sha256 FROM blobs b WHERE b.sha256 = ANY($1::text[]) AND "
                            "EXISTS (SELECT 1 FROM blob_refs r WHERE r.namespace = $2 AND "
                            "r.sha256 = b.sha256)",
                            p));
    std::set<std::string> out;
    for (int i = 0; i < r.rows(); ++i) out.insert(named.digests.at(std::string(r.Text(i, 0))));
    return out;
  });
}

Result<std::optional<Event>> PgStore::FindLastCompaction(std::string_view session_id,
                                                         int64_t upto_seq) {
  return Run([&](PgConnection& c) -> Result<std::optional<Event>> {
    ASSIGN_OR_RETURN(std::vector<Segment> history, ResolveHistory(c, ns_, session_id));
    ASSIGN_OR_RETURN(std::vector<Event> last, ReadSegments(c, ns_, history,
                                                           {.upto_seq = upto_seq,
                                                            .limit = 1,
                                                            .filter = EventFilter::kCompactions,
                                                            .newest_first = true}));
    if (last.empty()) return std::optional<Event>();
    return std::optional<Event>(std::move(last.front()));
  });
}

Result<std::optional<Event>> PgStore::FindResourceMessage(std::string_view session_id,
                                                          std::string_view resource_id) {
  return Run([&](PgConnection& c) -> Result<std::optional<Event>> {
    ASSIGN_OR_RETURN(std::vector<Segment> history, ResolveHistory(c, ns_, session_id));
    // strpos finds the candidates; the decoded parts say which really attach
    // it. Sealed bodies are searched here instead, each opened.
    const bool sealed = c.sealer().encrypted();
    OpenedEventRow row;
    for (const Segment& segment : history) {
      PgParams p;
      p.Add(ns_).Add(segment.session_id).Add(segment.from_seq).Add(segment.to_seq);
      p.Add(sealed ? std::string_view() : resource_id);
      ASSIGN_OR_RETURN(PgResult r,
                       c.Exec("SELECT " SESSIONDB_EVENT_COLUMNS " FROM events "
                              "WHERE namespace = $1 AND session_id = $2 AND seq >= $3 AND "
                              "seq <= $4 AND type = 'message' AND body IS NOT NULL AND "
                              "strpos(body, $5) > 0 ORDER BY seq",
                              p));
      for (int i = 0; i < r.rows(); ++i) {
        RETURN_IF_ERROR(row.Read(c.sealer(), r, i));
        if (sealed && row.row().body->find(resource_id) == std::string_view::npos) continue;
        ASSIGN_OR_RETURN(Event e, DecodeEventRow(row.row()));
        for (const Part& part : e.message.parts) {
          if (part.resource && part.resource->resource_id == resource_id) {
            return std::optional<Event>(std::move(e));
          }
        }
      }
    }
    return std::optional<Event>();
  });
}

// ---- Events that are not messages ----------------------------------------------

Result<Event> PgStore::InsertEventRecord(std::string_view session_id, EventType type,
                                         std::string_view text, std::string_view body) {
  ASSIGN_OR_RETURN(std::optional<Event> e,
                   InsertEventRecordGuarded(session_id, type, text, body, std::nullopt));
  return std::move(*e);
}

Result<std::optional<Event>> PgStore::InsertGuardedEventRecord(std::string_view session_id,
                                                               EventType type,
                                                               std::string_view text,
                                                               std::string_view body,
                                                               const store::RecordGuard& guard) {
  return InsertEventRecordGuarded(session_id, type, text, body, guard);
}

Result<std::optional<Event>> PgStore::InsertEventRecordGuarded(
    std::string_view session_id, EventType type, std::string_view text, std::string_view body,
    const std::optional<store::RecordGuard>& guard) {
  Event event;
  event.id = NewId();
  event.session_id = session_id;
  event.type = type;
  const std::string_view type_name = EventTypeName(type);

  bool commit_sent = false;
  auto appended = Run([&](PgConnection& c) -> Result<std::optional<Event>> {
    if (commit_sent) {
      // The last attempt sent COMMIT and lost the answer: it may have landed.
      PgParams p;
      p.Add(ns_).Add(event.id);
      ASSIGN_OR_RETURN(PgResult r, c.Exec("SELECT seq, ts_ms FROM events "
                                          "WHERE namespace = $1 AND id = $2",
                                          p));
      commit_sent = false;
      if (r.rows() == 1) {
        event.seq = r.Int(0, 0);
        event.ts_ms = r.Int(0, 1);
        return std::optional<Event>(event);
      }
    }
    ASSIGN_OR_RETURN(PgTransaction txn, PgTransaction::Begin(&c));
    PgParams key;
    key.Add(ns_).Add(session_id);
    ASSIGN_OR_RETURN(PgResult s, c.Exec("SELECT last_seq FROM sessions WHERE namespace = $1 AND "
                                        "id = $2 AND NOT deleted FOR UPDATE",
                                        key));
    if (s.rows() == 0) return Err(SessionNotFound(session_id));
    if (guard && guard->only_at_last_seq && s.Int(0, 0) != *guard->only_at_last_seq) {
      return std::optional<Event>();
    }
    if (guard && s.Int(0, 0) > guard->no_rewind_after) {
      PgParams later;
      later.Add(ns_).Add(session_id).Add(guard->no_rewind_after);
      ASSIGN_OR_RETURN(PgResult rewound,
                       c.Exec("SELECT 1 FROM events WHERE namespace = $1 AND session_id = $2 "
                              "AND seq > $3 AND type <> 'message' AND type = 'rewind' LIMIT 1",
                              later));
      if (rewound.rows() > 0) return std::optional<Event>();
    }
    const int64_t seq = s.Int(0, 0) + 1;
    const int64_t now = Now();
    PgParams p;
    p.Add(ns_).Add(session_id).Add(seq).Add(event.id).Add(now).Add(type_name);
    p.Add(c.sealer().Text(PgColumn::kEventText, event.id, text));
    p.Add(c.sealer().Text(PgColumn::kEventBody, event.id, body));
    RETURN_IF_ERROR(
        c.Run("INSERT INTO events (namespace, session_id, seq, id, ts_ms, type, role, text, body) "
              "VALUES ($1, $2, $3, $4, $5, $6, NULL, $7, $8)",
              p));
    RETURN_IF_ERROR(AddEventDocuments(c, ns_, session_id, {seq}, {SearchText(text, body)}));
    PgParams u;
    u.Add(ns_).Add(session_id).Add(seq).Add(now);
    if (guard) {
      u.Add(guard->message_count);
    } else {
      u.AddNull();
    }
    RETURN_IF_ERROR(
        c.Run("UPDATE sessions SET last_seq = $3, updated_ms = $4, "
              "message_count = coalesce($5::bigint, message_count) "
              "WHERE namespace = $1 AND id = $2",
              u));
    commit_sent = true;
    RETURN_IF_ERROR(txn.Commit());
    commit_sent = false;
    event.seq = seq;
    event.ts_ms = now;
    return std::optional<Event>(event);
  });
  if (!appended && commit_sent) {
    return Err(Status(appended.error().code(),
                      appended.error().message() +
                          "; the last COMMIT got no answer, so the event may have been stored: "
                          "look for event id '" +
                          event.id + "' before recording it again"));
  }
  return appended;
}

// ---- Usage --------------------------------------------------------------------------

Result<UsageReport> PgStore::LoadUsage(std::string_view session_id) {
  return Run([&](PgConnection& c) -> Result<UsageReport> {
    PgParams p;
    p.Add(ns_).Add(session_id);
    ASSIGN_OR_RETURN(PgResult r,
                     c.Exec("SELECT u.provider, u.model, u.turns, u.input_tokens, u.output_tokens, "
                            "u.cached_tokens, u.reasoning_tokens, u.cache_write_tokens "
                            "FROM sessions s LEFT JOIN usage_totals u "
                            "ON u.namespace = s.namespace AND u.session_id = s.id "
                            "WHERE s.namespace = $1 AND s.id = $2 AND NOT s.deleted "
                            "ORDER BY u.provider COLLATE \"C\", u.model COLLATE \"C\"",
                            p));
    if (r.rows() == 0) return Err(SessionNotFound(session_id));
    UsageReport report;
    for (int i = 0; i < r.rows(); ++i) {
      if (r.IsNull(i, 0)) continue;  // the session, without usage
      ModelUsage& m = report.by_model.emplace_back();
      m.provider = r.Text(i, 0);
      m.model = r.Text(i, 1);
      m.turns = r.Int(i, 2);
      m.usage = {.input_tokens = r.Int(i, 3),
                 .output_tokens = r.Int(i, 4),
                 .cached_tokens = r.Int(i, 5),
                 .reasoning_tokens = r.Int(i, 6),
                 .cache_write_tokens = r.Int(i, 7)};
      report.turns = SaturatingAdd(report.turns, m.turns);
      report.total = SaturatingAdd(report.total, m.usage);
    }
    return report;
  });
}

Result<store::UsageDays> PgStore::LoadUsageDays(const store::UsageDaysFilter& filter) {
  return Run([&](PgConnection& c) -> Result<store::UsageDays> {
    PgParams p;
    p.Add(ns_).Add(filter.since).Add(filter.until).Add(PgArray(filter.session_ids));
    p.Add(int64_t{filter.session_ids.empty()});
    ASSIGN_OR_RETURN(
        PgResult r,
        c.Exec("SELECT u.session_id, u.day, u.provider, u.model, u.turns, u.input_tokens, "
               "u.output_tokens, u.cached_tokens, u.reasoning_tokens, u.cache_write_tokens, "
               "s.metadata FROM usage_days u JOIN sessions s ON s.namespace = u.namespace "
               "AND s.id = u.session_id WHERE u.namespace = $1 AND NOT s.deleted "
               "AND ($2 = '' OR u.day >= $2) AND ($3 = '' OR u.day <= $3) "
               "AND ($5 = 1 OR u.session_id = ANY($4::text[])) "
               "ORDER BY u.session_id COLLATE \"C\", u.day COLLATE \"C\", "
               "u.provider COLLATE \"C\", u.model COLLATE \"C\"",
               p));
    store::UsageDays out;
    const PgSealer& sealer = c.sealer();
    for (int i = 0; i < r.rows(); ++i) {
      store::UsageDayRow& row = out.rows.emplace_back();
      row.session_id = r.Text(i, 0);
      row.day = r.Text(i, 1);
      row.provider = r.Text(i, 2);
      row.model = r.Text(i, 3);
      row.turns = r.Int(i, 4);
      row.usage = {.input_tokens = r.Int(i, 5),
                   .output_tokens = r.Int(i, 6),
                   .cached_tokens = r.Int(i, 7),
                   .reasoning_tokens = r.Int(i, 8),
                   .cache_write_tokens = r.Int(i, 9)};
      if (out.metadata_of.contains(row.session_id)) continue;
      ASSIGN_OR_RETURN(std::string metadata,
                       sealer.OpenText(PgColumn::kSessionMetadata, row.session_id, r.Text(i, 10)));
      out.metadata_of.emplace(row.session_id, std::move(metadata));
    }
    return out;
  });
}

// ---- Drafts -----------------------------------------------------------------------------

Status PgStore::InsertDraft(const Draft& draft) {
  bool sent = false;  // an earlier attempt's INSERT may have committed unanswered
  return Run([&](PgConnection& c) -> Status {
    const bool retrying_after_send = sent;
    PgParams p;
    p.Add(ns_).Add(draft.id).Add(draft.session_id).Add(RoleName(draft.role)).Add(draft.model);
    p.Add(draft.created_ms).Add(draft.updated_ms);
    // The texts as given (empty when new), sealed like every stored value.
    p.Add(c.sealer().Text(PgColumn::kDraftText, draft.id, draft.text));
    p.Add(c.sealer().Text(PgColumn::kDraftReasoning, draft.id, draft.reasoning));
    sent = true;
    // FOR SHARE: a concurrent delete of the session (and its drafts) waits
    // for this draft, or this insert for the delete.
    ASSIGN_OR_RETURN(PgResult r,
                     c.Exec("INSERT INTO drafts (namespace, id, session_id, role, model, "
                            "created_ms, updated_ms, text, reasoning) SELECT $1, $2, s.id, $4, "
                            "$5, $6, $7, $8, $9 "
                            "FROM sessions s WHERE s.namespace = $1 AND s.id = $3 AND "
                            "NOT s.deleted FOR SHARE ON CONFLICT (namespace, id) DO NOTHING",
                            p));
    if (r.Affected() == 1) return Status::Ok();
    if (retrying_after_send) {
      PgParams q;
      q.Add(ns_).Add(draft.id);
      ASSIGN_OR_RETURN(PgResult mine,
                       c.Exec("SELECT 1 FROM drafts WHERE namespace = $1 AND id = $2", q));
      if (mine.rows() == 1) return Status::Ok();
    }
    return SessionNotFound(draft.session_id);
  });
}

Status PgStore::UpdateDraft(const Draft& draft, int64_t updated_ms) {
  return Run([&](PgConnection& c) -> Status {
    PgParams p;
    p.Add(ns_).Add(draft.id).Add(c.sealer().Text(PgColumn::kDraftText, draft.id, draft.text));
    p.Add(c.sealer().Text(PgColumn::kDraftReasoning, draft.id, draft.reasoning)).Add(updated_ms);
    ASSIGN_OR_RETURN(PgResult r, c.Exec("UPDATE drafts SET text = $3, reasoning = $4, "
                                        "updated_ms = $5 WHERE namespace = $1 AND id = $2",
                                        p));
    if (r.Affected() == 0) return store::DraftNotFound(draft.id);
    return Status::Ok();
  });
}

Result<std::vector<Draft>> PgStore::SelectDrafts(std::string_view session_id) {
  return Run([&](PgConnection& c) -> Result<std::vector<Draft>> {
    PgParams p;
    p.Add(ns_).Add(session_id);
    ASSIGN_OR_RETURN(
        PgResult r,
        c.Exec("SELECT d.id, d.session_id, d.role, d.text, d.reasoning, d.model, d.created_ms, "
               "d.updated_ms FROM sessions s LEFT JOIN drafts d ON d.namespace = s.namespace "
               "AND d.session_id = s.id WHERE s.namespace = $1 AND s.id = $2 AND NOT s.deleted "
               "ORDER BY d.created_ms, d.id COLLATE \"C\"",
               p));
    if (r.rows() == 0) return Err(SessionNotFound(session_id));
    std::vector<Draft> drafts;
    for (int i = 0; i < r.rows(); ++i) {
      if (r.IsNull(i, 0)) continue;
      ASSIGN_OR_RETURN(Draft d, DraftFromRow(c.sealer(), r, i));
      drafts.push_back(std::move(d));
    }
    return drafts;
  });
}

Result<Draft> PgStore::LoadDraft(std::string_view draft_id) {
  return Run([&](PgConnection& c) -> Result<Draft> {
    PgParams key;
    key.Add(ns_).Add(draft_id);
    ASSIGN_OR_RETURN(PgResult d, c.Exec("SELECT id, session_id, role, text, reasoning, model, "
                                        "created_ms, updated_ms FROM drafts "
                                        "WHERE namespace = $1 AND id = $2",
                                        key));
    if (d.rows() == 0) return Err(store::DraftNotFound(draft_id));
    return DraftFromRow(c.sealer(), d, 0);
  });
}

Status RemoveFinishedDraft(PgConnection& c, const std::string& ns, const Draft& draft) {
  // Compared here, not in SQL: sealed texts differ at every save. The row
  // lock keeps a save from landing between the comparison and the delete.
  PgParams key;
  key.Add(ns).Add(draft.id);
  ASSIGN_OR_RETURN(PgResult r, c.Exec("SELECT id, session_id, role, text, reasoning, model, "
                                      "created_ms, updated_ms FROM drafts "
                                      "WHERE namespace = $1 AND id = $2 FOR UPDATE",
                                      key));
  if (r.rows() == 0) return store::DraftNotFound(draft.id);
  ASSIGN_OR_RETURN(Draft stored, DraftFromRow(c.sealer(), r, 0));
  // Saved again since the front read it: its newer text would be lost.
  if (stored.updated_ms != draft.updated_ms || stored.text != draft.text ||
      stored.reasoning != draft.reasoning) {
    return Status::Busy("draft " + draft.id +
                        " was saved again while it was being finished; finish it again");
  }
  return c.Run("DELETE FROM drafts WHERE namespace = $1 AND id = $2", key);
}

Status PgStore::RemoveDraft(std::string_view draft_id) {
  bool sent = false;
  return Run([&](PgConnection& c) -> Status {
    const bool retrying_after_send = sent;
    PgParams p;
    p.Add(ns_).Add(draft_id);
    sent = true;
    ASSIGN_OR_RETURN(PgResult r, c.Exec("DELETE FROM drafts WHERE namespace = $1 AND id = $2", p));
    // Gone because an earlier attempt's DELETE landed unanswered: done.
    if (r.Affected() == 0 && !retrying_after_send) return store::DraftNotFound(draft_id);
    return Status::Ok();
  });
}

}  // namespace sessiondb::postgres
