// Restores on PostgreSQL: a whole session (RestoreSession) and more events of
// one (RestoreEvents), with their ids, seqs and times as given.
#include <set>

#include "blob/sha256.h"
#include "core/message_codec.h"
#include "core/text_rules.h"
#include "store/postgres/pg_store_internal.h"

namespace sessiondb::postgres {

struct PgStore::RestoreBatch {
  EventRows rows;
  std::vector<std::string> needed;  // every digest the messages refer to, distinct
  UsageDelta usage;                 // of the session's own turns
  int64_t message_count = 0;
};

Result<PgStore::RestoreBatch> PgStore::EncodeRestore(std::string_view session_id,
                                                     std::span<const Event> events) {
  // Messages are prepared like appends and every descriptor is accepted: its
  // blob is fetched (or found lost) inside the caller's transaction, before
  // the events that refer to it. Other events are written as they are.
  RestoreBatch batch;
  EventRows& rows = batch.rows;
  std::set<std::string> needed;
  for (const Event& original : events) {
    const Event e = RestoredCopy(original, session_id);
    batch.message_count += e.type == EventType::kMessage;
    rows.seqs.push_back(e.seq);
    rows.ts.push_back(e.ts_ms);
    rows.types.emplace_back(EventTypeName(e.type));
    if (e.type == EventType::kMessage) {
      rows.roles.emplace_back(RoleName(e.message.role));
    } else {
      rows.roles.emplace_back(std::nullopt);
    }
    if (RestoresAsStored(e)) {
      ASSIGN_OR_RETURN(StoredEventColumns stored, EncodeRestoredEvent(e));
      RETURN_IF_ERROR(CheckNoNul(stored.text, "the text of event " + std::to_string(e.seq)));
      rows.ids.push_back(e.id.empty() ? NewId() : e.id);
      rows.texts.push_back(std::move(stored.text));
      rows.bodies.push_back(std::move(stored.body));
      continue;
    }
    ASSIGN_OR_RETURN(PreparedMessage p,
                     PrepareMessage(
                         e.message, options_, Admission::kRestore,
                         [](std::string_view) { return true; }, [this] { return NewId(); }));
    RETURN_IF_ERROR(CheckNoNul(p.text, "the text of message " + std::to_string(e.seq)));
    ASSIGN_OR_RETURN(std::optional<std::string> body, EncodeMessageBody(p.message()));
    rows.ids.push_back(p.id);
    rows.texts.push_back(p.text);
    rows.bodies.push_back(std::move(body));
    for (const std::string& sha : p.referenced_sha256) {
      needed.insert(sha);
      rows.ref_shas.push_back(sha);
      rows.ref_seqs.push_back(e.seq);
    }
    // Tokens an inherited turn spent were the parent's, and counted there.
    if (!IsInherited(original, session_id)) AddToUsage(&batch.usage, p.message(), e.ts_ms);
  }
  batch.needed.assign(needed.begin(), needed.end());
  return batch;
}

Status PgStore::InsertRestored(PgConnection& c, std::string_view session_id,
                               const RestoreBatch& batch, const BlobSourceFn& blob_source) {
  // A restored message may name by digest alone only a blob this namespace
  // already refers to. Any other needs its bytes from the source, even when
  // another namespace stored them: knowing a digest is not having the bytes,
  // and a digest held elsewhere takes the very path of one nobody holds
  // (invariant 11: no answer says whether anyone holds them).
  std::set<std::string> own;
  if (!batch.needed.empty()) {
    // Asked by the names they are stored under (keyed digests when encrypted).
    const BlobNames named = NameBlobs(c.sealer(), batch.needed);
    PgParams p;
    p.Add(PgArray(named.names)).Add(ns_);
    // Share-locked so gc cannot delete them before these references commit.
    ASSIGN_OR_RETURN(PgResult owned,
                     c.Exec("SELECT b.sha256 FROM blobs b WHERE b.sha256 = ANY($1::text[]) AND "
                            "EXISTS (SELECT 1 FROM blob_refs r WHERE r.namespace = $2 AND "
                            "r.sha256 = b.sha256) FOR SHARE OF b",
                            p));
    for (int i = 0; i < owned.rows(); ++i)
      own.insert(named.digests.at(std::string(owned.Text(i, 0))));
  }
  std::set<std::string> lost;
  for (const std::string& sha : batch.needed) {
    if (own.contains(sha)) continue;
    Result<std::string> bytes =
        blob_source ? blob_source(sha) : Result<std::string>(Err(Status::NotFound(sha)));
    if (!bytes && bytes.error().code() == StatusCode::kNotFound) {
      options_.warn("session " + std::string(session_id) + ": blob " + sha +
                    " is missing in the source; its descriptor is kept and reads as missing");
      lost.insert(sha);
      continue;
    }
    if (!bytes) return bytes.error();
    if (blob::Sha256Hex(*bytes) != sha) {
      return Status::Corruption("the source's blob " + sha +
                                " does not hash to its name; run `sessiondb verify` there");
    }
    // Stored unless some namespace stored these very bytes already; one at a
    // time, so a restore of many large blobs holds one at once.
    RETURN_IF_ERROR(EnsureBlobs(c, {sha}, Now(), [&](const std::string&) {
      return Result<std::string>(std::move(*bytes));
    }));
  }
  if (!batch.rows.seqs.empty()) {
    if (lost.empty()) {
      RETURN_IF_ERROR(InsertEvents(c, ns_, session_id, batch.rows));
    } else {
      // No reference to a lost blob: one would let this namespace read the
      // bytes the day another namespace stores them.
      EventRows rows = batch.rows;
      rows.ref_shas.clear();
      rows.ref_seqs.clear();
      for (size_t i = 0; i < batch.rows.ref_shas.size(); ++i) {
        if (lost.contains(batch.rows.ref_shas[i])) continue;
        rows.ref_shas.push_back(batch.rows.ref_shas[i]);
        rows.ref_seqs.push_back(batch.rows.ref_seqs[i]);
      }
      RETURN_IF_ERROR(InsertEvents(c, ns_, session_id, rows));
    }
  }
  return AddUsage(c, ns_, session_id, batch.usage);
}

Status PgStore::InsertRestoredSession(const store::SessionRow& row, std::span<const Event> events,
                                      const BlobSourceFn& blob_source) {
  ASSIGN_OR_RETURN(RestoreBatch batch, EncodeRestore(row.id, events));

  Status restored = Run([&](PgConnection& c) -> Status {
    ASSIGN_OR_RETURN(PgTransaction txn, PgTransaction::Begin(&c));
    if (!row.parent_id.empty()) {
      // The parent may be a deleted one kept for its forks: it still counts.
      PgParams q;
      q.Add(ns_).Add(row.parent_id);
      ASSIGN_OR_RETURN(PgResult parent,
                       c.Exec("SELECT last_seq FROM sessions WHERE namespace = $1 AND id = $2 "
                              "FOR SHARE",
                              q));
      if (parent.rows() == 0 || parent.Int(0, 0) < row.fork_seq) {
        return MissingForkParent(row.id, row.parent_id, row.fork_seq);
      }
    }
    const PgSealer& sealer = c.sealer();
    PgParams p;
    p.Add(ns_).Add(row.id).Add(sealer.Text(PgColumn::kSessionTitle, row.id, row.title));
    p.Add(row.title_fixed).Add(sealer.Text(PgColumn::kSessionPreview, row.id, row.preview));
    p.Add(row.created_ms).Add(row.updated_ms).Add(row.message_count).Add(row.archived);
    p.Add(sealer.Text(PgColumn::kSessionMetadata, row.id, row.metadata_json)).Add(row.last_seq);
    if (row.parent_id.empty()) {
      p.AddNull();
    } else {
      p.Add(row.parent_id);
    }
    p.Add(row.fork_seq);
    ASSIGN_OR_RETURN(PgResult r,
                     c.Exec("INSERT INTO sessions (namespace, id, title, title_fixed, preview, "
                            "created_ms, updated_ms, message_count, last_seq, archived, metadata, "
                            "parent_id, fork_seq) "
                            "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $11, $9, $10, $12, $13) "
                            "ON CONFLICT (namespace, id) DO NOTHING",
                            p));
    if (r.Affected() == 0) return SessionIdTaken(row.id);
    RETURN_IF_ERROR(InsertRestored(c, row.id, batch, blob_source));
    return txn.Commit();
  });
  if (restored.ok()) AfterBulkLoad(1 + std::ssize(events));
  return restored;
}

Status PgStore::InsertRestoredEvents(std::string_view session_id, std::span<const Event> events,
                                     const BlobSourceFn& blob_source, int64_t rewound_messages) {
  ASSIGN_OR_RETURN(RestoreBatch batch, EncodeRestore(session_id, events));
  bool tried_commit = false;  // a retry may follow a COMMIT that got no answer
  Status restored = Run([&](PgConnection& c) -> Status {
    ASSIGN_OR_RETURN(PgTransaction txn, PgTransaction::Begin(&c));
    PgParams q;
    q.Add(ns_).Add(session_id);
    ASSIGN_OR_RETURN(PgResult row,
                     c.Exec("SELECT last_seq, message_count, title_fixed, title, preview, "
                            "updated_ms FROM sessions WHERE namespace = $1 AND id = $2 "
                            "AND NOT deleted FOR UPDATE",
                            q));
    if (row.rows() == 0) return SessionNotFound(session_id);
    // Already there (a retry after an unanswered COMMIT): nothing to do.
    const int64_t last_seq = row.Int(0, 0);
    if (tried_commit && last_seq >= events.back().seq) {
      PgParams id;
      id.Add(ns_).Add(batch.rows.ids.back());
      ASSIGN_OR_RETURN(PgResult there,
                       c.Exec("SELECT 1 FROM events WHERE namespace = $1 AND id = $2", id));
      if (there.rows() > 0) return txn.Commit();
    }
    const PgSealer& sealer = c.sealer();
    IndexEntry entry;
    entry.last_seq = last_seq;
    entry.message_count = row.Int(0, 1);
    entry.title_fixed = row.Bool(0, 2);
    ASSIGN_OR_RETURN(entry.title,
                     sealer.OpenText(PgColumn::kSessionTitle, session_id, row.Text(0, 3)));
    ASSIGN_OR_RETURN(entry.preview,
                     sealer.OpenText(PgColumn::kSessionPreview, session_id, row.Text(0, 4)));
    int64_t updated_ms = row.Int(0, 5);
    RETURN_IF_ERROR(ValidateRestoredRun(session_id, last_seq, events));
    RETURN_IF_ERROR(InsertRestored(c, session_id, batch, blob_source));
    ApplyRestoredToIndex(events, batch.message_count - rewound_messages, &entry, &updated_ms);
    PgParams u;
    u.Add(ns_).Add(session_id).Add(entry.last_seq).Add(entry.message_count).Add(updated_ms);
    u.Add(sealer.Text(PgColumn::kSessionTitle, session_id, entry.title)).Add(entry.title_fixed);
    u.Add(sealer.Text(PgColumn::kSessionPreview, session_id, entry.preview));
    RETURN_IF_ERROR(
        c.Run("UPDATE sessions SET last_seq = $3, message_count = $4, "
              "updated_ms = $5, title = $6, title_fixed = $7, preview = $8 "
              "WHERE namespace = $1 AND id = $2",
              u));
    tried_commit = true;
    return txn.Commit();
  });
  if (restored.ok()) AfterBulkLoad(std::ssize(events));
  return restored;
}

}  // namespace sessiondb::postgres
