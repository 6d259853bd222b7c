// PgStore's file versions, the code checkpoints (store.h, docs/memory.md):
// a version's blob, its row and the blob reference that names it, in one
// transaction, the blob stored as an append stores a message's (the shared
// `blobs` table, or the object tier for a large one, by the same functions);
// and the versions a query selects. Every statement is confined to the
// store's namespace, and a namespace reads a blob only through its own
// references, so one never sees another's versions or their content.
//
// In an encrypted namespace (schema 10, docs/encryption.md) a version's path,
// project, tool and digest are sealed together in `sealed` under its id;
// file_path and project hold keyed equality tokens, so the indexes, the
// unique key and every equality still work on the stored forms; tool is ''
// and sha256 the blob's keyed name. Rows are opened before anything is
// returned or compared in plaintext (BeforeSaysNothingNew).
// Thread-safety: as PgStore.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/json_parse.h"
#include "core/text_rules.h"
#include "store/postgres/pg_store_internal.h"

namespace sessiondb::postgres {

// The columns FileVersionFromRow reads, in its order.
#define PG_FILE_VERSION_COLUMNS                                                    \
  "id, agent_session, tool_use_id, file_path, phase, sha256, size, tool, source, " \
  "project, created_ms, sealed"

const char* const kFileVersionColumns = PG_FILE_VERSION_COLUMNS;

namespace {

constexpr int kSealedColumn = 11;

Status NotAVersion(const std::string& id, std::string_view why) {
  return Status::Corruption("file version " + id + " of this namespace " + std::string(why) +
                            "; it is not returned");
}

// The path, project, tool and digest `sealed` holds, checked against the
// stored forms beside it: a token or blob name changed on its own (a
// version moved to another file's history) is kCorruption as a changed seal is.
Status OpenSealedFields(const PgSealer& sealer, const PgResult& r, int row, FileVersion* v) {
  const std::string id = std::to_string(v->id);
  if (r.IsNull(row, kSealedColumn)) {
    return NotAVersion(id, "is not sealed though the namespace is encrypted");
  }
  Result<std::string> opened =
      sealer.OpenText(PgColumn::kFileVersion, id, r.Text(row, kSealedColumn));
  if (!opened) return Status::Corruption("file version " + id + ": " + opened.error().message());
  Result<nlohmann::json> parsed = ParseJson(*opened);
  auto text = [&](const char* name) -> const std::string* {
    if (!parsed || !parsed->is_object()) return nullptr;
    auto it = parsed->find(name);
    return it != parsed->end() && it->is_string() ? it->get_ptr<const std::string*>() : nullptr;
  };
  const std::string* path = text("path");
  const std::string* project = text("project");
  const std::string* tool = text("tool");
  const std::string* sha256 = text("sha256");
  if (!path || !project || !tool || !sha256) {
    return NotAVersion(id, "holds a sealed value that is not a version's fields");
  }
  const StoredVersionKeys expected =
      StoreVersionKeys(sealer, *path, *project, *tool, v->exists, *sha256);
  const bool digest_matches =
      v->exists ? (!sha256->empty() && r.Text(row, 5) == *expected.sha256) : sha256->empty();
  if (r.Text(row, 3) != expected.file_path || r.Text(row, 9) != expected.project ||
      r.Text(row, 7) != expected.tool || !digest_matches) {
    return NotAVersion(id,
                       "has a path, project, tool or digest that is not the one sealed with it");
  }
  v->file_path = *path;
  v->project = *project;
  v->tool = *tool;
  v->sha256 = v->exists ? *sha256 : std::string();
  return Status::Ok();
}

}  // namespace

StoredVersionKeys StoreVersionKeys(const PgSealer& sealer, std::string_view file_path,
                                   std::string_view project, std::string_view tool, bool exists,
                                   std::string_view sha256) {
  StoredVersionKeys keys;
  if (exists) keys.sha256 = sealer.BlobName(sha256);
  if (!sealer.encrypted()) {
    keys.file_path = file_path;
    keys.project = project;
    keys.tool = tool;
    return keys;
  }
  keys.file_path = StoredVersionPath(sealer, file_path);
  if (!project.empty()) keys.project = EditToken(sealer, PgColumn::kCodeProject, project);
  return keys;
}

std::string StoredVersionPath(const PgSealer& sealer, std::string_view file_path) {
  // EditToken is deterministic under the key: the by_file index, the unique
  // key and equality work on it as on the path.
  return sealer.encrypted() ? EditToken(sealer, PgColumn::kCodeFilePath, file_path)
                            : std::string(file_path);
}

std::optional<std::string> SealVersion(const PgSealer& sealer, int64_t id, const FileVersion& v) {
  if (!sealer.encrypted()) return std::nullopt;
  const nlohmann::json fields = {{"path", v.file_path},
                                 {"project", v.project},
                                 {"tool", v.tool},
                                 {"sha256", v.exists ? v.sha256 : std::string()}};
  // CheckVersionText lets only valid UTF-8 in, and a conversion checks what
  // it reads; `replace` only keeps dump from throwing whatever it is given.
  return sealer.Text(PgColumn::kFileVersion, std::to_string(id),
                     fields.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

Result<FileVersion> FileVersionFromRow(const PgSealer& sealer, const PgResult& r, int row) {
  FileVersion v;
  v.id = r.Int(row, 0);
  v.agent_session = r.Text(row, 1);
  v.tool_use_id = r.Text(row, 2);
  const std::string_view phase = r.Text(row, 4);
  if (phase == FileVersionPhaseName(FileVersionPhase::kBefore)) {
    v.phase = FileVersionPhase::kBefore;
  } else if (phase == FileVersionPhaseName(FileVersionPhase::kAfter)) {
    v.phase = FileVersionPhase::kAfter;
  } else {
    return Err(Status::Corruption("file version " + std::to_string(v.id) + " has phase '" +
                                  std::string(phase.substr(0, 40)) +
                                  "'; a version is 'before' or 'after'"));
  }
  v.exists = !r.IsNull(row, 5);
  v.size = r.Int(row, 6);
  v.source = r.Text(row, 8);
  v.time_ms = r.Int(row, 10);
  if (sealer.encrypted()) {
    RETURN_IF_ERROR(OpenSealedFields(sealer, r, row, &v));
    return v;
  }
  if (!r.IsNull(row, kSealedColumn)) {
    return Err(
        NotAVersion(std::to_string(v.id), "is sealed though the namespace is not encrypted"));
  }
  v.file_path = r.Text(row, 3);
  if (v.exists) v.sha256 = r.Text(row, 5);
  v.tool = r.Text(row, 7);
  v.project = r.Text(row, 9);
  return v;
}

namespace {

Result<std::vector<FileVersion>> VersionsFromRows(const PgSealer& sealer, const PgResult& r) {
  std::vector<FileVersion> versions;
  versions.reserve(static_cast<size_t>(r.rows()));
  for (int i = 0; i < r.rows(); ++i) {
    ASSIGN_OR_RETURN(FileVersion v, FileVersionFromRow(sealer, r, i));
    versions.push_back(std::move(v));
  }
  return versions;
}

// kInvalidArgument naming the field when one holds a NUL, which a
// PostgreSQL text cannot (a parameter would be cut at it without a word),
// or when one an encrypted namespace seals as JSON is not UTF-8 (which a
// plaintext namespace's text columns refuse as well).
Status CheckVersionText(const FileVersion& v) {
  const std::pair<const std::string*, const char*> fields[] = {
      {&v.agent_session, "the agent session id of a file version"},
      {&v.tool_use_id, "the tool use id of a file version"},
      {&v.file_path, "the path of a file version"},
      {&v.tool, "the tool of a file version"},
      {&v.source, "the source of a file version"},
      {&v.project, "the project of a file version"}};
  for (const auto& [text, what] : fields) {
    RETURN_IF_ERROR(CheckNoNul(*text, what));
    if (!IsValidUtf8(*text)) {
      return Status::InvalidArgument(std::string(what) + " is not valid UTF-8");
    }
  }
  return Status::Ok();
}

// The row kept already that says what `v` would (Store::RecordFileVersion),
// if any: the row of `v`'s key (agent session, tool use, path, phase); for a
// "before", its call's "after", or the file's latest version when
// BeforeSaysNothingNew. One statement, whatever `v`: the candidates ranked,
// opened before they are compared.
Result<std::optional<FileVersion>> FindKept(PgConnection& c, const std::string& ns,
                                            const FileVersion& v) {
  PgParams p;
  p.Add(ns).Add(v.agent_session).Add(v.tool_use_id).Add(StoredVersionPath(c.sealer(), v.file_path));
  p.Add(FileVersionPhaseName(v.phase));
  ASSIGN_OR_RETURN(
      PgResult r,
      c.Exec("(SELECT " PG_FILE_VERSION_COLUMNS
             ", CASE WHEN phase = $5 THEN 0 ELSE 1 END AS rank FROM file_versions WHERE "
             "namespace = $1 AND agent_session = $2 AND tool_use_id = $3 AND file_path = $4 "
             "AND tool_use_id <> '' AND (phase = $5 OR $5 = 'before')) UNION ALL "
             "(SELECT " PG_FILE_VERSION_COLUMNS ", 2 FROM file_versions WHERE namespace = $1 AND "
             "file_path = $4 AND $5 = 'before' ORDER BY id DESC LIMIT 1) ORDER BY rank",
             p));
  for (int i = 0; i < r.rows(); ++i) {
    ASSIGN_OR_RETURN(FileVersion kept, FileVersionFromRow(c.sealer(), r, i));
    if (r.Int(i, kSealedColumn + 1) < 2 || BeforeSaysNothingNew(v, kept)) {
      return std::optional<FileVersion>(std::move(kept));
    }
  }
  return std::optional<FileVersion>();
}

// After a COMMIT whose answer was lost: the row it would have written (the
// newest row exactly like `v`, stamped with its time), if it landed. Only
// for a version without a tool use id: one with a key finds it by FindKept.
// Compared in the stored forms (tokens, the blob name), which are equal
// exactly when the values are.
Result<std::optional<FileVersion>> FindLanded(PgConnection& c, const std::string& ns,
                                              const FileVersion& v) {
  const StoredVersionKeys stored =
      StoreVersionKeys(c.sealer(), v.file_path, v.project, v.tool, v.exists, v.sha256);
  PgParams p;
  p.Add(ns).Add(v.agent_session).Add(stored.file_path).Add(FileVersionPhaseName(v.phase));
  p.AddOptional(stored.sha256);
  p.Add(v.exists ? v.size : int64_t{0}).Add(stored.tool).Add(v.source).Add(stored.project);
  p.Add(v.time_ms);
  ASSIGN_OR_RETURN(PgResult r,
                   c.Exec("SELECT " PG_FILE_VERSION_COLUMNS
                          " FROM file_versions WHERE namespace = $1 AND agent_session = $2 AND "
                          "tool_use_id = '' AND file_path = $3 AND phase = $4 AND "
                          "sha256 IS NOT DISTINCT FROM $5 AND size = $6 AND tool = $7 AND "
                          "source = $8 AND project = $9 AND created_ms = $10 "
                          "ORDER BY id DESC LIMIT 1",
                          p));
  if (r.rows() == 0) return std::optional<FileVersion>();
  ASSIGN_OR_RETURN(FileVersion landed, FileVersionFromRow(c.sealer(), r, 0));
  return std::optional<FileVersion>(std::move(landed));
}

// Inserts `v`'s row and returns it opened; no row when another writer kept
// its key first (ON CONFLICT). A plaintext namespace's id comes from the
// identity in the one statement; an encrypted one's is taken first, as the
// seal is made under it.
Result<std::optional<FileVersion>> InsertRow(PgConnection& c, const std::string& ns,
                                             const FileVersion& v) {
  const PgSealer& sealer = c.sealer();
  const StoredVersionKeys stored =
      StoreVersionKeys(sealer, v.file_path, v.project, v.tool, v.exists, v.sha256);
  PgParams p;
  p.Add(ns).Add(v.agent_session).Add(v.tool_use_id).Add(stored.file_path);
  p.Add(FileVersionPhaseName(v.phase)).AddOptional(stored.sha256);
  p.Add(v.exists ? v.size : int64_t{0}).Add(stored.tool).Add(v.source);
  p.Add(stored.project).Add(v.time_ms);
  const char* sql =
      "INSERT INTO file_versions (namespace, agent_session, tool_use_id, file_path, "
      "phase, sha256, size, tool, source, project, created_ms) VALUES ($1, $2, $3, $4, "
      "$5, $6, $7, $8, $9, $10, $11) ON CONFLICT (namespace, agent_session, "
      "tool_use_id, file_path, phase) WHERE tool_use_id <> '' DO NOTHING "
      "RETURNING " PG_FILE_VERSION_COLUMNS;
  if (sealer.encrypted()) {
    ASSIGN_OR_RETURN(PgResult next,
                     c.Exec("SELECT nextval(pg_get_serial_sequence('file_versions', 'id'))"));
    const int64_t id = next.Int(0, 0);
    p.Add(id).AddOptional(SealVersion(sealer, id, v));
    sql =
        "INSERT INTO file_versions (namespace, agent_session, tool_use_id, file_path, "
        "phase, sha256, size, tool, source, project, created_ms, id, sealed) "
        "OVERRIDING SYSTEM VALUE VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, "
        "$13) ON CONFLICT (namespace, agent_session, tool_use_id, file_path, phase) "
        "WHERE tool_use_id <> '' DO NOTHING RETURNING " PG_FILE_VERSION_COLUMNS;
  }
  ASSIGN_OR_RETURN(PgResult r, c.Exec(sql, p));
  if (r.rows() == 0) return std::optional<FileVersion>();
  ASSIGN_OR_RETURN(FileVersion row, FileVersionFromRow(sealer, r, 0));
  return std::optional<FileVersion>(std::move(row));
}

}  // namespace

Result<FileVersion> PgStore::InsertFileVersion(const FileVersion& version,
                                               const PendingBlob* blob) {
  RETURN_IF_ERROR(CheckVersionText(version));
  if (version.exists != (blob != nullptr) || (blob && blob->sha256 != version.sha256)) {
    return Err(Status::InvalidArgument(
        "a file version's content is given exactly when the file exists, under its digest"));
  }
  // The blob as an append's batch holds one, for the functions that store it.
  EncodedBatch batch;
  if (blob) {
    batch.needed.push_back(blob->sha256);
    batch.pending.emplace(blob->sha256, &blob->bytes);
  }
  // A large blob goes to the object tier first, as an append's does: stored
  // and read back before any row can name it. Not for a version kept
  // already, of which nothing is written.
  if (objects_ && blob && objects_->Holds(std::ssize(blob->bytes))) {
    ASSIGN_OR_RETURN(std::optional<FileVersion> kept,
                     Run([&](PgConnection& c) -> Result<std::optional<FileVersion>> {
                       return FindKept(c, ns_, version);
                     }));
    if (kept) return *kept;
    RETURN_IF_ERROR(UploadLargeBlobs(&batch));
  }

  bool commit_sent = false;  // an earlier attempt's COMMIT may have landed unanswered
  return Run([&](PgConnection& c) -> Result<FileVersion> {
    ASSIGN_OR_RETURN(PgTransaction txn, PgTransaction::Begin(&c));
    // Kept already (by another writer, or by our own lost COMMIT), or a
    // "before" that says nothing new: that row, and nothing written.
    if (version.tool_use_id.empty() && commit_sent) {
      ASSIGN_OR_RETURN(std::optional<FileVersion> landed, FindLanded(c, ns_, version));
      if (landed) return *landed;
    }
    if (!version.tool_use_id.empty() || version.phase == FileVersionPhase::kBefore) {
      ASSIGN_OR_RETURN(std::optional<FileVersion> kept, FindKept(c, ns_, version));
      if (kept) return *kept;
    }
    commit_sent = false;

    // The bytes first, then the row that names them, then the reference
    // that keeps them from gc and lets this namespace read them.
    auto bytes_of = [&batch](const std::string& sha) -> Result<std::string> {
      auto it = batch.pending.find(sha);
      if (it != batch.pending.end()) return *it->second;
      return Err(Status::NotFound("blob " + sha + " of a file version has no bytes"));
    };
    RETURN_IF_ERROR(EnsureBlobs(c, batch.needed, Now(), bytes_of, &batch.uploads));
    ASSIGN_OR_RETURN(std::optional<FileVersion> inserted, InsertRow(c, ns_, version));
    if (!inserted) {
      // Another writer kept the same key first, and committed while we
      // waited on it: its row, and this transaction (its blob) rolled back.
      ASSIGN_OR_RETURN(std::optional<FileVersion> first, FindKept(c, ns_, version));
      if (first) return *first;
      return Err(Status::Busy("file version of " + version.file_path +
                              " was kept and removed by another writer meanwhile; try again"));
    }
    const FileVersion& row = *inserted;
    if (row.exists) {
      const std::string name = c.sealer().BlobName(row.sha256);
      PgParams ref;
      ref.Add(ns_).Add(name).Add(kFileVersionRefSession).Add(row.id);
      ref.AddOptional(SealedBlobDigest(c.sealer(), name, row.sha256));
      RETURN_IF_ERROR(
          c.Run("INSERT INTO blob_refs (namespace, sha256, session_id, seq, digest) VALUES "
                "($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING",
                ref));
    }
    commit_sent = true;
    RETURN_IF_ERROR(txn.Commit());
    commit_sent = false;
    return row;
  });
}

Result<std::vector<FileVersion>> PgStore::SelectFileVersions(const FileVersionQuery& query) {
  RETURN_IF_ERROR(CheckNoNul(query.file_path, "the path of a file version list"));
  for (const std::string& session : query.agent_sessions) {
    RETURN_IF_ERROR(CheckNoNul(session, "an agent session id of a file version list"));
  }
  // Only the filters asked for are in the statement: each shape gets a plan
  // that uses its index (by file, by session), which a generic plan of
  // "($n = '' OR file_path = $n)" would not.
  std::string sql =
      "SELECT " PG_FILE_VERSION_COLUMNS " FROM file_versions WHERE namespace = $1 AND id > $2";
  int next = 4;
  if (!query.file_path.empty()) sql += " AND file_path = $" + std::to_string(next++);
  if (!query.agent_sessions.empty()) {
    sql += " AND agent_session = ANY($" + std::to_string(next++) + "::text[])";
  }
  sql += " ORDER BY id LIMIT $3";
  return Run([&](PgConnection& c) -> Result<std::vector<FileVersion>> {
    // The path as stored: its token in an encrypted namespace.
    PgParams p;
    p.Add(ns_).Add(query.after_id).Add(query.limit);
    if (!query.file_path.empty()) p.Add(StoredVersionPath(c.sealer(), query.file_path));
    if (!query.agent_sessions.empty()) p.Add(PgArray(query.agent_sessions));
    ASSIGN_OR_RETURN(PgResult r, c.Exec(sql.c_str(), p));
    return VersionsFromRows(c.sealer(), r);
  });
}

#undef PG_FILE_VERSION_COLUMNS

}  // namespace sessiondb::postgres
