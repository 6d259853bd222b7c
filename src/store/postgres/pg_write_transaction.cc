// The primitives of a write transaction (store/write_transaction.h) on
// PostgreSQL: each statement confined to the store's namespace, each row
// lock the call names held until the commit. RunWriteTransaction runs the
// work in one transaction on a pooled connection and runs it again after a
// transient failure, telling it when an earlier COMMIT may have landed.
#include <algorithm>
#include <chrono>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/json_parse.h"
#include "core/message_codec.h"
#include "store/forget_rules.h"
#include "store/key_envelope.h"
#include "store/postgres/pg_erasure_horizon.h"
#include "store/postgres/pg_index.h"
#include "store/postgres/pg_namespace_key.h"
#include "store/postgres/pg_search_docs.h"
#include "store/postgres/pg_store_internal.h"

namespace sessiondb::postgres {
namespace {

const char* LockClause(store::RowLock lock) {
  return lock == store::RowLock::kShare ? " FOR SHARE" : " FOR UPDATE";
}

class PgWriteTransaction final : public store::WriteTransaction {
 public:
  PgWriteTransaction(PgConnection& c, const std::string& ns, bool commit_may_have_landed,
                     const StoreOptions& options)
      : c_(c), ns_(ns), commit_may_have_landed_(commit_may_have_landed), options_(options) {}

  // The namespace's new data key when this transaction destroyed the old one.
  const std::optional<cipher::SecretKey>& new_data_key() const { return new_data_key_; }

  bool earlier_commit_may_have_landed() const override { return commit_may_have_landed_; }

  Result<std::optional<Session>> LockSession(std::string_view id, store::RowLock lock) override {
    PgParams p;
    p.Add(ns_).Add(id);
    const std::string sql = std::string("SELECT ") + kSessionColumns +
                            " FROM sessions WHERE namespace = $1 AND id = $2 AND NOT deleted" +
                            LockClause(lock);
    ASSIGN_OR_RETURN(std::vector<Session> found, SelectSessions(sql, p));
    if (found.empty()) return std::optional<Session>();
    return std::optional<Session>(std::move(found.front()));
  }

  Result<std::vector<Session>> LockArchivedBefore(int64_t before_ms) override {
    PgParams p;
    p.Add(ns_).Add(before_ms);
    return SelectSessions(std::string("SELECT ") + kSessionColumns +
                              " FROM sessions WHERE namespace = $1 AND archived AND NOT deleted "
                              "AND updated_ms < $2 ORDER BY id FOR UPDATE",
                          p);
  }

  Result<std::optional<std::string>> LockDeletedSession(std::string_view id) override {
    PgParams p;
    p.Add(ns_).Add(id);
    ASSIGN_OR_RETURN(PgResult r,
                     c_.Exec("SELECT coalesce(parent_id, '') FROM sessions WHERE "
                             "namespace = $1 AND id = $2 AND deleted AND trashed_ms IS NULL "
                             "FOR UPDATE",
                             p));
    if (r.rows() == 0) return std::optional<std::string>();
    return std::optional<std::string>(std::string(r.Text(0, 0)));
  }

  Result<bool> HasForks(std::string_view id) override {
    PgParams p;
    p.Add(ns_).Add(id);
    ASSIGN_OR_RETURN(PgResult r, c_.Exec("SELECT 1 FROM sessions WHERE namespace = $1 AND "
                                         "parent_id = $2 LIMIT 1",
                                         p));
    return r.rows() > 0;
  }

  Status HideSession(std::string_view id) override {
    static constexpr const char* kHide[] = {
        "UPDATE sessions SET deleted = true, trashed_ms = NULL WHERE namespace = $1 AND id = $2",
        "DELETE FROM active_sessions WHERE namespace = $1 AND session_id = $2",
        "DELETE FROM drafts WHERE namespace = $1 AND session_id = $2",
    };
    PgParams p;
    p.Add(ns_).Add(id);
    for (const char* sql : kHide) RETURN_IF_ERROR(c_.Run(sql, p));
    return Status::Ok();
  }

  Status EraseSession(std::string_view id) override {
    static constexpr const char* kDeletes[] = {
        "DELETE FROM events WHERE namespace = $1 AND session_id = $2",
        "DELETE FROM blob_refs WHERE namespace = $1 AND session_id = $2",
        "DELETE FROM usage_totals WHERE namespace = $1 AND session_id = $2",
        "DELETE FROM usage_days WHERE namespace = $1 AND session_id = $2",
        "DELETE FROM drafts WHERE namespace = $1 AND session_id = $2",
        "DELETE FROM active_sessions WHERE namespace = $1 AND session_id = $2",
        "DELETE FROM sessions WHERE namespace = $1 AND id = $2",
    };
    PgParams p;
    p.Add(ns_).Add(id);
    for (const char* sql : kDeletes) RETURN_IF_ERROR(c_.Run(sql, p));
    return Status::Ok();
  }

  Result<std::vector<Session>> LockAllSessions() override {
    PgParams p;
    p.Add(ns_);
    return SelectSessions(std::string("SELECT ") + kSessionColumns +
                              " FROM sessions WHERE namespace = $1 ORDER BY id FOR UPDATE",
                          p);
  }

  Result<std::optional<Session>> LockTrashedSession(std::string_view id) override {
    PgParams p;
    p.Add(ns_).Add(id);
    ASSIGN_OR_RETURN(std::vector<Session> found,
                     SelectSessions(std::string("SELECT ") + kSessionColumns +
                                        " FROM sessions WHERE namespace = $1 AND id = $2 "
                                        "AND trashed_ms IS NOT NULL FOR UPDATE",
                                    p));
    if (found.empty()) return std::optional<Session>();
    return std::optional<Session>(std::move(found.front()));
  }

  Result<std::vector<Session>> LockTrashedBefore(int64_t before_ms) override {
    PgParams p;
    p.Add(ns_).Add(before_ms);
    return SelectSessions(std::string("SELECT ") + kSessionColumns +
                              " FROM sessions WHERE namespace = $1 AND trashed_ms IS NOT NULL "
                              "AND trashed_ms < $2 ORDER BY id FOR UPDATE",
                          p);
  }

  Status MoveToTrash(std::string_view id, int64_t trashed_ms) override {
    PgParams p;
    p.Add(ns_).Add(id).Add(trashed_ms);
    RETURN_IF_ERROR(
        c_.Run("UPDATE sessions SET deleted = true, trashed_ms = $3 "
               "WHERE namespace = $1 AND id = $2",
               p));
    PgParams q;
    q.Add(ns_).Add(id);
    return c_.Run("DELETE FROM active_sessions WHERE namespace = $1 AND session_id = $2", q);
  }

  Status TakeOutOfTrash(std::string_view id) override {
    PgParams p;
    p.Add(ns_).Add(id);
    return c_.Run(
        "UPDATE sessions SET deleted = false, trashed_ms = NULL "
        "WHERE namespace = $1 AND id = $2 AND trashed_ms IS NOT NULL",
        p);
  }

  Status EraseSessionRows(std::string_view id, store::ErasedRows* erased) override {
    RETURN_IF_ERROR(internal::ToStatus(CountSessionRows(id, erased)));
    // The code writes and file versions it owns: its own, and the hook's
    // under the agent session it was imported from, while its row still
    // says which. The triggers drop the writes' documents, vectors and edits.
    ASSIGN_OR_RETURN(std::vector<std::string> agents, AgentSessionsOf(id));
    PgParams w;
    w.Add(ns_).Add(PgArray(agents));
    RETURN_IF_ERROR(
        c_.Run("DELETE FROM code_writes WHERE namespace = $1 AND session_id = ANY($2::text[])", w));
    PgParams f;
    f.Add(ns_).Add(PgArray(agents)).Add(kFileVersionRefSession);
    RETURN_IF_ERROR(
        c_.Run("WITH gone AS (DELETE FROM file_versions WHERE namespace = $1 AND "
               "agent_session = ANY($2::text[]) RETURNING id) DELETE FROM blob_refs WHERE "
               "namespace = $1 AND session_id = $3 AND seq IN (SELECT id FROM gone)",
               f));
    RETURN_IF_ERROR(EraseSession(id));
    ++erased->sessions;
    return Status::Ok();
  }

  Result<bool> CountSessionRows(std::string_view id, store::ErasedRows* erased) override {
    // Its code writes are its own and the hook's of its agent session (as
    // EraseSessionRows erases them); its documents, its messages' and theirs.
    ASSIGN_OR_RETURN(std::vector<std::string> agents, AgentSessionsOf(id));
    PgParams p;
    p.Add(ns_).Add(id);
    PgParams q;
    q.Add(ns_).Add(id).Add(PgArray(agents));
    ASSIGN_OR_RETURN(
        PgResult counts,
        c_.Exec("WITH docs AS (SELECT doc_id FROM search_docs WHERE namespace = $1 AND "
                "(session_id = $2 OR code_id IN (SELECT id FROM code_writes WHERE "
                "namespace = $1 AND session_id = ANY($3::text[])))) "
                "SELECT (SELECT count(*) FROM events WHERE namespace = $1 AND session_id = $2), "
                "(SELECT count(*) FROM events WHERE namespace = $1 AND session_id = $2 "
                "  AND type = 'message'), "
                "(SELECT count(*) FROM drafts WHERE namespace = $1 AND session_id = $2), "
                "(SELECT count(*) FROM usage_totals WHERE namespace = $1 AND session_id = $2) + "
                "(SELECT count(*) FROM usage_days WHERE namespace = $1 AND session_id = $2), "
                "(SELECT count(*) FROM code_writes WHERE namespace = $1 AND "
                "  session_id = ANY($3::text[])), "
                "(SELECT count(*) FROM docs), "
                "(SELECT count(*) FROM embeddings WHERE namespace = $1 AND doc_id IN "
                "  (SELECT doc_id FROM docs))",
                q));
    erased->events += counts.Int(0, 0);
    erased->messages += counts.Int(0, 1);
    erased->drafts += counts.Int(0, 2);
    erased->usage_rows += counts.Int(0, 3);
    erased->code_writes += counts.Int(0, 4);
    erased->search_documents += counts.Int(0, 5);
    erased->embeddings += counts.Int(0, 6);
    ASSIGN_OR_RETURN(PgResult blobs, c_.Exec("SELECT DISTINCT ON (sha256) sha256, digest FROM "
                                             "blob_refs WHERE namespace = $1 AND "
                                             "session_id = $2 ORDER BY sha256",
                                             p));
    for (int i = 0; i < blobs.rows(); ++i) {
      ASSIGN_OR_RETURN(std::string digest, BlobDigestOfRow(c_.sealer(), blobs, i, 0));
      erased->blobs.insert(std::move(digest));
    }
    // The file versions of the agent sessions it stands for, with the
    // digests of their contents as their blob references hold them (the
    // receipt and gc speak digests; an encrypted namespace's version rows
    // hold keyed names).
    PgParams f;
    f.Add(ns_).Add(PgArray(agents));
    ASSIGN_OR_RETURN(PgResult versions,
                     c_.Exec("SELECT count(*) FROM file_versions WHERE namespace = $1 AND "
                             "agent_session = ANY($2::text[])",
                             f));
    f.Add(kFileVersionRefSession);
    erased->file_versions += versions.Int(0, 0);
    ASSIGN_OR_RETURN(PgResult digests,
                     c_.Exec("SELECT DISTINCT ON (r.sha256) r.sha256, r.digest FROM blob_refs r "
                             "JOIN file_versions v ON v.namespace = r.namespace AND v.id = r.seq "
                             "WHERE r.namespace = $1 AND r.session_id = $3 AND "
                             "v.agent_session = ANY($2::text[]) ORDER BY r.sha256",
                             f));
    for (int i = 0; i < digests.rows(); ++i) {
      ASSIGN_OR_RETURN(std::string digest, BlobDigestOfRow(c_.sealer(), digests, i, 0));
      erased->blobs.insert(std::move(digest));
    }
    ASSIGN_OR_RETURN(PgResult exists,
                     c_.Exec("SELECT 1 FROM sessions WHERE namespace = $1 AND id = $2", p));
    return exists.rows() > 0;
  }

  Status EraseCodeWrites(std::string_view project, store::ErasedRows* erased) override {
    // A folder holds its subfolders: "/src/app" holds "/src/app/lib".
    std::string prefix(project);
    if (!prefix.empty() && prefix.back() != '/') prefix += '/';
    RETURN_IF_ERROR(EraseFileVersionsUnder(project, prefix, erased));
    PgParams p;
    std::string where;
    if (c_.sealer().encrypted() && !project.empty()) {
      // The project and path are sealed: the writes are picked in the process.
      ASSIGN_OR_RETURN(std::vector<int64_t> ids,
                       CodeWritesWhere(c_, ns_, [&](std::string_view in, std::string_view path) {
                         return in == project || in.starts_with(prefix) || path.starts_with(prefix);
                       }));
      p.Add(ns_).Add(PgArray(ids));
      where = " WHERE namespace = $1 AND id = ANY($2::bigint[])";
    } else {
      p.Add(ns_).Add(project).Add(prefix);
      where =
          " WHERE namespace = $1 AND ($2 = '' OR project = $2 OR starts_with(project, $3) "
          "OR starts_with(file_path, $3))";
    }
    ASSIGN_OR_RETURN(
        PgResult counts,
        c_.Exec(("WITH gone AS (SELECT id FROM code_writes" + where +
                 ") SELECT (SELECT count(*) FROM gone), "
                 "(SELECT count(*) FROM search_docs WHERE namespace = $1 AND code_id IN "
                 "  (SELECT id FROM gone)), "
                 "(SELECT count(*) FROM embeddings WHERE namespace = $1 AND doc_id IN "
                 "  (SELECT doc_id FROM search_docs WHERE namespace = $1 AND code_id IN "
                 "    (SELECT id FROM gone)))")
                    .c_str(),
                p));
    erased->code_writes += counts.Int(0, 0);
    erased->search_documents += counts.Int(0, 1);
    erased->embeddings += counts.Int(0, 2);
    return c_.Run(("DELETE FROM code_writes" + where).c_str(), p);
  }

  Result<std::vector<store::BlobCandidate>> BlobsNoLongerReferenced(
      const std::set<std::string>& sha256s) override {
    std::vector<store::BlobCandidate> gone;
    if (sha256s.empty()) return gone;
    const BlobNames named =
        NameBlobs(c_.sealer(), std::vector<std::string>(sha256s.begin(), sha256s.end()));
    PgParams p;
    p.Add(PgArray(named.names));
    // Blobs are shared by every namespace: one goes only when none refers to it.
    ASSIGN_OR_RETURN(PgResult r, c_.Exec("SELECT b.sha256, b.size FROM blobs b WHERE "
                                         "b.sha256 = ANY($1::text[]) AND NOT EXISTS "
                                         "(SELECT 1 FROM blob_refs r WHERE r.sha256 = b.sha256) "
                                         "ORDER BY b.sha256",
                                         p));
    const bool keyed = c_.sealer().encrypted();
    for (int i = 0; i < r.rows(); ++i) {
      const std::string name(r.Text(i, 0));
      gone.push_back({named.digests.at(name), r.Int(i, 1), keyed ? name : std::string()});
    }
    std::sort(gone.begin(), gone.end(),
              [](const auto& a, const auto& b) { return a.sha256 < b.sha256; });
    return gone;
  }

  // The GIN index is rewritten by ScrubAfterErasure's VACUUM FULL; no
  // vector index is saved on PostgreSQL.
  // The graphs each machine keeps of the namespace's vectors (in its cache
  // folder, pg_vector_cache.h) still hold what was erased: their epochs go,
  // so every machine empties its folder at its next read and scans exactly
  // until the next build.
  Status ScrubDerivedIndexes() override {
    PgParams p;
    p.Add(ns_);
    return c_.Run("DELETE FROM index_meta WHERE namespace = $1 AND starts_with(key, 'hnsw:')", p);
  }

  Result<int64_t> AppendLedgerEntry(const LedgerEntry& entry) override {
    PgParams p;
    p.Add(ns_).Add(entry.ts_ms).Add(entry.actor).Add(entry.action).Add(entry.scope);
    p.Add(store::EncodeCounts(entry.counts)).Add(entry.receipt_id).Add(entry.receipt_digest);
    ASSIGN_OR_RETURN(PgResult r, c_.Exec("INSERT INTO forget_ledger (namespace, ts_ms, actor, "
                                         "action, scope, counts, receipt_id, receipt_digest) "
                                         "VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id",
                                         p));
    return r.Int(0, 0);
  }

  Result<std::string> DestroyDataKey() override {
    if (!c_.sealer().encrypted()) return std::string();
    std::string destroyed;
    ASSIGN_OR_RETURN(cipher::SecretKey key, ReplaceNamespaceDataKey(c_, ns_, options_.key_file,
                                                                    options_.clock(), &destroyed));
    new_data_key_ = key;
    return destroyed;
  }

  Result<std::string> CurrentDataKeyId() override {
    ASSIGN_OR_RETURN(std::optional<std::string> envelope, ReadNamespaceEnvelope(c_, ns_));
    if (!envelope) return std::string();
    ASSIGN_OR_RETURN(store::EnvelopeInfo info,
                     store::DescribeKeyEnvelope(*envelope, "namespace '" + ns_ + "'"));
    return info.key_id;
  }

  Result<std::vector<Segment>> ReadHistorySegments(std::string_view id) override {
    return ResolveHistory(c_, ns_, id);
  }

  Result<int64_t> CountOtherEvents(std::span<const Segment> segments) override {
    if (segments.empty()) return int64_t{0};
    std::vector<std::string> ids;
    std::vector<int64_t> from, to;
    for (const Segment& s : segments) {
      ids.push_back(s.session_id);
      from.push_back(s.from_seq);
      to.push_back(s.to_seq);
    }
    PgParams p;
    p.Add(ns_).Add(PgArray(ids)).Add(PgArray(from)).Add(PgArray(to));
    // Counted on the partial index of events that are not messages.
    ASSIGN_OR_RETURN(PgResult n, c_.Exec("SELECT coalesce(sum((SELECT count(*) FROM events e WHERE "
                                         "e.namespace = $1 AND e.session_id = g.session_id AND "
                                         "e.seq >= g.from_seq AND e.seq <= g.to_seq AND "
                                         "e.type <> 'message')), 0)::bigint FROM "
                                         "unnest($2::text[], $3::bigint[], $4::bigint[]) "
                                         "AS g(session_id, from_seq, to_seq)",
                                         p));
    return n.Int(0, 0);
  }

  Result<std::vector<store::StoredMessageText>> ReadMessageTexts(const Segment& segment,
                                                                 int64_t limit) override {
    PgParams p;
    p.Add(ns_).Add(segment.session_id).Add(segment.from_seq).Add(segment.to_seq).Add(limit);
    ASSIGN_OR_RETURN(PgResult r, c_.Exec("SELECT seq, role, text, id FROM events WHERE "
                                         "namespace = $1 AND session_id = $2 AND seq >= $3 "
                                         "AND seq <= $4 AND type = 'message' ORDER BY seq "
                                         "LIMIT $5",
                                         p));
    std::vector<store::StoredMessageText> texts;
    texts.reserve(static_cast<size_t>(r.rows()));
    for (int i = 0; i < r.rows(); ++i) {
      ASSIGN_OR_RETURN(std::string text,
                       c_.sealer().OpenText(PgColumn::kEventText, r.Text(i, 3), r.Text(i, 2)));
      texts.push_back({.seq = r.Int(i, 0),
                       .role = ParseRole(r.Text(i, 1)).value_or(Role::kUser),
                       .text = std::move(text)});
    }
    return texts;
  }

  Result<std::optional<Session>> InsertForkRow(const store::SessionRow& row) override {
    // The parent's title, preview and metadata, sealed again under the fork's id.
    const PgSealer& sealer = c_.sealer();
    PgParams p;
    p.Add(ns_).Add(row.id).Add(sealer.Text(PgColumn::kSessionTitle, row.id, row.title));
    p.Add(row.title_fixed).Add(sealer.Text(PgColumn::kSessionPreview, row.id, row.preview));
    p.Add(row.created_ms).Add(row.updated_ms).Add(row.message_count).Add(row.last_seq);
    p.Add(sealer.Text(PgColumn::kSessionMetadata, row.id, row.metadata_json));
    p.Add(row.parent_id).Add(row.fork_seq);
    const std::string sql =
        std::string(
            "INSERT INTO sessions (namespace, id, title, title_fixed, preview, created_ms, "
            "updated_ms, message_count, last_seq, archived, metadata, parent_id, fork_seq) "
            "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, false, $10, $11, $12) "
            "ON CONFLICT (namespace, id) DO NOTHING RETURNING ") +
        kSessionColumns;
    ASSIGN_OR_RETURN(std::vector<Session> inserted, SelectSessions(sql, p));
    if (inserted.empty()) return std::optional<Session>();
    return std::optional<Session>(std::move(inserted.front()));
  }

  Result<std::optional<Event>> ReadOwnEvent(std::string_view session_id, int64_t seq) override {
    const std::vector<Segment> own = {{std::string(session_id), seq, seq}};
    ASSIGN_OR_RETURN(std::vector<Event> found, ReadSegments(c_, ns_, own, HistoryQuery{}));
    if (found.empty()) return std::optional<Event>();
    return std::optional<Event>(std::move(found.front()));
  }

  Result<std::vector<Event>> ReadOwnRewinds(std::string_view session_id, int64_t from_seq,
                                            int64_t to_seq) override {
    if (from_seq > to_seq) return std::vector<Event>();
    const std::vector<Segment> own = {{std::string(session_id), from_seq, to_seq}};
    return ReadSegments(c_, ns_, own, HistoryQuery{.filter = EventFilter::kRewinds});
  }

  Result<std::vector<store::StoredMessageText>> ReadOwnMessages(std::string_view session_id,
                                                                int64_t from_seq,
                                                                int64_t to_seq) override {
    PgParams p;
    p.Add(ns_).Add(session_id).Add(from_seq).Add(to_seq);
    ASSIGN_OR_RETURN(PgResult r, c_.Exec("SELECT seq, role, body, text, id FROM events WHERE "
                                         "namespace = $1 AND session_id = $2 AND seq >= $3 "
                                         "AND seq <= $4 AND type = 'message' ORDER BY seq",
                                         p));
    std::vector<store::StoredMessageText> messages;
    const PgSealer& sealer = c_.sealer();
    for (int i = 0; i < r.rows(); ++i) {
      const std::string_view id = r.Text(i, 4);
      ASSIGN_OR_RETURN(std::string text, sealer.OpenText(PgColumn::kEventText, id, r.Text(i, 3)));
      std::optional<std::string> body;
      if (!r.IsNull(i, 2)) {
        ASSIGN_OR_RETURN(body, sealer.OpenText(PgColumn::kEventBody, id, r.Text(i, 2)));
      }
      Message stored;
      RETURN_IF_ERROR(DecodeMessageBody(
          body ? std::optional<std::string_view>(*body) : std::nullopt, text, &stored));
      messages.push_back({.seq = r.Int(i, 0),
                          .role = ParseRole(r.Text(i, 1)).value_or(Role::kUser),
                          .pruned = stored.pruned,
                          .text = std::move(text)});
    }
    return messages;
  }

  Status UpdateTitleAndPreview(std::string_view id, std::string_view title,
                               std::string_view preview) override {
    PgParams p;
    p.Add(ns_).Add(id).Add(c_.sealer().Text(PgColumn::kSessionTitle, id, title));
    p.Add(c_.sealer().Text(PgColumn::kSessionPreview, id, preview));
    return c_.Run("UPDATE sessions SET title = $3, preview = $4 WHERE namespace = $1 AND id = $2",
                  p);
  }

  Result<int64_t> ReplaceBodies(std::string_view session_id,
                                std::span<const store::BodyUpdate> updates) override {
    std::vector<int64_t> seqs;
    std::vector<std::string> bodies;
    std::vector<std::string> texts;
    for (const store::BodyUpdate& update : updates) seqs.push_back(update.seq);
    // Sealed under each event's id, which the update names only by seq.
    std::map<int64_t, std::string> ids;
    if (c_.sealer().encrypted()) {
      PgParams q;
      q.Add(ns_).Add(session_id).Add(PgArray(seqs));
      ASSIGN_OR_RETURN(PgResult r, c_.Exec("SELECT seq, id FROM events WHERE namespace = $1 AND "
                                           "session_id = $2 AND seq = ANY($3::bigint[])",
                                           q));
      for (int i = 0; i < r.rows(); ++i) ids.emplace(r.Int(i, 0), r.Text(i, 1));
    }
    // A text-only message has no body (NULL); no body is ever empty text.
    for (const store::BodyUpdate& update : updates) {
      const std::string& id = ids[update.seq];  // empty when plaintext (unused)
      bodies.push_back(update.body ? c_.sealer().Text(PgColumn::kEventBody, id, *update.body) : "");
      texts.push_back(c_.sealer().Text(PgColumn::kEventText, id, update.text));
    }
    PgParams p;
    p.Add(ns_).Add(session_id).Add(PgArray(seqs)).Add(PgArray(bodies)).Add(PgArray(texts));
    ASSIGN_OR_RETURN(
        PgResult updated,
        c_.Exec("UPDATE events e SET text = u.text, body = NULLIF(u.body, '') FROM unnest("
                "$3::bigint[], $4::text[], $5::text[]) AS u(seq, body, text) WHERE "
                "e.namespace = $1 AND e.session_id = $2 AND e.seq = u.seq",
                p));
    // The update left their documents to be indexed again (schema v3 trigger).
    RETURN_IF_ERROR(IndexPendingDocuments(c_, ns_));
    return updated.Affected();
  }

  Result<std::set<std::string>> DropBlobReferences(std::string_view session_id,
                                                   std::span<const int64_t> seqs) override {
    PgParams p;
    p.Add(ns_).Add(session_id).Add(PgArray(std::vector<int64_t>(seqs.begin(), seqs.end())));
    ASSIGN_OR_RETURN(PgResult dropped,
                     c_.Exec("DELETE FROM blob_refs WHERE namespace = $1 AND session_id = $2 AND "
                             "seq = ANY($3::bigint[]) RETURNING sha256, digest",
                             p));
    std::set<std::string> named;
    for (int i = 0; i < dropped.rows(); ++i) {
      ASSIGN_OR_RETURN(std::string digest, BlobDigestOfRow(c_.sealer(), dropped, i, 0));
      named.insert(std::move(digest));
    }
    return named;
  }

 private:
  // Erases the file versions of `project` (its own, and those of paths under
  // `prefix`, its folder with a trailing slash), with the blob references
  // that kept their contents; the whole namespace's when `project` is empty.
  Status EraseFileVersionsUnder(std::string_view project, const std::string& prefix,
                                store::ErasedRows* erased) {
    if (!c_.sealer().encrypted()) {
      PgParams p;
      p.Add(ns_).Add(project).Add(prefix).Add(kFileVersionRefSession);
      // A data-modifying WITH runs whole whether or not its rows are read.
      ASSIGN_OR_RETURN(
          PgResult gone,
          c_.Exec("WITH gone AS (DELETE FROM file_versions WHERE namespace = $1 AND ($2 = '' OR "
                  "project = $2 OR starts_with(project, $3) OR starts_with(file_path, $3)) "
                  "RETURNING id, sha256), refs AS (DELETE FROM blob_refs WHERE namespace = $1 "
                  "AND session_id = $4 AND seq IN (SELECT id FROM gone)) "
                  "SELECT sha256, count(*) FROM gone GROUP BY sha256",
                  p));
      for (int i = 0; i < gone.rows(); ++i) {
        erased->file_versions += gone.Int(i, 1);
        if (!gone.IsNull(i, 0)) erased->blobs.emplace(gone.Text(i, 0));
      }
      return Status::Ok();
    }
    // Encrypted: paths and projects are tokens, which match no prefix. The
    // versions of a project are opened and picked in the process; all of
    // them go without opening any (a damaged one does not stop an erasure
    // of everything). The digests come from the references that go.
    std::optional<std::vector<int64_t>> ids;  // none: every version
    if (!project.empty()) {
      ASSIGN_OR_RETURN(ids, FileVersionsUnder(project, prefix));
      if (ids->empty()) return Status::Ok();
    }
    PgParams versions, refs;
    versions.Add(ns_);
    refs.Add(ns_).Add(kFileVersionRefSession);
    std::string versions_where, refs_where;
    if (ids) {
      versions.Add(PgArray(*ids));
      refs.Add(PgArray(*ids));
      versions_where = " AND id = ANY($2::bigint[])";
      refs_where = " AND seq = ANY($3::bigint[])";
    }
    ASSIGN_OR_RETURN(PgResult gone,
                     c_.Exec(("WITH gone AS (DELETE FROM file_versions WHERE namespace = $1" +
                              versions_where + " RETURNING id) SELECT count(*) FROM gone")
                                 .c_str(),
                             versions));
    erased->file_versions += gone.Int(0, 0);
    ASSIGN_OR_RETURN(PgResult dropped,
                     c_.Exec(("DELETE FROM blob_refs WHERE namespace = $1 AND session_id = $2" +
                              refs_where + " RETURNING sha256, digest")
                                 .c_str(),
                             refs));
    for (int i = 0; i < dropped.rows(); ++i) {
      ASSIGN_OR_RETURN(std::string digest, BlobDigestOfRow(c_.sealer(), dropped, i, 0));
      erased->blobs.insert(std::move(digest));
    }
    return Status::Ok();
  }

  // The ids of the encrypted namespace's file versions of `project` (as
  // EraseFileVersionsUnder means it), each opened, a page at a time so that
  // memory stays bounded whatever the namespace holds.
  Result<std::vector<int64_t>> FileVersionsUnder(std::string_view project,
                                                 const std::string& prefix) {
    constexpr int64_t kPage = 5000;
    const std::string sql = std::string("SELECT ") + kFileVersionColumns +
                            " FROM file_versions WHERE namespace = $1 AND id > $2 ORDER BY id "
                            "LIMIT " +
                            std::to_string(kPage);
    std::vector<int64_t> ids;
    for (int64_t after = 0;;) {
      PgParams p;
      p.Add(ns_).Add(after);
      ASSIGN_OR_RETURN(PgResult r, c_.Exec(sql.c_str(), p));
      for (int i = 0; i < r.rows(); ++i) {
        ASSIGN_OR_RETURN(FileVersion v, FileVersionFromRow(c_.sealer(), r, i));
        after = v.id;
        if (v.project == project || v.project.starts_with(prefix) ||
            v.file_path.starts_with(prefix)) {
          ids.push_back(v.id);
        }
      }
      if (r.rows() < kPage) return ids;
    }
  }

  // The agent sessions whose file versions are session `id`'s: its own id,
  // and the session it was imported from (metadata source_session_id: a
  // Claude Code transcript's sessionId, which its hook records versions
  // under) while its row is there to say so. A fork carries its parent's
  // metadata, but the agent's versions are the parent's: only a root names
  // its source.
  Result<std::vector<std::string>> AgentSessionsOf(std::string_view id) {
    std::vector<std::string> agents = {std::string(id)};
    PgParams p;
    p.Add(ns_).Add(id);
    ASSIGN_OR_RETURN(PgResult r,
                     c_.Exec("SELECT metadata FROM sessions WHERE namespace = $1 AND id = $2"
                             " AND parent_id IS NULL",
                             p));
    if (r.rows() == 0) return agents;
    ASSIGN_OR_RETURN(std::string metadata,
                     c_.sealer().OpenText(PgColumn::kSessionMetadata, id, r.Text(0, 0)));
    // Metadata that is not a JSON object names no source: only the id applies.
    Result<nlohmann::json> parsed = ParseJson(metadata);
    if (!parsed || !parsed->is_object()) return agents;
    auto source = parsed->find("source_session_id");
    if (source != parsed->end() && source->is_string()) {
      std::string source_id = source->get<std::string>();
      // One holding a NUL names no row: no stored text can hold one.
      if (!source_id.empty() && source_id != id && source_id.find('\0') == std::string::npos) {
        agents.push_back(std::move(source_id));
      }
    }
    return agents;
  }

  Result<std::vector<Session>> SelectSessions(const std::string& sql, const PgParams& p) {
    ASSIGN_OR_RETURN(PgResult r, c_.Exec(sql.c_str(), p));
    std::vector<Session> sessions;
    sessions.reserve(static_cast<size_t>(r.rows()));
    for (int i = 0; i < r.rows(); ++i) {
      ASSIGN_OR_RETURN(Session s, SessionFromRow(c_.sealer(), r, i));
      sessions.push_back(std::move(s));
    }
    return sessions;
  }

  PgConnection& c_;
  const std::string& ns_;
  const bool commit_may_have_landed_;
  const StoreOptions& options_;
  std::optional<cipher::SecretKey> new_data_key_;
};

}  // namespace

Status PgStore::RunWriteTransaction(const store::WriteOptions&, const store::WriteWork& work) {
  // Set once an attempt has sent its COMMIT, until an answer says it failed:
  // the next attempt is told its work may already stand.
  bool commit_sent = false;
  std::optional<cipher::SecretKey> new_data_key;
  RETURN_IF_ERROR(Run([&](PgConnection& c) -> Status {
    PgWriteTransaction primitives(c, ns_, commit_sent, options_);
    ASSIGN_OR_RETURN(PgTransaction txn, PgTransaction::Begin(&c));
    RETURN_IF_ERROR(work(primitives));
    commit_sent = true;
    RETURN_IF_ERROR(txn.Commit());
    new_data_key = primitives.new_data_key();
    return Status::Ok();
  }));
  // Crypto-shredding committed: from now on this store seals with the new key.
  if (new_data_key) pool_.SetSealer(std::make_shared<const PgSealer>(*new_data_key));
  return Status::Ok();
}

Status PgStore::ScrubAfterErasure() {
  // A deleted row's bytes stay in its heap page (plain VACUUM marks the
  // space free and overwrites nothing), in its TOAST chunks and in index
  // pages (the GIN index holds the words). VACUUM FULL writes each table
  // and its indexes anew and unlinks the old files (truncated now, removed
  // at the next checkpoint). It locks each table for its whole rewrite, for
  // every namespace: the price of an erasure that leaves no page behind
  // (docs/retention.md). It cannot run in a transaction: after the commit,
  // and after the blob rows the erasure freed are deleted.
  static constexpr const char* kTables[] = {
      "sessions",     "events",      "blob_refs",    "blobs",
      "usage_totals", "usage_days",  "drafts",       "code_writes",
      "code_edits",   "search_docs", "embeddings",   "active_sessions",
      "hook_seen",    "index_meta",  "search_vocab", "file_versions",
  };
  //
  // VACUUM FULL keeps a row that an older transaction could still see
  // (pg_erasure_horizon.h): it waits for those first, as long as a writer
  // waits for a lock. Past that it vacuums anyway, and says which remain.
  const std::chrono::milliseconds bound(options_.busy_timeout_ms);
  return Run([&](PgConnection& c) -> Status {
    ASSIGN_OR_RETURN(ErasureHorizon horizon, WaitForOlderTransactions(c, bound));
    for (const char* table : kTables) {
      RETURN_IF_ERROR(c.Run((std::string("VACUUM (FULL, ANALYZE) ") + table).c_str()));
    }
    if (horizon.clear) return Status::Ok();
    return Status::Busy(
        "its rows are gone, but transactions older than it were still open after " +
        std::to_string(bound.count()) + " ms (server pids " + horizon.holders +
        "; see pg_stat_activity), and until they end the tables' files keep the erased "
        "rows' bytes as dead tuples: end them, then run VACUUM FULL on the store's tables "
        "(docs/retention.md)");
  });
}

}  // namespace sessiondb::postgres
