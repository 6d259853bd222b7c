// PgStore's file versions, the code checkpoints (store.h, docs/memory.md):
// a version's blob, its row and the blob reference that names it, in one
// transaction, the blob stored as an append stores a message's (the shared
// `blobs` table, or the object tier for a large one, by the same functions);
// and the versions a query selects. Every statement is confined to the
// store's namespace, and a namespace reads a blob only through its own
// references, so one never sees another's versions or their content.
//
// Not kept in an encrypted namespace yet: the path, project and tool would
// be stored in the clear beside sealed content (kFailedPrecondition).
// Thread-safety: as PgStore.
#include <optional>
#include <string>
#include <vector>

#include "store/postgres/pg_store_internal.h"

namespace sessiondb::postgres {
namespace {

// The columns VersionFromRow reads, in its order.
#define PG_FILE_VERSION_COLUMNS                                                    \
  "id, agent_session, tool_use_id, file_path, phase, sha256, size, tool, source, " \
  "project, created_ms"

Status NotKeptEncrypted() {
  return Status::FailedPrecondition(
      "file versions are not kept in an encrypted PostgreSQL namespace yet");
}

// A row selected with PG_FILE_VERSION_COLUMNS. kCorruption for a phase that
// is neither "before" nor "after".
Result<FileVersion> VersionFromRow(const PgResult& r, int row) {
  FileVersion v;
  v.id = r.Int(row, 0);
  v.agent_session = r.Text(row, 1);
  v.tool_use_id = r.Text(row, 2);
  v.file_path = r.Text(row, 3);
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
  if (v.exists) v.sha256 = r.Text(row, 5);
  v.size = r.Int(row, 6);
  v.tool = r.Text(row, 7);
  v.source = r.Text(row, 8);
  v.project = r.Text(row, 9);
  v.time_ms = r.Int(row, 10);
  return v;
}

Result<std::vector<FileVersion>> VersionsFromRows(const PgResult& r) {
  std::vector<FileVersion> versions;
  versions.reserve(static_cast<size_t>(r.rows()));
  for (int i = 0; i < r.rows(); ++i) {
    ASSIGN_OR_RETURN(FileVersion v, VersionFromRow(r, i));
    versions.push_back(std::move(v));
  }
  return versions;
}

// kInvalidArgument naming the field when one holds a NUL, which a
// PostgreSQL text cannot (a parameter would be cut at it without a word).
Status CheckVersionText(const FileVersion& v) {
  const std::pair<const std::string*, const char*> fields[] = {
      {&v.agent_session, "the agent session id of a file version"},
      {&v.tool_use_id, "the tool use id of a file version"},
      {&v.file_path, "the path of a file version"},
      {&v.tool, "the tool of a file version"},
      {&v.source, "the source of a file version"},
      {&v.project, "the project of a file version"}};
  for (const auto& [text, what] : fields) RETURN_IF_ERROR(CheckNoNul(*text, what));
  return Status::Ok();
}

// The row kept for `v`'s key (agent session, tool use, path, phase), if any;
// nullopt for a version without a tool use id, which has no key (asked all
// the same: one statement, whatever `v`).
Result<std::optional<FileVersion>> FindKept(PgConnection& c, const std::string& ns,
                                            const FileVersion& v) {
  PgParams p;
  p.Add(ns).Add(v.agent_session).Add(v.tool_use_id).Add(v.file_path);
  p.Add(FileVersionPhaseName(v.phase));
  ASSIGN_OR_RETURN(PgResult r, c.Exec("SELECT " PG_FILE_VERSION_COLUMNS
                                      " FROM file_versions WHERE namespace = $1 AND "
                                      "agent_session = $2 AND tool_use_id = $3 AND "
                                      "file_path = $4 AND phase = $5 AND tool_use_id <> ''",
                                      p));
  if (r.rows() == 0) return std::optional<FileVersion>();
  ASSIGN_OR_RETURN(FileVersion kept, VersionFromRow(r, 0));
  return std::optional<FileVersion>(std::move(kept));
}

// After a COMMIT whose answer was lost: the row it would have written (the
// newest row exactly like `v`, stamped with its time), if it landed. Only
// for a version without a tool use id: one with a key finds it by FindKept.
Result<std::optional<FileVersion>> FindLanded(PgConnection& c, const std::string& ns,
                                              const FileVersion& v) {
  PgParams p;
  p.Add(ns).Add(v.agent_session).Add(v.file_path).Add(FileVersionPhaseName(v.phase));
  p.AddOptional(v.exists ? std::optional<std::string>(v.sha256) : std::nullopt);
  p.Add(v.exists ? v.size : int64_t{0}).Add(v.tool).Add(v.source).Add(v.project);
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
  ASSIGN_OR_RETURN(FileVersion landed, VersionFromRow(r, 0));
  return std::optional<FileVersion>(std::move(landed));
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
                       ASSIGN_OR_RETURN(std::optional<FileVersion> found,
                                        FindKept(c, ns_, version));
                       if (c.sealer().encrypted()) return Err(NotKeptEncrypted());
                       return found;
                     }));
    if (kept) return *kept;
    RETURN_IF_ERROR(UploadLargeBlobs(&batch));
  }

  bool commit_sent = false;  // an earlier attempt's COMMIT may have landed unanswered
  return Run([&](PgConnection& c) -> Result<FileVersion> {
    ASSIGN_OR_RETURN(PgTransaction txn, PgTransaction::Begin(&c));
    // Checked after BEGIN, so that a refusal is never mistaken for a
    // transient failure of an earlier statement on this connection
    // (PgStore::Run retries while the connection says retryable()).
    if (c.sealer().encrypted()) return Err(NotKeptEncrypted());
    // Kept already (by another writer, or by our own lost COMMIT): that row,
    // and nothing written.
    if (!version.tool_use_id.empty()) {
      ASSIGN_OR_RETURN(std::optional<FileVersion> kept, FindKept(c, ns_, version));
      if (kept) return *kept;
    } else if (commit_sent) {
      ASSIGN_OR_RETURN(std::optional<FileVersion> landed, FindLanded(c, ns_, version));
      if (landed) return *landed;
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
    PgParams p;
    p.Add(ns_).Add(version.agent_session).Add(version.tool_use_id).Add(version.file_path);
    p.Add(FileVersionPhaseName(version.phase));
    p.AddOptional(version.exists ? std::optional<std::string>(version.sha256) : std::nullopt);
    p.Add(version.exists ? version.size : int64_t{0}).Add(version.tool).Add(version.source);
    p.Add(version.project).Add(version.time_ms);
    ASSIGN_OR_RETURN(
        PgResult r,
        c.Exec("INSERT INTO file_versions (namespace, agent_session, tool_use_id, file_path, "
               "phase, sha256, size, tool, source, project, created_ms) VALUES ($1, $2, $3, $4, "
               "$5, $6, $7, $8, $9, $10, $11) ON CONFLICT (namespace, agent_session, "
               "tool_use_id, file_path, phase) WHERE tool_use_id <> '' DO NOTHING "
               "RETURNING " PG_FILE_VERSION_COLUMNS,
               p));
    if (r.rows() == 0) {
      // Another writer kept the same key first, and committed while we
      // waited on it: its row, and this transaction (its blob) rolled back.
      ASSIGN_OR_RETURN(std::optional<FileVersion> first, FindKept(c, ns_, version));
      if (first) return *first;
      return Err(Status::Busy("file version of " + version.file_path +
                              " was kept and removed by another writer meanwhile; try again"));
    }
    ASSIGN_OR_RETURN(FileVersion row, VersionFromRow(r, 0));
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
  PgParams p;
  p.Add(ns_).Add(query.after_id).Add(query.limit);
  std::string sql =
      "SELECT " PG_FILE_VERSION_COLUMNS " FROM file_versions WHERE namespace = $1 AND id > $2";
  int next = 4;
  if (!query.file_path.empty()) {
    p.Add(query.file_path);
    sql += " AND file_path = $" + std::to_string(next++);
  }
  if (!query.agent_sessions.empty()) {
    p.Add(PgArray(query.agent_sessions));
    sql += " AND agent_session = ANY($" + std::to_string(next++) + "::text[])";
  }
  sql += " ORDER BY id LIMIT $3";
  return Run([&](PgConnection& c) -> Result<std::vector<FileVersion>> {
    ASSIGN_OR_RETURN(PgResult r, c.Exec(sql.c_str(), p));
    // Checked after a statement, so that a refusal is never mistaken for a
    // transient failure of an earlier one on this connection (PgStore::Run).
    if (c.sealer().encrypted()) return Err(NotKeptEncrypted());
    return VersionsFromRows(r);
  });
}

#undef PG_FILE_VERSION_COLUMNS

}  // namespace sessiondb::postgres
