#include "store/postgres/pg_store.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <thread>

#include "blob/data_uri.h"
#include "blob/sha256.h"
#include "core/json_parse.h"
#include "core/message_codec.h"
#include "core/search_text.h"
#include "core/text_rules.h"
#include "core/uuid.h"
#include "store/forget_rules.h"
#include "store/postgres/pg_namespace_key.h"
#include "store/postgres/pg_schema.h"
#include "store/postgres/pg_search_docs.h"
#include "store/postgres/pg_store_internal.h"
#include "store/store_common.h"
#include "store/usage_rules.h"

namespace sessiondb::postgres {
namespace {

namespace fs = std::filesystem;

std::string WithoutPassword(const std::string& uri) {
  const size_t scheme = uri.find("://");
  if (scheme == std::string::npos) return uri;
  const size_t at = uri.find('@', scheme + 3);
  const size_t slash = uri.find('/', scheme + 3);
  if (at == std::string::npos || (slash != std::string::npos && slash < at)) return uri;
  const size_t colon = uri.find(':', scheme + 3);
  if (colon == std::string::npos || colon > at) return uri;
  return uri.substr(0, colon) + ":***" + uri.substr(at);
}

}  // namespace

Result<Session> SessionFromRow(const PgSealer& sealer, const PgResult& r, int row) {
  Session s;
  s.id = r.Text(row, 0);
  ASSIGN_OR_RETURN(s.title, sealer.OpenText(PgColumn::kSessionTitle, s.id, r.Text(row, 1)));
  ASSIGN_OR_RETURN(s.preview, sealer.OpenText(PgColumn::kSessionPreview, s.id, r.Text(row, 2)));
  s.created_ms = r.Int(row, 3);
  s.updated_ms = r.Int(row, 4);
  s.message_count = r.Int(row, 5);
  s.last_seq = r.Int(row, 6);
  s.archived = r.Bool(row, 7);
  ASSIGN_OR_RETURN(s.metadata_json,
                   sealer.OpenText(PgColumn::kSessionMetadata, s.id, r.Text(row, 8)));
  if (!r.IsNull(row, 9)) s.parent_id = r.Text(row, 9);
  s.fork_seq = r.Int(row, 10);
  s.trashed_ms = r.Int(row, 11);
  return s;
}

std::optional<std::string> SealedBlobDigest(const PgSealer& sealer, std::string_view name,
                                            std::string_view sha256) {
  if (!sealer.encrypted()) return std::nullopt;
  return sealer.Text(PgColumn::kBlobDigest, name, sha256);
}

BlobNames NameBlobs(const PgSealer& sealer, const std::vector<std::string>& sha256s) {
  BlobNames named;
  for (const std::string& sha : sha256s) named.digests.emplace(sealer.BlobName(sha), sha);
  for (const auto& [name, sha] : named.digests) named.names.push_back(name);
  return named;
}

Result<std::string> BlobDigestOfRow(const PgSealer& sealer, const PgResult& r, int row,
                                    int name_col) {
  const std::string_view name = r.Text(row, name_col);
  if (r.IsNull(row, name_col + 1)) return std::string(name);  // a plaintext row
  Result<std::string> digest =
      sealer.OpenText(PgColumn::kBlobDigest, name, r.Text(row, name_col + 1));
  if (!digest || !blob::IsSha256Hex(*digest)) {
    return Err(Status::Corruption("the digest kept with blob " + std::string(name) +
                                  " does not open with this namespace's key (changed, or "
                                  "another namespace's blob); run `sessiondb verify`"));
  }
  return digest;
}

Status CheckNoNul(std::string_view text, const std::string& what) {
  if (text.find('\0') == std::string_view::npos) return Status::Ok();
  return Status::InvalidArgument(what +
                                 " contains a NUL character, which a PostgreSQL store "
                                 "cannot hold");
}

Result<PgLocation> ParsePgUri(const std::string& uri) {
  PgLocation loc;
  loc.display = WithoutPassword(uri);
  const size_t q = uri.find('?');
  if (q == std::string::npos) {
    loc.conninfo = uri;
    return loc;
  }
  std::string kept;
  size_t start = q + 1;
  while (start <= uri.size()) {
    size_t end = uri.find('&', start);
    if (end == std::string::npos) end = uri.size();
    const std::string param = uri.substr(start, end - start);
    if (param.rfind("namespace=", 0) == 0) {
      loc.namespace_name = param.substr(10);
      if (loc.namespace_name.empty()) {
        return Err(Status::InvalidArgument("the namespace parameter of " + loc.display +
                                           " is empty; give a name or leave it out"));
      }
    } else if (!param.empty()) {
      kept += (kept.empty() ? "" : "&") + param;
    }
    start = end + 1;
  }
  loc.conninfo = uri.substr(0, q) + (kept.empty() ? "" : "?" + kept);
  return loc;
}

namespace {

// The session settings of a store's connections (PgConnection::Connect).
PgSettings SessionSettings(const StoreOptions& options) {
  PgSettings settings = {{"lock_timeout", std::to_string(options.busy_timeout_ms)},
                         {"client_min_messages", "warning"},
                         {"application_name", "sessiondb"},
                         // JIT compiling a search over 20,000 matches cost
                         // 35 ms of its 230: the store's statements are
                         // short, never worth compiling.
                         {"jit", "off"}};
  if (options.durability == Durability::kDurable) settings.emplace_back("synchronous_commit", "on");
  return settings;
}

// How the store's pool uses the server's connections: an idle connection is
// closed after $SESSIONDB_PG_IDLE_SECONDS (10; 0 closes each when returned),
// a server with no free slot is waited for as long as a lock is.
PgPoolLimits PoolLimits(const StoreOptions& options) {
  PgPoolLimits limits{.max_connections = std::max(1, options.max_connections),
                      .slot_wait = std::chrono::milliseconds(options.busy_timeout_ms)};
  if (const char* idle = std::getenv("SESSIONDB_PG_IDLE_SECONDS"); idle && *idle) {
    char* end = nullptr;
    const double seconds = std::strtod(idle, &end);
    if (end != idle && *end == '\0' && seconds >= 0) {
      limits.idle_timeout = std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000));
    }
  }
  return limits;
}

}  // namespace

PgStore::PgStore(PgLocation location, std::string ns, StoreOptions options)
    : location_(std::move(location)),
      ns_(std::move(ns)),
      options_(std::move(options)),
      pool_(location_.conninfo, SessionSettings(options_), PoolLimits(options_),
            // Held while the connection lives: no conversion of the namespace
            // starts while this store could go on writing under the old key.
            // Not behind a pooler in transaction mode, where a session-level
            // lock would stay on a server connection other clients share
            // (docs/postgres.md, "Many agents").
            [ns = ns_](PgConnection& c) {
              return c.transaction_pooled() ? Status::Ok() : HoldNamespaceOpen(c, ns);
            }) {}

Result<std::unique_ptr<store::Backend>> PgStore::Open(const std::string& uri,
                                                      const StoreOptions& given) {
  ASSIGN_OR_RETURN(PgLocation location, ParsePgUri(uri));
  if (!given.namespace_name.empty() && !location.namespace_name.empty() &&
      given.namespace_name != location.namespace_name) {
    return Err(Status::InvalidArgument("namespace '" + given.namespace_name +
                                       "' was asked for, but the store URI names namespace '" +
                                       location.namespace_name + "'; give one of them"));
  }
  ASSIGN_OR_RETURN(std::string ns,
                   ResolveNamespace(given.namespace_name.empty() ? location.namespace_name
                                                                 : given.namespace_name));
  ASSIGN_OR_RETURN(StoreOptions options, WithDefaults(given));
  std::unique_ptr<PgStore> store(new PgStore(std::move(location), std::move(ns), options));
  const std::string where = store->location_.display;
  // What an open almost always finds, in one statement outside a
  // transaction: the schema current, and whether documents wait for the
  // full-text index. nullopt: the long way (no store yet, an older schema,
  // where the statement fails as a table is missing).
  Result<std::optional<bool>> current =
      store->Run([&](PgConnection& c) -> Result<std::optional<bool>> {
        PgParams p;
        p.Add(store->ns_);
        Result<PgResult> r = c.Exec(
            "SELECT (SELECT value FROM sessiondb_meta WHERE key = 'schema_version'), "
            "EXISTS (SELECT 1 FROM search_docs WHERE namespace = $1 AND tsv IS NULL)",
            p);
        if (!r && c.retryable()) return Err(r.error());
        if (!r || r->rows() != 1 || r->IsNull(0, 0) ||
            r->Text(0, 0) != std::to_string(kPgSchemaVersion)) {
          return std::optional<bool>();
        }
        return std::optional<bool>(r->Bool(0, 1));
      });
  if (!current || !current->has_value()) {
    Status migrated = store->Run(
        [&](PgConnection& c) { return MigratePgSchema(&c, options.create_if_missing, where); });
    if (!migrated.ok()) {
      if (migrated.message().find(where) != std::string::npos) return Err(migrated);
      return Err(Status(migrated.code(), "opening " + where + ": " + migrated.message()));
    }
  }
  // The namespace's key, before anything of its content is read or written.
  const std::string ns_where = "namespace '" + store->ns_ + "' of " + where;
  Result<std::optional<cipher::SecretKey>> key = store->Run(
      [&](PgConnection& c) { return LoadNamespaceDataKey(c, store->ns_, ns_where, options); });
  if (!key) return Err(key.error());
  if (*key) store->pool_.SetSealer(std::make_shared<const PgSealer>(**key));
  // Blobs in object storage, when the environment names a bucket.
  ASSIGN_OR_RETURN(std::optional<ObjectTierConfig> tier, ObjectTierFromEnvironment());
  if (tier) store->objects_ = MakeObjectTier(*tier);
  // Events a store held before schema v3 have documents not indexed yet.
  if (!current || !current->has_value() || **current) {
    Status indexed = store->IndexUnindexedDocuments();
    if (!indexed.ok()) {
      return Err(Status(indexed.code(), "opening " + where + ": indexing its events for search: " +
                                            indexed.message()));
    }
  }
  return std::unique_ptr<store::Backend>(std::move(store));
}

Status PgStore::IndexUnindexedDocuments() {
  // A page per transaction: an upgraded store of a million events is not
  // indexed in one transaction that a restart would throw away.
  constexpr int kPage = 512;
  while (true) {
    Result<bool> more = Run([&](PgConnection& c) -> Result<bool> {
      ASSIGN_OR_RETURN(PgTransaction txn, PgTransaction::Begin(&c));
      ASSIGN_OR_RETURN(std::optional<int64_t> last,
                       IndexDocuments(c, ns_, 0, kPage, /*only_pending=*/true));
      RETURN_IF_ERROR(txn.Commit());
      return last.has_value();
    });
    if (!more) return more.error();
    if (!*more) return Status::Ok();
  }
}

std::string PgStore::NewId() const { return NewUuidV7(Now()); }

// ---- Sessions ---------------------------------------------------------------

Status PgStore::CheckStorableText(std::string_view text, std::string_view what) {
  return CheckNoNul(text, std::string(what));
}

Result<Session> PgStore::InsertSession(const store::SessionRow& row) {
  const std::string& id = row.id;
  const std::string& title = row.title;
  const std::string& metadata = row.metadata_json;
  const bool title_fixed = row.title_fixed;
  const int64_t now = row.created_ms;

  bool sent = false;  // an earlier attempt's INSERT may have committed unanswered
  Result<Session> created = Run([&](PgConnection& c) -> Result<Session> {
    const bool retrying_after_send = sent;
    const PgSealer& sealer = c.sealer();
    PgParams p;
    p.Add(ns_).Add(id).Add(sealer.Text(PgColumn::kSessionTitle, id, title)).Add(title_fixed);
    p.Add(now).Add(sealer.Text(PgColumn::kSessionMetadata, id, metadata));
    // The empty preview too: in an encrypted namespace every stored value opens.
    p.Add(sealer.Text(PgColumn::kSessionPreview, id, ""));
    sent = true;
    ASSIGN_OR_RETURN(PgResult r,
                     c.Exec("INSERT INTO sessions (namespace, id, title, title_fixed, created_ms, "
                            "updated_ms, metadata, preview) VALUES ($1, $2, $3, $4, $5, $5, $6, "
                            "$7) ON CONFLICT (namespace, id) DO NOTHING RETURNING id, title, "
                            "preview, created_ms, updated_ms, message_count, last_seq, archived, "
                            "metadata, parent_id, fork_seq, coalesce(trashed_ms, 0)",
                            p));
    if (r.rows() == 1) return SessionFromRow(sealer, r, 0);
    PgParams q;
    q.Add(ns_).Add(id);
    ASSIGN_OR_RETURN(PgResult existing,
                     c.Exec("SELECT id, title, preview, created_ms, updated_ms, message_count, "
                            "last_seq, archived, metadata, parent_id, fork_seq, "
                            "coalesce(trashed_ms, 0), deleted "
                            "FROM sessions WHERE namespace = $1 AND id = $2",
                            q));
    // Ours after all, if an earlier attempt's answer was lost on the way back.
    // A deleted session kept for its forks still holds its id.
    if (existing.rows() == 1 && retrying_after_send && existing.Int(0, 3) == now &&
        existing.Int(0, 5) == 0 && existing.IsNull(0, 9) && !existing.Bool(0, 12)) {
      Result<Session> mine = SessionFromRow(sealer, existing, 0);
      if (mine && mine->metadata_json == metadata) return mine;
    }
    return Err(SessionIdTaken(id));
  });
  // Many sessions created one by one (a setup, a migration script) leave the
  // planner as stale as a bulk load does.
  if (created) AfterBulkLoad(1);
  return created;
}

Result<Session> PgStore::LoadSession(std::string_view id) {
  return Run([&](PgConnection& c) -> Result<Session> {
    PgParams p;
    p.Add(ns_).Add(id);
    ASSIGN_OR_RETURN(PgResult r, c.Exec("SELECT id, title, preview, created_ms, updated_ms, "
                                        "message_count, last_seq, archived, metadata, parent_id, "
                                        "fork_seq, coalesce(trashed_ms, 0) FROM sessions "
                                        "WHERE namespace = $1 AND id = $2 AND NOT deleted",
                                        p));
    if (r.rows() == 0) return Err(SessionNotFound(id));
    return SessionFromRow(c.sealer(), r, 0);
  });
}

namespace {

// True if the session's metadata holds `key` with `value`, as `metadata::jsonb
// ->> key = value` says: a string member as it is, any other value but null
// as its JSON text.
bool MetadataMatches(const std::string& metadata_json, const std::string& key,
                     const std::string& value) {
  Result<nlohmann::json> metadata = ParseJson(metadata_json);
  if (!metadata || !metadata->is_object()) return false;
  auto it = metadata->find(key);
  if (it == metadata->end() || it->is_null()) return false;
  return (it->is_string() ? it->get<std::string>() : it->dump()) == value;
}

// At most max_rows sessions of `ns` that `query` asks for, filtered by the
// server on metadata_key (empty: no filter) rather than query's.
Result<std::vector<Session>> SelectSessionRows(PgConnection& c, const std::string& ns,
                                               const store::SessionQuery& query,
                                               const std::string& metadata_key, int64_t max_rows) {
  const bool paged = query.after.has_value();
  const int64_t archived = query.archived == ArchiveFilter::kAll        ? -1
                           : query.archived == ArchiveFilter::kArchived ? 1
                                                                        : 0;
  PgParams p;
  p.Add(ns).Add(archived);
  if (metadata_key.empty()) {
    p.AddNull();
  } else {
    p.Add(metadata_key);
  }
  p.Add(query.metadata_value).Add(max_rows);
  if (paged) p.Add(query.after->first).Add(query.after->second);
  static constexpr const char* kFirstPage =
      "SELECT id, title, preview, created_ms, updated_ms, message_count, last_seq, archived, "
      "metadata, parent_id, fork_seq, coalesce(trashed_ms, 0) FROM sessions WHERE "
      "namespace = $1 AND NOT deleted AND "
      "($2 < 0 OR archived = ($2 = 1)) AND "
      "($3::text IS NULL OR (metadata::jsonb ->> $3::text) = $4) "
      "ORDER BY updated_ms DESC, id DESC LIMIT $5";
  static constexpr const char* kNextPage =
      "SELECT id, title, preview, created_ms, updated_ms, message_count, last_seq, archived, "
      "metadata, parent_id, fork_seq, coalesce(trashed_ms, 0) FROM sessions WHERE "
      "namespace = $1 AND NOT deleted AND "
      "($2 < 0 OR archived = ($2 = 1)) AND "
      "($3::text IS NULL OR (metadata::jsonb ->> $3::text) = $4) "
      "AND (updated_ms, id) < ($6, $7) ORDER BY updated_ms DESC, id DESC LIMIT $5";
  // The trash: its sessions whatever their archived flag ($2 stays bound).
  std::string sql = paged ? kNextPage : kFirstPage;
  if (query.trash) {
    static constexpr std::string_view kLive = "NOT deleted AND ($2 < 0 OR archived = ($2 = 1))";
    sql.replace(sql.find(kLive), kLive.size(), "trashed_ms IS NOT NULL AND $2 = $2");
  }
  ASSIGN_OR_RETURN(PgResult r, c.Exec(sql.c_str(), p));
  std::vector<Session> sessions;
  sessions.reserve(static_cast<size_t>(r.rows()));
  for (int i = 0; i < r.rows(); ++i) {
    ASSIGN_OR_RETURN(Session s, SessionFromRow(c.sealer(), r, i));
    sessions.push_back(std::move(s));
  }
  return sessions;
}

}  // namespace

Result<std::vector<Session>> PgStore::SelectSessions(const store::SessionQuery& query) {
  return Run([&](PgConnection& c) -> Result<std::vector<Session>> {
    // Sealed metadata cannot be filtered by the server: read pages without
    // the filter and keep the matches, until max_rows match or the rows end.
    if (query.metadata_key.empty() || !c.sealer().encrypted()) {
      return SelectSessionRows(c, ns_, query, query.metadata_key, query.max_rows);
    }
    std::vector<Session> matched;
    store::SessionQuery page = query;
    const int64_t page_rows = std::max<int64_t>(query.max_rows, 256);
    while (static_cast<int64_t>(matched.size()) < query.max_rows) {
      ASSIGN_OR_RETURN(std::vector<Session> rows, SelectSessionRows(c, ns_, page, "", page_rows));
      if (rows.empty()) break;
      const bool last_page = static_cast<int64_t>(rows.size()) < page_rows;
      page.after = std::make_pair(rows.back().updated_ms, rows.back().id);
      for (Session& s : rows) {
        if (static_cast<int64_t>(matched.size()) == query.max_rows) break;
        if (MetadataMatches(s.metadata_json, query.metadata_key, query.metadata_value)) {
          matched.push_back(std::move(s));
        }
      }
      if (last_page) break;
    }
    return matched;
  });
}

Status PgStore::UpdateTitle(std::string_view id, std::string_view clean) {
  return Run([&](PgConnection& c) -> Status {
    PgParams p;
    p.Add(ns_).Add(id).Add(c.sealer().Text(PgColumn::kSessionTitle, id, clean));
    ASSIGN_OR_RETURN(PgResult r, c.Exec("UPDATE sessions SET title = $3, title_fixed = true "
                                        "WHERE namespace = $1 AND id = $2 AND NOT deleted",
                                        p));
    if (r.Affected() == 0) return SessionNotFound(id);
    return Status::Ok();
  });
}

Status PgStore::UpdateArchived(std::string_view id, bool archived) {
  return Run([&](PgConnection& c) -> Status {
    PgParams p;
    p.Add(ns_).Add(id).Add(archived);
    ASSIGN_OR_RETURN(PgResult r, c.Exec("UPDATE sessions SET archived = $3 "
                                        "WHERE namespace = $1 AND id = $2 AND NOT deleted",
                                        p));
    if (r.Affected() == 0) return SessionNotFound(id);
    return Status::Ok();
  });
}

Result<std::optional<std::string>> PgStore::LoadActiveSession() {
  return Run([&](PgConnection& c) -> Result<std::optional<std::string>> {
    PgParams p;
    p.Add(ns_);
    ASSIGN_OR_RETURN(PgResult r,
                     c.Exec("SELECT session_id FROM active_sessions WHERE namespace = $1", p));
    if (r.rows() == 0) return std::optional<std::string>();
    return std::optional<std::string>(std::string(r.Text(0, 0)));
  });
}

// Settings live in the namespace's rows of index_meta, beside the index's
// watermarks, under a prefix of their own so neither overwrites the other.
Result<std::optional<std::string>> PgStore::LoadSetting(std::string_view key) {
  return Run([&](PgConnection& c) -> Result<std::optional<std::string>> {
    const std::string row = "setting:" + std::string(key);
    PgParams p;
    p.Add(ns_).Add(row);
    ASSIGN_OR_RETURN(PgResult r,
                     c.Exec("SELECT value FROM index_meta WHERE namespace = $1 AND key = $2", p));
    if (r.rows() == 0) return std::optional<std::string>();
    ASSIGN_OR_RETURN(std::string value, c.sealer().OpenText(PgColumn::kSetting, row, r.Text(0, 0)));
    return std::optional<std::string>(std::move(value));
  });
}

Result<std::vector<LedgerEntry>> PgStore::ReadLedger(const LedgerQuery& query) {
  return Run([&](PgConnection& c) -> Result<std::vector<LedgerEntry>> {
    PgParams p;
    p.Add(ns_).Add(query.before_id).Add(query.limit);
    ASSIGN_OR_RETURN(PgResult r, c.Exec("SELECT id, ts_ms, actor, action, scope, counts, "
                                        "receipt_id, receipt_digest FROM forget_ledger "
                                        "WHERE namespace = $1 AND ($2 = 0 OR id < $2) "
                                        "ORDER BY id DESC LIMIT $3",
                                        p));
    std::vector<LedgerEntry> entries;
    entries.reserve(static_cast<size_t>(r.rows()));
    for (int i = 0; i < r.rows(); ++i) {
      entries.push_back({.id = r.Int(i, 0),
                         .ts_ms = r.Int(i, 1),
                         .actor = std::string(r.Text(i, 2)),
                         .action = std::string(r.Text(i, 3)),
                         .scope = std::string(r.Text(i, 4)),
                         .counts = store::DecodeCounts(r.Text(i, 5)),
                         .receipt_id = std::string(r.Text(i, 6)),
                         .receipt_digest = std::string(r.Text(i, 7))});
    }
    return entries;
  });
}

Status PgStore::StoreSetting(std::string_view key, std::string_view value) {
  return Run([&](PgConnection& c) -> Status {
    // Sealed under the row's key: a value moved to another setting does not open.
    const std::string row = "setting:" + std::string(key);
    PgParams p;
    p.Add(ns_).Add(row).Add(c.sealer().Text(PgColumn::kSetting, row, value));
    return c.Run(
        "INSERT INTO index_meta (namespace, key, value) VALUES ($1, $2, $3) "
        "ON CONFLICT (namespace, key) DO UPDATE SET value = excluded.value",
        p);
  });
}

Status PgStore::StoreActiveSession(std::string_view id) {
  return Run([&](PgConnection& c) -> Status {
    PgParams p;
    p.Add(ns_);
    if (id.empty()) return c.Run("DELETE FROM active_sessions WHERE namespace = $1", p);
    ASSIGN_OR_RETURN(PgTransaction txn, PgTransaction::Begin(&c));
    p.Add(id);
    // FOR SHARE: a concurrent delete of the session waits for us, or we for it.
    ASSIGN_OR_RETURN(PgResult r, c.Exec("SELECT 1 FROM sessions WHERE namespace = $1 AND "
                                        "id = $2 AND NOT deleted FOR SHARE",
                                        p));
    if (r.rows() == 0) return SessionNotFound(id);
    RETURN_IF_ERROR(
        c.Run("INSERT INTO active_sessions (namespace, session_id) VALUES ($1, $2) "
              "ON CONFLICT (namespace) DO UPDATE SET session_id = excluded.session_id",
              p));
    return txn.Commit();
  });
}

// ---- Messages ---------------------------------------------------------------

Result<bool> NamespaceHasBlob(PgConnection& c, const std::string& ns, std::string_view sha256) {
  PgParams p;
  p.Add(ns).Add(c.sealer().BlobName(sha256));
  ASSIGN_OR_RETURN(PgResult r, c.Exec("SELECT 1 FROM blob_refs r JOIN blobs b USING (sha256) "
                                      "WHERE r.namespace = $1 AND r.sha256 = $2 LIMIT 1",
                                      p));
  return r.rows() > 0;
}

Result<bool> PgStore::BlobReferenced(std::string_view sha256) {
  return Run([&](PgConnection& c) { return NamespaceHasBlob(c, ns_, sha256); });
}

bool PgStore::HoldsBlob(std::string_view sha256) {
  // A descriptor may only name a blob this namespace already refers to:
  // knowing a digest is not having the bytes.
  auto r = BlobReferenced(sha256);
  return r && *r;
}

// Inserts, inside the caller's transaction, each blob of `needed` that the
// store lacks, taking a share lock on those it has so garbage collection
// cannot delete them before the caller's references commit. `bytes_of`
// gives the bytes of a missing blob, or kNotFound.
Status EnsureBlobs(PgConnection& c, const std::vector<std::string>& needed, int64_t now,
                   const std::function<Result<std::string>(const std::string&)>& bytes_of,
                   const ObjectUploads* uploads) {
  if (needed.empty()) return Status::Ok();
  const PgSealer& sealer = c.sealer();
  std::vector<std::string> names;
  names.reserve(needed.size());
  for (const std::string& sha : needed) names.push_back(sealer.BlobName(sha));
  PgParams p;
  p.Add(PgArray(names));
  ASSIGN_OR_RETURN(PgResult present, c.Exec("SELECT sha256 FROM blobs WHERE sha256 = "
                                            "ANY($1::text[]) FOR SHARE",
                                            p));
  std::set<std::string> have;
  for (int i = 0; i < present.rows(); ++i) have.emplace(present.Text(i, 0));
  for (size_t i = 0; i < needed.size(); ++i) {
    const std::string& name = names[i];
    if (have.contains(name)) continue;
    if (uploads) {
      auto upload = uploads->find(name);
      ASSIGN_OR_RETURN(bool claimed, upload == uploads->end() ? Result<bool>(false)
                                                              : ClaimUpload(c, upload->second));
      if (claimed) {
        // Its object was stored and read back before this transaction began.
        ASSIGN_OR_RETURN(std::string bytes, bytes_of(needed[i]));
        PgParams insert;
        insert.Add(name).Add(static_cast<int64_t>(bytes.size())).Add(now).AddBytes("");
        insert.AddOptional(SealedBlobDigest(sealer, name, needed[i])).Add(upload->second.key);
        RETURN_IF_ERROR(
            c.Run("INSERT INTO blobs (sha256, size, created_ms, bytes, digest, location) VALUES "
                  "($1, $2, $3, $4, $5, $6) ON CONFLICT (sha256) DO NOTHING",
                  insert));
        continue;
      }
    }
    ASSIGN_OR_RETURN(std::string bytes, bytes_of(needed[i]));
    // The size stays in the clear (docs/encryption.md): gc and stats read it.
    const int64_t size = static_cast<int64_t>(bytes.size());
    if (sealer.encrypted()) bytes = sealer.Bytes(PgColumn::kBlob, name, bytes);
    PgParams insert;
    insert.Add(name).Add(size).Add(now).AddBytes(bytes);
    if (std::optional<std::string> digest = SealedBlobDigest(sealer, name, needed[i])) {
      insert.Add(*digest);
    } else {
      insert.AddNull();
    }
    RETURN_IF_ERROR(
        c.Run("INSERT INTO blobs (sha256, size, created_ms, bytes, digest) VALUES "
              "($1, $2, $3, $4, $5) ON CONFLICT (sha256) DO NOTHING",
              insert));
  }
  return Status::Ok();
}

Status InsertEvents(PgConnection& c, const std::string& ns, std::string_view session_id,
                    const EventRows& rows) {
  const PgSealer& sealer = c.sealer();
  std::vector<std::string> types = rows.types;
  types.resize(rows.seqs.size(), "message");
  PgParams p;
  p.Add(ns).Add(session_id).Add(PgArray(rows.seqs)).Add(PgArray(rows.ids));
  p.Add(PgArray(rows.ts)).Add(PgArray(rows.roles));
  if (sealer.encrypted()) {
    // Sealed under each event's id; a NULL body stays NULL (a text-only message).
    std::vector<std::string> texts;
    std::vector<std::optional<std::string>> bodies;
    texts.reserve(rows.texts.size());
    bodies.reserve(rows.bodies.size());
    for (size_t i = 0; i < rows.ids.size(); ++i) {
      texts.push_back(sealer.Text(PgColumn::kEventText, rows.ids[i], rows.texts[i]));
      bodies.push_back(rows.bodies[i] ? std::optional<std::string>(sealer.Text(
                                            PgColumn::kEventBody, rows.ids[i], *rows.bodies[i]))
                                      : std::nullopt);
    }
    p.Add(PgArray(texts)).Add(PgArray(bodies));
  } else {
    p.Add(PgArray(rows.texts)).Add(PgArray(rows.bodies));
  }
  p.Add(PgArray(types));
  Status s = c.Run(
      "INSERT INTO events (namespace, session_id, seq, id, ts_ms, type, role, text, body) "
      "SELECT $1, $2, u.seq, u.id, u.ts, u.type, u.role, u.text, u.body FROM "
      "unnest($3::bigint[], $4::text[], $5::bigint[], $6::text[], $7::text[], $8::text[], "
      "$9::text[]) AS u(seq, id, ts, role, text, body, type)",
      p);
  if (s.code() == StatusCode::kAlreadyExists) {
    return Status::AlreadyExists(
        rows.ids.size() == 1 ? "message id '" + rows.ids[0] + "' already exists in this store"
                             : "a message id of the batch already exists in this store");
  }
  RETURN_IF_ERROR(s);
  if (rows.search_texts.size() == rows.seqs.size()) {
    RETURN_IF_ERROR(AddEventDocuments(c, ns, session_id, rows.seqs, rows.search_texts));
  } else {
    std::vector<std::string> search_texts;
    search_texts.reserve(rows.seqs.size());
    for (size_t i = 0; i < rows.seqs.size(); ++i) {
      search_texts.push_back(SearchText(rows.texts[i], rows.bodies[i].value_or("")));
    }
    RETURN_IF_ERROR(AddEventDocuments(c, ns, session_id, rows.seqs, search_texts));
  }
  if (rows.ref_shas.empty()) return Status::Ok();
  std::vector<std::string> names;
  std::vector<std::optional<std::string>> digests;
  for (const std::string& sha : rows.ref_shas) {
    names.push_back(sealer.BlobName(sha));
    digests.push_back(SealedBlobDigest(sealer, names.back(), sha));
  }
  PgParams r;
  r.Add(ns).Add(session_id).Add(PgArray(names)).Add(PgArray(rows.ref_seqs));
  r.Add(PgArray(digests));
  return c.Run(
      "INSERT INTO blob_refs (namespace, sha256, session_id, seq, digest) SELECT $1, u.sha, $2, "
      "u.seq, u.digest FROM unnest($3::text[], $4::bigint[], $5::text[]) AS u(sha, seq, digest) "
      "ON CONFLICT DO NOTHING",
      r);
}

// The stored total plus the batch's, or INT64_MAX where the sum would pass
// it: totals saturate (docs/harness.md); bigint arithmetic would raise
// "bigint out of range" and fail the append instead.
#define PG_SATURATING_SUM(table, col)                                        \
  col " = CASE WHEN excluded." col " > 9223372036854775807 - " table "." col \
      " THEN 9223372036854775807 ELSE " table "." col " + excluded." col " END"
#define PG_USAGE_SUMS(table) \
  PG_SATURATING_SUM(table, "turns") ", " PG_SATURATING_SUM(           \
      table, "input_tokens") ", " PG_SATURATING_SUM(table, "output_tokens") ", " \
      PG_SATURATING_SUM(table, "cached_tokens") ", " PG_SATURATING_SUM(          \
          table, "reasoning_tokens") ", " PG_SATURATING_SUM(table, "cache_write_tokens")

void AddToUsage(UsageDelta* delta, const Message& m, int64_t ts_ms) {
  if (!m.usage) return;
  ModelUsage& u = (*delta)[{store::UtcDay(ts_ms), m.provider, m.model}];
  u.provider = m.provider;
  u.model = m.model;
  u.turns = SaturatingAdd(u.turns, 1);
  u.usage = SaturatingAdd(u.usage, *m.usage);
}

UsageDelta UsageOf(const std::vector<PreparedMessage>& prepared, int64_t ts_ms) {
  UsageDelta delta;
  for (const PreparedMessage& p : prepared) AddToUsage(&delta, p.message(), ts_ms);
  return delta;
}

Status AddUsage(PgConnection& c, const std::string& ns, std::string_view session_id,
                const UsageDelta& delta) {
  if (delta.empty()) return Status::Ok();
  // The session's totals and its days', in the caller's transaction: the two
  // tables always agree (docs/usage.md).
  std::map<std::pair<std::string, std::string>, ModelUsage> totals;
  for (const auto& [key, u] : delta) {
    ModelUsage& t = totals[{u.provider, u.model}];
    t.provider = u.provider;
    t.model = u.model;
    t.turns = SaturatingAdd(t.turns, u.turns);
    t.usage = SaturatingAdd(t.usage, u.usage);
  }
  struct Columns {
    std::vector<std::string> days, providers, models;
    std::vector<int64_t> turns, input, output, cached, reasoning, cache_write;
    void Add(const ModelUsage& u) {
      providers.push_back(u.provider);
      models.push_back(u.model);
      turns.push_back(u.turns);
      input.push_back(u.usage.input_tokens);
      output.push_back(u.usage.output_tokens);
      cached.push_back(u.usage.cached_tokens);
      reasoning.push_back(u.usage.reasoning_tokens);
      cache_write.push_back(u.usage.cache_write_tokens);
    }
    void AddTo(PgParams* p) const {
      p->Add(PgArray(providers)).Add(PgArray(models)).Add(PgArray(turns));
      p->Add(PgArray(input)).Add(PgArray(output)).Add(PgArray(cached));
      p->Add(PgArray(reasoning)).Add(PgArray(cache_write));
    }
  };
  Columns t;
  for (const auto& [key, u] : totals) t.Add(u);
  PgParams p;
  p.Add(ns).Add(session_id);
  t.AddTo(&p);
  RETURN_IF_ERROR(c.Run(
      "INSERT INTO usage_totals (namespace, session_id, provider, model, turns, input_tokens, "
      "output_tokens, cached_tokens, reasoning_tokens, cache_write_tokens) SELECT $1, $2, u.* "
      "FROM unnest($3::text[], $4::text[], $5::bigint[], $6::bigint[], $7::bigint[], "
      "$8::bigint[], $9::bigint[], $10::bigint[]) AS u ON CONFLICT (namespace, session_id, "
      "provider, model) DO UPDATE SET " PG_USAGE_SUMS("usage_totals"),
      p));
  Columns d;
  for (const auto& [key, u] : delta) {
    d.days.push_back(std::get<0>(key));
    d.Add(u);
  }
  PgParams q;
  q.Add(ns).Add(session_id);
  d.AddTo(&q);
  q.Add(PgArray(d.days));
  return c.Run(
      "INSERT INTO usage_days (namespace, session_id, provider, model, turns, input_tokens, "
      "output_tokens, cached_tokens, reasoning_tokens, cache_write_tokens, day) "
      "SELECT $1, $2, u.* FROM unnest($3::text[], $4::text[], $5::bigint[], $6::bigint[], "
      "$7::bigint[], $8::bigint[], $9::bigint[], $10::bigint[], $11::text[]) AS u "
      "ON CONFLICT (namespace, session_id, day, provider, model) DO UPDATE SET " PG_USAGE_SUMS(
          "usage_days"),
      q);
}

#undef PG_USAGE_SUMS
#undef PG_SATURATING_SUM

Result<EncodedBatch> EncodeBatch(const std::vector<PreparedMessage>& prepared) {
  EncodedBatch batch;
  std::set<std::string> needed;
  for (const PreparedMessage& p : prepared) {
    ASSIGN_OR_RETURN(std::optional<std::string> body, EncodeMessageBody(p.message()));
    batch.rows.ids.push_back(p.id);
    batch.rows.roles.emplace_back(RoleName(p.message().role));
    batch.rows.texts.push_back(p.text);
    batch.rows.search_texts.push_back(MessageSearchText(p.text, p.message()));
    batch.rows.bodies.push_back(std::move(body));
    for (const std::string& sha : p.referenced_sha256) needed.insert(sha);
    for (const PendingBlob& b : p.blobs) batch.pending.emplace(b.sha256, &b.bytes);
  }
  batch.needed.assign(needed.begin(), needed.end());
  return batch;
}

Result<int64_t> AppendInTransaction(PgConnection& c, const std::string& ns,
                                    std::string_view session_id,
                                    const std::vector<PreparedMessage>& prepared,
                                    EncodedBatch* batch, int64_t now) {
  PgParams key;
  key.Add(ns).Add(session_id);
  // The row lock queues appends to this session and no other.
  ASSIGN_OR_RETURN(PgResult s, c.Exec("SELECT last_seq, message_count, title_fixed, title, "
                                      "preview FROM sessions WHERE namespace = $1 AND id = $2 "
                                      "AND NOT deleted FOR UPDATE",
                                      key));
  if (s.rows() == 0) return Err(SessionNotFound(session_id));
  const PgSealer& sealer = c.sealer();
  IndexEntry entry;
  entry.last_seq = s.Int(0, 0);
  entry.message_count = s.Int(0, 1);
  entry.title_fixed = s.Bool(0, 2);
  ASSIGN_OR_RETURN(entry.title, sealer.OpenText(PgColumn::kSessionTitle, session_id, s.Text(0, 3)));
  ASSIGN_OR_RETURN(entry.preview,
                   sealer.OpenText(PgColumn::kSessionPreview, session_id, s.Text(0, 4)));
  auto bytes_of = [batch](const std::string& sha) -> Result<std::string> {
    auto it = batch->pending.find(sha);
    if (it != batch->pending.end()) return *it->second;
    return Err(Status::NotFound("blob " + sha +
                                " was removed from the store while the message "
                                "referring to it was being appended; append it with its bytes"));
  };
  RETURN_IF_ERROR(EnsureBlobs(c, batch->needed, now, bytes_of, &batch->uploads));

  EventRows& rows = batch->rows;
  rows.seqs.clear();
  rows.ts.assign(prepared.size(), now);
  rows.ref_shas.clear();
  rows.ref_seqs.clear();
  for (const PreparedMessage& p : prepared) {
    ApplyMessageToIndex(p.message().role, p.text, &entry);
    rows.seqs.push_back(entry.last_seq);
    for (const std::string& sha : p.referenced_sha256) {
      rows.ref_shas.push_back(sha);
      rows.ref_seqs.push_back(entry.last_seq);
    }
  }
  RETURN_IF_ERROR(InsertEvents(c, ns, session_id, rows));
  RETURN_IF_ERROR(AddUsage(c, ns, session_id, UsageOf(prepared, now)));
  PgParams u;
  u.Add(ns).Add(session_id).Add(entry.last_seq).Add(entry.message_count).Add(now);
  u.Add(sealer.Text(PgColumn::kSessionTitle, session_id, entry.title)).Add(entry.title_fixed);
  u.Add(sealer.Text(PgColumn::kSessionPreview, session_id, entry.preview));
  RETURN_IF_ERROR(
      c.Run("UPDATE sessions SET last_seq = $3, message_count = $4, "
            "updated_ms = $5, title = $6, title_fixed = $7, preview = $8 "
            "WHERE namespace = $1 AND id = $2",
            u));
  return rows.seqs.front();
}

std::vector<AppendResult> AppendResults(const std::vector<PreparedMessage>& prepared,
                                        int64_t first_seq, int64_t ts) {
  std::vector<AppendResult> results;
  for (size_t i = 0; i < prepared.size(); ++i) {
    AppendResult& out = results.emplace_back();
    out.message_id = prepared[i].id;
    out.seq = first_seq + static_cast<int64_t>(i);
    out.ts_ms = ts;
    for (const Part& part : prepared[i].message().parts) {
      if (part.resource) out.resources.push_back(*part.resource);
    }
  }
  return results;
}

Result<std::vector<AppendResult>> PgStore::InsertMessages(std::string_view session_id,
                                                          std::vector<PreparedMessage>& prepared,
                                                          const Draft* finishing) {
  ASSIGN_OR_RETURN(EncodedBatch batch, EncodeBatch(prepared));
  const std::string& first_id = batch.rows.ids.front();
  // Large blobs go to the object tier first: stored and read back before
  // any row can name them.
  if (objects_) RETURN_IF_ERROR(UploadLargeBlobs(&batch));

  bool commit_sent = false;
  auto appended = Run([&](PgConnection& c) -> Result<std::vector<AppendResult>> {
    if (commit_sent) {
      // The last attempt sent COMMIT and lost the answer: it may have landed.
      PgParams p;
      p.Add(ns_).Add(first_id);
      ASSIGN_OR_RETURN(PgResult r, c.Exec("SELECT session_id, seq, ts_ms FROM events "
                                          "WHERE namespace = $1 AND id = $2",
                                          p));
      commit_sent = false;
      if (r.rows() == 1 && r.Text(0, 0) == session_id)
        return AppendResults(prepared, r.Int(0, 1), r.Int(0, 2));
    }

    ASSIGN_OR_RETURN(PgTransaction txn, PgTransaction::Begin(&c));
    const int64_t now = Now();
    ASSIGN_OR_RETURN(int64_t first_seq,
                     AppendInTransaction(c, ns_, session_id, prepared, &batch, now));
    // The draft goes in the append's transaction: never both, never neither.
    if (finishing) RETURN_IF_ERROR(RemoveFinishedDraft(c, ns_, *finishing));
    commit_sent = true;
    RETURN_IF_ERROR(txn.Commit());
    commit_sent = false;
    return AppendResults(prepared, first_seq, now);
  });
  if (!appended && commit_sent) {
    return Err(
        Status(appended.error().code(), appended.error().message() +
                                            "; the last COMMIT got no answer, so the "
                                            "append may have been stored: look for message id '" +
                                            first_id + "' before appending it again"));
  }
  if (appended) AfterBulkLoad(std::ssize(prepared));
  return appended;
}

// ---- Blobs ------------------------------------------------------------------

Status PgStore::UploadLargeBlobs(EncodedBatch* batch) {
  for (const auto& pending : batch->pending) {
    // Named, not a structured binding: clang 14 cannot capture one.
    const std::string& sha = pending.first;
    const std::string* bytes = pending.second;
    if (!objects_->Holds(std::ssize(*bytes))) continue;
    RETURN_IF_ERROR(Run([&](PgConnection& c) -> Status {
      const PgSealer& sealer = c.sealer();
      const std::string name = sealer.BlobName(sha);
      if (batch->uploads.contains(name)) return Status::Ok();
      PgParams p;
      p.Add(name);
      // A row already names the blob (in `bytes` or an object): nothing to store.
      ASSIGN_OR_RETURN(PgResult r, c.Exec("SELECT 1 FROM blobs WHERE sha256 = $1", p));
      if (r.rows() > 0) return Status::Ok();
      const std::string stored =
          sealer.encrypted() ? sealer.Bytes(PgColumn::kBlob, name, *bytes) : *bytes;
      ASSIGN_OR_RETURN(ObjectUpload upload, objects_->Upload(c, name, stored, Now()));
      batch->uploads.emplace(name, std::move(upload));
      return Status::Ok();
    }));
  }
  return Status::Ok();
}

Result<store::BlobRemoval> PgStore::CollectObject(std::string_view key, int64_t cutoff_ms,
                                                  bool dry_run) {
  if (!objects_) return store::BlobRemoval::kInGrace;  // no client to delete it with
  // However old the row was, an upload of the same bytes in flight keeps it.
  const int64_t cutoff = std::min(cutoff_ms, Now() - objects_->grace_ms());
  return Run([&](PgConnection& c) { return objects_->Collect(c, key, cutoff, dry_run); });
}

namespace {

// The bytes of blob `sha256` stored under `name`: opened, and checked
// against the digest, when sealed. kCorruption naming the blob otherwise.
Result<std::string> OpenBlobBytes(const PgSealer& sealer, std::string_view sha256,
                                  std::string_view name, std::string_view stored) {
  if (!sealer.encrypted()) return std::string(stored);  // verify re-hashes plaintext blobs
  Result<std::string> bytes = sealer.OpenBytes(PgColumn::kBlob, name, stored);
  if (!bytes || blob::Sha256Hex(*bytes) != sha256) {
    return Err(Status::Corruption("blob " + std::string(sha256) + " (stored as " +
                                  std::string(name) +
                                  ") does not open with this namespace's key: its bytes were "
                                  "changed; they are not returned"));
  }
  return bytes;
}

// Room for a sealed blob's nonce and tag beyond its size.
constexpr int64_t kSealOverhead = 1024;

// The bytes of blob `sha256` as namespace `ns` sees them, from its row or
// its object in `objects` (null: no tier configured); kNotFound if it
// refers to no such blob.
Result<std::string> ReadBlobOn(PgConnection& c, const std::string& ns, std::string_view sha256,
                               ObjectTier* objects) {
  const std::string name = c.sealer().BlobName(sha256);
  PgParams p;
  p.Add(name).Add(ns);
  // Only blobs this namespace refers to are visible to it: checked here,
  // before any object is fetched.
  ASSIGN_OR_RETURN(PgResult r,
                   c.Exec("SELECT bytes, location, size FROM blobs WHERE sha256 = $1 AND EXISTS "
                          "(SELECT 1 FROM blob_refs WHERE namespace = $2 AND sha256 = $1)",
                          p, /*binary_result=*/true));
  if (r.rows() == 0) {
    return Err(Status::NotFound("blob " + std::string(sha256) + " is not in the store"));
  }
  if (r.IsNull(0, 1)) return OpenBlobBytes(c.sealer(), sha256, name, r.Text(0, 0));
  const std::string key(r.Text(0, 1));
  if (!objects) {
    return Err(Status::FailedPrecondition(
        "blob " + std::string(sha256) + " is kept in object storage (" + key +
        "); set $SESSIONDB_S3_ENDPOINT and $SESSIONDB_S3_BUCKET to read it"));
  }
  // The size column is binary here: the row was selected for bytes.
  int64_t size = 0;
  for (unsigned char ch : r.Text(0, 2)) size = (size << 8) | ch;
  // A plaintext object must hash to its digest; a sealed one opens only
  // under its name and is checked against the digest then.
  ASSIGN_OR_RETURN(std::string stored,
                   objects->Read(key, size + kSealOverhead,
                                 c.sealer().encrypted() ? std::string_view() : sha256));
  return OpenBlobBytes(c.sealer(), sha256, name, stored);
}

}  // namespace

Result<std::string> PgStore::ReadBlob(std::string_view sha256) {
  if (!blob::IsSha256Hex(sha256)) {
    return Err(Status::InvalidArgument("'" + std::string(sha256.substr(0, 80)) +
                                       "' is not a blob name (64 lowercase hex digits)"));
  }
  return Run([&](PgConnection& c) { return ReadBlobOn(c, ns_, sha256, objects_.get()); });
}

namespace {

// Reads a blob from the database a piece at a time (substring of the bytea),
// so a large file is never held whole by this process.
class PgBlobReader final : public BlobReader {
 public:
  using ReadFn = std::function<Result<std::string>(int64_t offset, int64_t length)>;
  PgBlobReader(int64_t size, ReadFn read) : size_(size), read_(std::move(read)) {}
  int64_t size() const override { return size_; }
  Result<std::string> Read(size_t max) override {
    const int64_t want = std::min<int64_t>(static_cast<int64_t>(max), size_ - done_);
    if (want <= 0) return std::string();
    ASSIGN_OR_RETURN(std::string piece, read_(done_, want));
    if (static_cast<int64_t>(piece.size()) != want) {
      return Err(Status::Io("a blob changed size while being read"));
    }
    done_ += want;
    return piece;
  }
  Status Skip(int64_t n) override {
    if (n < 0 || n > size_ - done_) {
      return Status::InvalidArgument("cannot skip past the end of a blob");
    }
    done_ += n;  // each piece is read by its offset
    return Status::Ok();
  }

 private:
  const int64_t size_;
  const ReadFn read_;
  int64_t done_ = 0;
};

}  // namespace

Result<std::unique_ptr<BlobReader>> PgStore::OpenBlob(std::string_view sha256) {
  if (!blob::IsSha256Hex(sha256)) {
    return Err(Status::InvalidArgument("'" + std::string(sha256.substr(0, 80)) +
                                       "' is not a blob name (64 lowercase hex digits)"));
  }
  const std::string sha(sha256);
  std::shared_ptr<const std::string> whole;  // a sealed blob's bytes, opened
  ASSIGN_OR_RETURN(int64_t size, Run([&](PgConnection& c) -> Result<int64_t> {
                     bool whole_read = c.sealer().encrypted();
                     int64_t length = 0;
                     if (!whole_read) {
                       PgParams p;
                       p.Add(sha).Add(ns_);
                       ASSIGN_OR_RETURN(
                           PgResult r,
                           c.Exec("SELECT length(bytes)::bigint, location IS NOT NULL FROM blobs "
                                  "WHERE sha256 = $1 AND EXISTS (SELECT 1 FROM blob_refs WHERE "
                                  "namespace = $2 AND sha256 = $1)",
                                  p));
                       if (r.rows() == 0) {
                         return Err(Status::NotFound("blob " + sha + " is not in the store"));
                       }
                       length = r.Int(0, 0);
                       whole_read = r.Bool(0, 1);
                     }
                     if (whole_read) {
                       // Sealed bytes open only whole (one tag over the blob),
                       // and an object is fetched and re-hashed whole: read,
                       // opened and checked at once, then served from memory.
                       ASSIGN_OR_RETURN(std::string bytes, ReadBlobOn(c, ns_, sha, objects_.get()));
                       whole = std::make_shared<const std::string>(std::move(bytes));
                       return std::ssize(*whole);
                     }
                     return length;
                   }));
  if (whole) {
    return std::unique_ptr<BlobReader>(
        new PgBlobReader(size, [whole](int64_t offset, int64_t length) -> Result<std::string> {
          return whole->substr(static_cast<size_t>(offset), static_cast<size_t>(length));
        }));
  }
  // Blobs are immutable: each piece is read by offset, on any pooled connection.
  auto read = [this, sha](int64_t offset, int64_t length) -> Result<std::string> {
    return Run([&](PgConnection& c) -> Result<std::string> {
      PgParams p;
      p.Add(sha).Add(offset + 1).Add(length);
      ASSIGN_OR_RETURN(PgResult r, c.Exec("SELECT substring(bytes FROM $2::int FOR $3::int) "
                                          "FROM blobs WHERE sha256 = $1",
                                          p, /*binary_result=*/true));
      if (r.rows() == 0) return Err(Status::NotFound("blob " + sha + " is not in the store"));
      return std::string(r.Text(0, 0));
    });
  };
  return std::unique_ptr<BlobReader>(new PgBlobReader(size, std::move(read)));
}

// ---- Housekeeping -------------------------------------------------------------

Result<std::vector<store::BlobCandidate>> PgStore::UnreferencedBlobs(int64_t* scanned) {
  std::vector<store::BlobCandidate> candidates;
  RETURN_IF_ERROR(Run([&](PgConnection& c) -> Status {
    candidates.clear();
    const PgSealer& sealer = c.sealer();
    ASSIGN_OR_RETURN(PgResult n, c.Exec("SELECT count(*) FROM blobs"));
    *scanned = n.Int(0, 0);
    ASSIGN_OR_RETURN(PgResult r, c.Exec("SELECT sha256, digest, size FROM blobs b WHERE NOT "
                                        "EXISTS (SELECT 1 FROM blob_refs r WHERE "
                                        "r.sha256 = b.sha256)"));
    // Orphans are collected by whichever namespace runs gc: each by its
    // digest when this namespace can name it, another key's by its stored
    // name (RemoveBlobIfUnreferenced takes either). A plaintext orphan is
    // left to a plaintext namespace: its digest here would name another row.
    for (int i = 0; i < r.rows(); ++i) {
      const bool plaintext_row = r.IsNull(i, 1);
      if (plaintext_row && sealer.encrypted()) continue;
      Result<std::string> digest = BlobDigestOfRow(sealer, r, i, 0);
      candidates.push_back({digest ? *digest : std::string(r.Text(i, 0)), r.Int(i, 2)});
    }
    // Objects no row names (uploads never claimed, objects of removed rows),
    // by key: RemoveBlobIfUnreferenced takes those too.
    if (objects_) {
      ASSIGN_OR_RETURN(std::vector<std::string> keys, UnnamedObjects(c));
      for (std::string& key : keys) candidates.push_back({std::move(key), 0});
    }
    return Status::Ok();
  }));
  return candidates;
}

namespace {

// The row a gc candidate names: a digest (named under this namespace's key)
// or another key's stored name, which starts with 'k' where no digest can.
std::string StoredBlobName(const PgSealer& sealer, std::string_view sha256_or_name) {
  if (sha256_or_name.starts_with('k')) return std::string(sha256_or_name);
  return sealer.BlobName(sha256_or_name);
}

}  // namespace

Result<store::RemovedBlob> PgStore::RemoveBlobIfUnreferenced(std::string_view sha256,
                                                             int64_t grace_cutoff_ms,
                                                             bool dry_run) {
  if (IsObjectKey(sha256)) {
    ASSIGN_OR_RETURN(store::BlobRemoval outcome, CollectObject(sha256, grace_cutoff_ms, dry_run));
    return store::RemovedBlob{outcome, 0};
  }
  std::optional<std::string> object;  // the key of the removed row's object
  Result<store::RemovedBlob> removed = Run([&](PgConnection& c) -> Result<store::RemovedBlob> {
    object.reset();
    ASSIGN_OR_RETURN(PgTransaction txn, PgTransaction::Begin(&c));
    PgParams p;
    p.Add(StoredBlobName(c.sealer(), sha256));
    // Appends hold a share lock on a blob they are about to refer to: once
    // this row lock is held, a new statement sees every reference that
    // committed meanwhile.
    ASSIGN_OR_RETURN(PgResult row, c.Exec("SELECT size, created_ms, location FROM blobs WHERE "
                                          "sha256 = $1 FOR UPDATE",
                                          p));
    // Gone: removed by another collector, or by an earlier attempt whose
    // COMMIT landed unanswered.
    if (row.rows() == 0) return store::RemovedBlob{store::BlobRemoval::kGone, 0};
    const int64_t size = row.Int(0, 0);
    ASSIGN_OR_RETURN(PgResult used, c.Exec("SELECT 1 FROM blob_refs WHERE sha256 = $1 LIMIT 1", p));
    if (used.rows() > 0) return store::RemovedBlob{store::BlobRemoval::kReferenced, size};
    if (row.Int(0, 1) > grace_cutoff_ms)
      return store::RemovedBlob{store::BlobRemoval::kInGrace, size};
    if (dry_run) return store::RemovedBlob{store::BlobRemoval::kRemoved, size};
    RETURN_IF_ERROR(c.Run("DELETE FROM blobs WHERE sha256 = $1", p));
    // The object outlives its row until gc deletes it: a crash after this
    // commit leaves its tombstone, never a row without its object.
    if (!row.IsNull(0, 2)) {
      object = std::string(row.Text(0, 2));
      RETURN_IF_ERROR(ForgetObject(c, *object));
    }
    RETURN_IF_ERROR(txn.Commit());
    return store::RemovedBlob{store::BlobRemoval::kRemoved, size};
  });
  if (removed && object) {
    Result<store::BlobRemoval> collected = CollectObject(*object, grace_cutoff_ms, false);
    if (!collected) {
      options_.warn(
          "blob " + std::string(sha256) + " was removed, but its object " + *object +
          " was not deleted (`sessiondb gc` deletes it later): " + collected.error().message());
    }
  }
  return removed;
}

void PgStore::CheckDatabase(VerifyReport* report) {
  // A client of the server cannot re-read its pages: data checksums (when the
  // cluster has them) and amcheck are the administrator's.
  report->database_check =
      "PostgreSQL: every blob's bytes re-hashed; the database's pages are the server's to "
      "check (data checksums, amcheck)";
}

Result<std::vector<std::string>> PgStore::ReferencedBlobs() {
  std::vector<std::string> referenced;
  RETURN_IF_ERROR(Run([&](PgConnection& c) -> Status {
    PgParams p;
    p.Add(ns_);
    // The digest kept with any one reference: each holds it sealed afresh.
    ASSIGN_OR_RETURN(PgResult r, c.Exec("SELECT DISTINCT ON (sha256) sha256, digest "
                                        "FROM blob_refs WHERE namespace = $1 ORDER BY sha256",
                                        p));
    referenced.clear();
    for (int i = 0; i < r.rows(); ++i) {
      ASSIGN_OR_RETURN(std::string digest, BlobDigestOfRow(c.sealer(), r, i, 0));
      referenced.push_back(std::move(digest));
    }
    return Status::Ok();
  }));
  std::sort(referenced.begin(), referenced.end());
  return referenced;
}

Result<std::vector<std::string>> PgStore::StoredBlobs() {
  std::vector<std::string> stored;
  RETURN_IF_ERROR(Run([&](PgConnection& c) -> Status {
    PgParams p;
    p.Add(ns_);
    // The namespace's own: blobs other namespaces alone refer to are theirs to check.
    ASSIGN_OR_RETURN(PgResult r, c.Exec("SELECT b.sha256, b.digest FROM blobs b WHERE EXISTS "
                                        "(SELECT 1 FROM blob_refs r WHERE r.namespace = $1 AND "
                                        "r.sha256 = b.sha256) ORDER BY b.sha256",
                                        p));
    stored.clear();
    for (int i = 0; i < r.rows(); ++i) {
      ASSIGN_OR_RETURN(std::string digest, BlobDigestOfRow(c.sealer(), r, i, 0));
      stored.push_back(std::move(digest));
    }
    return Status::Ok();
  }));
  std::sort(stored.begin(), stored.end());
  return stored;
}

Result<StorageStats> PgStore::Stats() {
  return Run([&](PgConnection& c) -> Result<StorageStats> {
    StorageStats stats;
    PgParams p;
    p.Add(ns_);
    // Messages are counted where they are stored: a fork's inherited ones
    // are its parent's, and counted once. A session's own events are the
    // dense seqs fork_seq + 1 .. last_seq, and the events that are not
    // messages are few (and indexed), so nothing here reads the log.
    ASSIGN_OR_RETURN(PgResult s, c.Exec("SELECT count(*) FILTER (WHERE NOT deleted), "
                                        "count(*) FILTER (WHERE archived AND NOT deleted), "
                                        "coalesce(sum(last_seq - fork_seq), 0)::bigint - "
                                        "(SELECT count(*) FROM events WHERE namespace = $1 AND "
                                        "type <> 'message') FROM sessions WHERE namespace = $1",
                                        p));
    stats.sessions = s.Int(0, 0);
    stats.archived_sessions = s.Int(0, 1);
    stats.messages = s.Int(0, 2);
    ASSIGN_OR_RETURN(PgResult b, c.Exec("SELECT count(*), coalesce(sum(size), 0) FROM blobs "
                                        "WHERE sha256 IN (SELECT sha256 FROM blob_refs "
                                        "WHERE namespace = $1)",
                                        p));
    stats.blobs = b.Int(0, 0);
    stats.blob_bytes = b.Int(0, 1);
    ASSIGN_OR_RETURN(PgResult d, c.Exec("SELECT pg_database_size(current_database())"));
    stats.database_bytes = d.Int(0, 0);
    stats.total_bytes = stats.database_bytes;
    return stats;
  });
}

}  // namespace sessiondb::postgres
