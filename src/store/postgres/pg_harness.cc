// The agent harness on this backend: a session's history through its fork
// ancestors, forks, events that are not messages, compaction prune, usage
// totals, drafts, and the removal of sessions that forks still read.
//
// A fork copies nothing: its row names its parent and the seq it forked at,
// and its history is read as ranges of its ancestors' logs (segments), each a
// range scan of the events primary key.
#include <algorithm>
#include <array>
#include <set>

#include "core/event_codec.h"
#include "core/message_codec.h"
#include "core/search_text.h"
#include "core/text_rules.h"
#include "store/postgres/pg_search_docs.h"
#include "store/postgres/pg_store_internal.h"
#include "store/store_common.h"

namespace sessiondb::postgres {
namespace {

// The columns EventFromRow reads, in its order.
#define SESSIONDB_EVENT_COLUMNS "id, session_id, seq, ts_ms, type, role, text, body"

Result<Event> EventFromRow(const PgResult& r, int row) {
  EventRow e{.id = r.Text(row, 0),
             .session_id = r.Text(row, 1),
             .seq = r.Int(row, 2),
             .ts_ms = r.Int(row, 3),
             .type = r.Text(row, 4),
             .role = r.Text(row, 5),
             .text = r.Text(row, 6)};
  if (!r.IsNull(row, 7)) e.body = r.Text(row, 7);
  return DecodeEventRow(e);
}

// The query that reads one segment: $1 namespace, $2 session, seqs $3..$4,
// at most $5 rows (NULL: all).
const char* SegmentSql(EventFilter filter, bool newest_first) {
  static const std::array<std::string, 6> kSql = [] {
    static constexpr const char* kFilters[] = {
        "",
        " AND type = 'message'",
        // The first condition lets the planner use the index of non-messages.
        " AND type <> 'message' AND type = 'compaction'",
    };
    std::array<std::string, 6> sql;
    for (size_t f = 0; f < 3; ++f) {
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

// The Segment fields as the array parameters $2, $3, $4 of one statement.
void AddSegments(const std::vector<Segment>& history, PgParams* p) {
  std::vector<std::string> ids;
  std::vector<int64_t> from, to;
  for (const Segment& s : history) {
    ids.push_back(s.session_id);
    from.push_back(s.from_seq);
    to.push_back(s.to_seq);
  }
  p->Add(PgArray(ids)).Add(PgArray(from)).Add(PgArray(to));
}

Draft DraftFromRow(const PgResult& r, int row) {
  Draft d;
  d.id = r.Text(row, 0);
  d.session_id = r.Text(row, 1);
  d.role = ParseRole(r.Text(row, 2)).value_or(Role::kAssistant);
  d.text = r.Text(row, 3);
  d.reasoning = r.Text(row, 4);
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

Result<std::vector<Event>> ReadSegments(PgConnection& c, const std::string& ns,
                                        const std::vector<Segment>& history,
                                        const HistoryQuery& query) {
  std::vector<Event> out;
  const auto full = [&] {
    return query.limit >= 0 && static_cast<int64_t>(out.size()) >= query.limit;
  };
  auto read = [&](const Segment& segment) -> Status {
    const int64_t lo = std::max(segment.from_seq, query.from_seq);
    const int64_t hi = std::min(segment.to_seq, query.upto_seq);
    if (lo > hi) return Status::Ok();
    PgParams p;
    p.Add(ns).Add(segment.session_id).Add(lo).Add(hi);
    if (query.limit < 0) {
      p.AddNull();
    } else {
      p.Add(query.limit - static_cast<int64_t>(out.size()));
    }
    ASSIGN_OR_RETURN(PgResult r, c.Exec(SegmentSql(query.filter, query.newest_first), p));
    for (int i = 0; i < r.rows(); ++i) {
      ASSIGN_OR_RETURN(Event e, EventFromRow(r, i));
      out.push_back(std::move(e));
    }
    return Status::Ok();
  };
  if (query.newest_first) {
    for (auto it = history.rbegin(); it != history.rend() && !full(); ++it) {
      RETURN_IF_ERROR(read(*it));
    }
    std::reverse(out.begin(), out.end());
  } else {
    for (auto it = history.begin(); it != history.end() && !full(); ++it) {
      RETURN_IF_ERROR(read(*it));
    }
  }
  return out;
}

Result<std::vector<Event>> PgStore::ReadHistory(std::string_view session_id,
                                                const store::HistoryRead& read) {
  return QueryHistory(session_id, {.from_seq = read.from_seq,
                                   .limit = read.limit,
                                   .filter = read.messages_only ? EventFilter::kMessages
                                                                : EventFilter::kAll,
                                   .newest_first = read.newest_first});
}

Result<std::vector<Event>> PgStore::QueryHistory(std::string_view session_id,
                                                 const HistoryQuery& query) {
  return Run([&](PgConnection& c) -> Result<std::vector<Event>> {
    ASSIGN_OR_RETURN(std::vector<Segment> history, ResolveHistory(c, ns_, session_id));
    return ReadSegments(c, ns_, history, query);
  });
}

Result<std::set<std::string>> PgStore::PresentBlobs(const std::vector<std::string>& sha256s) {
  return Run([&](PgConnection& c) -> Result<std::set<std::string>> {
    PgParams p;
    p.Add(PgArray(sha256s));
    ASSIGN_OR_RETURN(PgResult r, c.Exec("SELECT sha256 FROM blobs WHERE sha256 = ANY($1::text[])", p));
    std::set<std::string> out;
    for (int i = 0; i < r.rows(); ++i) out.emplace(r.Text(i, 0));
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
        for (const Segment& segment : history) {
          PgParams p;
          p.Add(ns_).Add(segment.session_id).Add(segment.from_seq).Add(segment.to_seq);
          p.Add(resource_id);
          // strpos finds the candidates; the decoded parts say which really attach it.
          ASSIGN_OR_RETURN(PgResult r,
                           c.Exec("SELECT " SESSIONDB_EVENT_COLUMNS " FROM events "
                                  "WHERE namespace = $1 AND session_id = $2 AND seq >= $3 AND "
                                  "seq <= $4 AND type = 'message' AND body IS NOT NULL AND "
                                  "strpos(body, $5) > 0 ORDER BY seq",
                                  p));
          for (int i = 0; i < r.rows(); ++i) {
            ASSIGN_OR_RETURN(Event e, EventFromRow(r, i));
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
  Event event;
  event.id = NewId();
  event.session_id = session_id;
  event.type = type;
  const std::string_view type_name = EventTypeName(type);

  bool commit_sent = false;
  auto appended = Run([&](PgConnection& c) -> Result<Event> {
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
        return event;
      }
    }
    ASSIGN_OR_RETURN(PgTransaction txn, PgTransaction::Begin(&c));
    PgParams key;
    key.Add(ns_).Add(session_id);
    ASSIGN_OR_RETURN(PgResult s, c.Exec("SELECT last_seq FROM sessions WHERE namespace = $1 AND "
                                        "id = $2 AND NOT deleted FOR UPDATE",
                                        key));
    if (s.rows() == 0) return Err(SessionNotFound(session_id));
    const int64_t seq = s.Int(0, 0) + 1;
    const int64_t now = Now();
    PgParams p;
    p.Add(ns_).Add(session_id).Add(seq).Add(event.id).Add(now).Add(type_name).Add(text).Add(body);
    RETURN_IF_ERROR(
        c.Run("INSERT INTO events (namespace, session_id, seq, id, ts_ms, type, role, text, body) "
              "VALUES ($1, $2, $3, $4, $5, $6, NULL, $7, $8)",
              p));
    RETURN_IF_ERROR(AddEventDocuments(c, ns_, session_id, {seq}, {SearchText(text, body)}));
    PgParams u;
    u.Add(ns_).Add(session_id).Add(seq).Add(now);
    RETURN_IF_ERROR(c.Run(
        "UPDATE sessions SET last_seq = $3, updated_ms = $4 WHERE namespace = $1 AND id = $2", u));
    commit_sent = true;
    RETURN_IF_ERROR(txn.Commit());
    commit_sent = false;
    event.seq = seq;
    event.ts_ms = now;
    return event;
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

// ---- Forks ------------------------------------------------------------------------

Result<Session> PgStore::InsertFork(std::string_view parent_id, int64_t at_seq,
                                    const store::ForkRow& child) {
  const std::string& id = child.id;
  const std::optional<std::string>& metadata = child.metadata_json;
  const std::string& given_title = child.title;
  const int64_t now = child.created_ms;

  bool commit_sent = false;  // an earlier attempt's COMMIT may have landed unanswered
  return Run([&](PgConnection& c) -> Result<Session> {
    const bool retrying_after_send = commit_sent;
    commit_sent = false;
    ASSIGN_OR_RETURN(PgTransaction txn, PgTransaction::Begin(&c));
    PgParams key;
    key.Add(ns_).Add(parent_id);
    // FOR SHARE: the parent cannot be deleted until the fork that reads it commits.
    ASSIGN_OR_RETURN(PgResult r, c.Exec("SELECT id, title, preview, created_ms, updated_ms, "
                                        "message_count, last_seq, archived, metadata, parent_id, "
                                        "fork_seq FROM sessions WHERE namespace = $1 AND id = $2 "
                                        "AND NOT deleted FOR SHARE",
                                        key));
    if (r.rows() == 0) return Err(SessionNotFound(parent_id));
    const Session parent = SessionFromRow(r, 0);
    RETURN_IF_ERROR(ValidateForkPoint(parent, at_seq));
    ASSIGN_OR_RETURN(std::vector<Segment> full, ResolveHistory(c, ns_, parent_id));
    const std::vector<Segment> inherited = SegmentsUpTo(std::move(full), at_seq);

    // Seqs are dense over the history, so its messages are at_seq minus the
    // few events that are not messages (counted on their partial index).
    int64_t not_messages = 0;
    if (!inherited.empty()) {
      PgParams p;
      p.Add(ns_);
      AddSegments(inherited, &p);
      ASSIGN_OR_RETURN(PgResult n,
                       c.Exec("SELECT coalesce(sum((SELECT count(*) FROM events e WHERE "
                              "e.namespace = $1 AND e.session_id = g.session_id AND "
                              "e.seq >= g.from_seq AND e.seq <= g.to_seq AND "
                              "e.type <> 'message')), 0)::bigint FROM "
                              "unnest($2::text[], $3::bigint[], $4::bigint[]) "
                              "AS g(session_id, from_seq, to_seq)",
                              p));
      not_messages = n.Int(0, 0);
    }

    // The index entry the first inherited messages make, for the preview
    // (and whether they fixed the title).
    IndexEntry derived;
    int64_t scanned = 0;
    for (const Segment& segment : inherited) {
      if (scanned >= kForkIndexScan || (derived.title_fixed && !derived.preview.empty())) break;
      if (segment.from_seq > segment.to_seq) continue;
      PgParams p;
      p.Add(ns_).Add(segment.session_id).Add(segment.from_seq).Add(segment.to_seq);
      p.Add(static_cast<int64_t>(kForkIndexScan) - scanned);
      ASSIGN_OR_RETURN(PgResult first, c.Exec("SELECT role, text FROM events WHERE "
                                              "namespace = $1 AND session_id = $2 AND seq >= $3 "
                                              "AND seq <= $4 AND type = 'message' ORDER BY seq "
                                              "LIMIT $5",
                                              p));
      for (int i = 0; i < first.rows(); ++i) {
        ApplyMessageToIndex(ParseRole(first.Text(i, 0)).value_or(Role::kUser), first.Text(i, 1),
                            &derived);
      }
      scanned += first.rows();
    }
    IndexEntry entry;
    static_cast<TitleAndPreview&>(entry) =
        ForkTitleAndPreview(parent.title, at_seq, given_title, derived);

    PgParams row;
    row.Add(ns_).Add(id).Add(entry.title).Add(entry.title_fixed).Add(entry.preview).Add(now);
    row.Add(at_seq - not_messages).Add(at_seq);
    row.Add(metadata ? *metadata : parent.metadata_json).Add(parent_id);
    ASSIGN_OR_RETURN(
        PgResult inserted,
        c.Exec("INSERT INTO sessions (namespace, id, title, title_fixed, preview, created_ms, "
               "updated_ms, message_count, last_seq, archived, metadata, parent_id, fork_seq) "
               "VALUES ($1, $2, $3, $4, $5, $6, $6, $7, $8, false, $9, $10, $8) "
               "ON CONFLICT (namespace, id) DO NOTHING RETURNING id, title, preview, created_ms, "
               "updated_ms, message_count, last_seq, archived, metadata, parent_id, fork_seq",
               row));
    if (inserted.rows() == 0) {
      PgParams q;
      q.Add(ns_).Add(id);
      ASSIGN_OR_RETURN(PgResult existing,
                       c.Exec("SELECT id, title, preview, created_ms, updated_ms, message_count, "
                              "last_seq, archived, metadata, parent_id, fork_seq, deleted "
                              "FROM sessions WHERE namespace = $1 AND id = $2",
                              q));
      // Ours after all, if an earlier attempt's answer was lost on the way back.
      if (existing.rows() == 1 && retrying_after_send && existing.Int(0, 3) == now &&
          existing.Text(0, 9) == parent_id && existing.Int(0, 10) == at_seq &&
          !existing.Bool(0, 11)) {
        return SessionFromRow(existing, 0);
      }
      return Err(SessionIdTaken(id));
    }
    Session session = SessionFromRow(inserted, 0);
    commit_sent = true;
    RETURN_IF_ERROR(txn.Commit());
    commit_sent = false;
    return session;
  });
}

Status RemoveSessions(PgConnection& c, const std::string& ns, const std::vector<std::string>& ids) {
  PgParams p;
  p.Add(ns).Add(PgArray(ids));
  // A session some fork still reads (even a deleted fork, which still has
  // forks of its own) is hidden; its events stay for them.
  ASSIGN_OR_RETURN(PgResult hidden,
                   c.Exec("UPDATE sessions s SET deleted = true WHERE namespace = $1 AND "
                          "id = ANY($2::text[]) AND EXISTS (SELECT 1 FROM sessions f WHERE "
                          "f.namespace = $1 AND f.parent_id = s.id) RETURNING id",
                          p));
  RETURN_IF_ERROR(c.Run(
      "DELETE FROM active_sessions WHERE namespace = $1 AND session_id = ANY($2::text[])", p));
  RETURN_IF_ERROR(
      c.Run("DELETE FROM drafts WHERE namespace = $1 AND session_id = ANY($2::text[])", p));
  std::set<std::string> kept;
  for (int i = 0; i < hidden.rows(); ++i) kept.emplace(hidden.Text(i, 0));
  std::vector<std::string> gone;
  for (const std::string& id : ids) {
    if (!kept.contains(id)) gone.push_back(id);
  }
  while (!gone.empty()) {
    static constexpr const char* kDeletes[] = {
        "DELETE FROM events WHERE namespace = $1 AND session_id = ANY($2::text[])",
        "DELETE FROM blob_refs WHERE namespace = $1 AND session_id = ANY($2::text[])",
        "DELETE FROM usage_totals WHERE namespace = $1 AND session_id = ANY($2::text[])",
        "DELETE FROM drafts WHERE namespace = $1 AND session_id = ANY($2::text[])",
        "DELETE FROM active_sessions WHERE namespace = $1 AND session_id = ANY($2::text[])",
    };
    PgParams g;
    g.Add(ns).Add(PgArray(gone));
    for (const char* sql : kDeletes) RETURN_IF_ERROR(c.Run(sql, g));
    ASSIGN_OR_RETURN(PgResult removed, c.Exec("DELETE FROM sessions WHERE namespace = $1 AND "
                                              "id = ANY($2::text[]) RETURNING parent_id",
                                              g));
    std::set<std::string> parents;
    for (int i = 0; i < removed.rows(); ++i) {
      if (!removed.IsNull(i, 0)) parents.emplace(removed.Text(i, 0));
    }
    gone.clear();
    if (parents.empty()) break;
    // A deleted parent goes once its last fork has. Lock it first, then look
    // for children: a sibling deleted concurrently has committed by then, so
    // one of the two deleters sees the parent childless.
    PgParams q;
    q.Add(ns).Add(PgArray(std::vector<std::string>(parents.begin(), parents.end())));
    ASSIGN_OR_RETURN(PgResult locked, c.Exec("SELECT id FROM sessions WHERE namespace = $1 AND "
                                             "id = ANY($2::text[]) AND deleted "
                                             "ORDER BY id FOR UPDATE",
                                             q));
    if (locked.rows() == 0) break;
    ASSIGN_OR_RETURN(PgResult orphans,
                     c.Exec("SELECT id FROM sessions s WHERE namespace = $1 AND "
                            "id = ANY($2::text[]) AND deleted AND NOT EXISTS (SELECT 1 FROM "
                            "sessions f WHERE f.namespace = $1 AND f.parent_id = s.id)",
                            q));
    for (int i = 0; i < orphans.rows(); ++i) gone.emplace_back(orphans.Text(i, 0));
  }
  return Status::Ok();
}

// ---- Compaction prune -----------------------------------------------------------

Result<PruneReport> PgStore::PruneCompaction(std::string_view session_id, int64_t compaction_seq) {
  return Run([&](PgConnection& c) -> Result<PruneReport> {
    ASSIGN_OR_RETURN(PgTransaction txn, PgTransaction::Begin(&c));
    PgParams key;
    key.Add(ns_).Add(session_id);
    // The row lock keeps appends (and other prunes) of this session out.
    ASSIGN_OR_RETURN(PgResult s, c.Exec("SELECT fork_seq, title, preview FROM sessions WHERE "
                                        "namespace = $1 AND id = $2 AND NOT deleted FOR UPDATE",
                                        key));
    if (s.rows() == 0) return Err(SessionNotFound(session_id));
    const int64_t own_from = s.Int(0, 0) + 1;
    PgParams at;
    at.Add(ns_).Add(session_id).Add(compaction_seq);
    ASSIGN_OR_RETURN(PgResult cr, c.Exec("SELECT " SESSIONDB_EVENT_COLUMNS " FROM events "
                                         "WHERE namespace = $1 AND session_id = $2 AND seq = $3",
                                         at));
    std::optional<Event> compaction;
    if (cr.rows() == 1) {
      ASSIGN_OR_RETURN(compaction, EventFromRow(cr, 0));
    }
    if (!compaction || compaction->type != EventType::kCompaction) {
      return Err(Status::InvalidArgument("event " + std::to_string(compaction_seq) +
                                         " of session " + std::string(session_id) +
                                         " is not a compaction this session recorded; "
                                         "`sessiondb events` lists them"));
    }
    PruneReport report;
    const int64_t from = std::max(compaction->compaction.from_seq, own_from);
    const int64_t to = compaction->compaction.to_seq;
    if (from > to) return report;

    PgParams range;
    range.Add(ns_).Add(session_id).Add(from).Add(to).AddNull();
    ASSIGN_OR_RETURN(PgResult m, c.Exec(SegmentSql(EventFilter::kMessages, false), range));
    std::vector<int64_t> seqs;
    std::vector<std::string> bodies;
    std::vector<std::pair<Role, std::string>> texts;
    for (int i = 0; i < m.rows(); ++i) {
      ASSIGN_OR_RETURN(Event e, EventFromRow(m, i));
      if (e.message.pruned) continue;  // by an earlier compaction
      Message stub;
      stub.role = e.message.role;
      stub.pruned = true;
      ASSIGN_OR_RETURN(std::optional<std::string> body, EncodeMessageBody(stub));
      seqs.push_back(e.seq);
      bodies.push_back(body.value_or(""));
      texts.emplace_back(e.message.role, std::string(m.Text(i, 6)));
    }
    if (seqs.empty()) return report;
    // A title or preview made from an erased text would keep its words.
    std::string title(s.Text(0, 1));
    std::string preview(s.Text(0, 2));
    ScrubPrunedTexts(texts, compaction->compaction.summary, &title, &preview);
    if (title != s.Text(0, 1) || preview != s.Text(0, 2)) {
      PgParams index;
      index.Add(ns_).Add(session_id).Add(title).Add(preview);
      RETURN_IF_ERROR(
          c.Run("UPDATE sessions SET title = $3, preview = $4 "
                "WHERE namespace = $1 AND id = $2",
                index));
    }
    PgParams u;
    u.Add(ns_).Add(session_id).Add(PgArray(seqs)).Add(PgArray(bodies));
    ASSIGN_OR_RETURN(PgResult updated,
                     c.Exec("UPDATE events e SET text = '', body = u.body FROM "
                            "unnest($3::bigint[], $4::text[]) AS u(seq, body) WHERE "
                            "e.namespace = $1 AND e.session_id = $2 AND e.seq = u.seq",
                            u));
    report.events_pruned = updated.Affected();
    // The update left their documents to be indexed again (schema v3 trigger).
    RETURN_IF_ERROR(IndexPendingDocuments(c, ns_));
    PgParams refs;
    refs.Add(ns_).Add(session_id).Add(PgArray(seqs));
    ASSIGN_OR_RETURN(PgResult dropped,
                     c.Exec("DELETE FROM blob_refs WHERE namespace = $1 AND session_id = $2 AND "
                            "seq = ANY($3::bigint[]) RETURNING sha256",
                            refs));
    std::set<std::string> shas;
    for (int i = 0; i < dropped.rows(); ++i) shas.emplace(dropped.Text(i, 0));
    if (!shas.empty()) {
      // As garbage collection does: lock the blobs, then look for references.
      // An append that holds a share lock on one commits its reference first.
      PgParams b;
      b.Add(PgArray(std::vector<std::string>(shas.begin(), shas.end())));
      RETURN_IF_ERROR(
          c.Run("SELECT 1 FROM blobs WHERE sha256 = ANY($1::text[]) "
                "ORDER BY sha256 FOR UPDATE",
                b));
      ASSIGN_OR_RETURN(PgResult freed,
                       c.Exec("DELETE FROM blobs b WHERE sha256 = ANY($1::text[]) AND NOT EXISTS "
                              "(SELECT 1 FROM blob_refs r WHERE r.sha256 = b.sha256) "
                              "RETURNING size",
                              b));
      report.blobs_deleted = freed.rows();
      for (int i = 0; i < freed.rows(); ++i) report.bytes_freed += freed.Int(i, 0);
    }
    RETURN_IF_ERROR(txn.Commit());
    return report;
  });
}

// ---- Usage --------------------------------------------------------------------------

Result<UsageReport> PgStore::LoadUsage(std::string_view session_id) {
  return Run([&](PgConnection& c) -> Result<UsageReport> {
    PgParams p;
    p.Add(ns_).Add(session_id);
    ASSIGN_OR_RETURN(
        PgResult r,
        c.Exec("SELECT u.provider, u.model, u.turns, u.input_tokens, u.output_tokens, "
               "u.cached_tokens, u.reasoning_tokens FROM sessions s LEFT JOIN usage_totals u "
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
                 .reasoning_tokens = r.Int(i, 6)};
      report.turns = SaturatingAdd(report.turns, m.turns);
      report.total = SaturatingAdd(report.total, m.usage);
    }
    return report;
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
    sent = true;
    // FOR SHARE: a concurrent delete of the session (and its drafts) waits
    // for this draft, or this insert for the delete.
    ASSIGN_OR_RETURN(PgResult r,
                     c.Exec("INSERT INTO drafts (namespace, id, session_id, role, model, "
                            "created_ms, updated_ms) SELECT $1, $2, s.id, $4, $5, $6, $7 "
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
    p.Add(ns_).Add(draft.id).Add(draft.text).Add(draft.reasoning).Add(updated_ms);
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
      if (!r.IsNull(i, 0)) drafts.push_back(DraftFromRow(r, i));
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
    return DraftFromRow(d, 0);
  });
}

Status RemoveFinishedDraft(PgConnection& c, const std::string& ns, const Draft& draft) {
  PgParams key;
  key.Add(ns).Add(draft.id).Add(draft.updated_ms).Add(draft.text).Add(draft.reasoning);
  ASSIGN_OR_RETURN(PgResult r, c.Exec("DELETE FROM drafts WHERE namespace = $1 AND id = $2 AND "
                                      "updated_ms = $3 AND text = $4 AND reasoning = $5",
                                      key));
  if (r.Affected() > 0) return Status::Ok();
  // Gone, or saved again since the front read it (its newer text would be lost).
  PgParams id;
  id.Add(ns).Add(draft.id);
  ASSIGN_OR_RETURN(PgResult still, c.Exec("SELECT 1 FROM drafts WHERE namespace = $1 AND id = $2",
                                          id));
  if (still.rows() == 0) return store::DraftNotFound(draft.id);
  return Status::Busy("draft " + draft.id +
                      " was saved again while it was being finished; finish it again");
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
