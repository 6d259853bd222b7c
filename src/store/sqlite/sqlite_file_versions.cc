// SqliteStore's file versions (backend.h): a version's row and the blob
// reference that keeps its content, in one transaction. The reference lives
// under session kFileVersionRefSession with the version's id as its seq, so
// garbage collection and verify count it as they count a message's.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "store/sqlite/sqlite_store.h"

namespace sessiondb::sqlite {
namespace {

#define FILE_VERSION_COLUMNS                                                                \
  "id, agent_session, tool_use_id, file_path, phase, sha256, size, tool, source, project, " \
  "created_ms"

FileVersion ReadVersionRow(const Statement& s) {
  FileVersion v;
  v.id = s.ColumnInt(0);
  v.agent_session = s.ColumnText(1);
  v.tool_use_id = s.ColumnText(2);
  v.file_path = s.ColumnText(3);
  v.phase = s.ColumnText(4) == "before" ? FileVersionPhase::kBefore : FileVersionPhase::kAfter;
  v.exists = !s.ColumnIsNull(5);
  if (v.exists) v.sha256 = s.ColumnText(5);
  v.size = s.ColumnInt(6);
  v.tool = s.ColumnText(7);
  v.source = s.ColumnText(8);
  v.project = s.ColumnText(9);
  v.time_ms = s.ColumnInt(10);
  return v;
}

}  // namespace

Result<std::optional<FileVersion>> SqliteStore::FindKeptFileVersion(const FileVersion& version) {
  // Fixed texts: the statement cache is keyed by the text's address.
  static constexpr const char* kSameKey =
      "SELECT " FILE_VERSION_COLUMNS
      " FROM file_versions WHERE agent_session = ?1 AND "
      "tool_use_id = ?2 AND file_path = ?3 AND phase = ?4 AND tool_use_id <> ''";
  static constexpr const char* kLatestOfFile =
      "SELECT " FILE_VERSION_COLUMNS
      " FROM file_versions INDEXED BY file_versions_by_file "
      "WHERE file_path = ?1 ORDER BY id DESC LIMIT 1";
  auto first_row = [this](const char* sql, auto bind) -> Result<std::optional<FileVersion>> {
    ASSIGN_OR_RETURN(Statement s, db_->Prepare(sql));
    bind(s);
    ASSIGN_OR_RETURN(bool found, s.Step());
    std::optional<FileVersion> first;
    if (found) first = ReadVersionRow(s);
    s.Reset();
    return first;
  };
  auto same_call = [&](FileVersionPhase phase) {
    return first_row(kSameKey, [&](Statement& s) {
      s.Bind(1, version.agent_session).Bind(2, version.tool_use_id);
      s.Bind(3, version.file_path).Bind(4, FileVersionPhaseName(phase));
    });
  };
  if (!version.tool_use_id.empty()) {
    ASSIGN_OR_RETURN(std::optional<FileVersion> kept, same_call(version.phase));
    if (kept || version.phase != FileVersionPhase::kBefore) return kept;
    ASSIGN_OR_RETURN(std::optional<FileVersion> after, same_call(FileVersionPhase::kAfter));
    if (after) return after;
  } else if (version.phase != FileVersionPhase::kBefore) {
    return std::optional<FileVersion>();
  }
  ASSIGN_OR_RETURN(std::optional<FileVersion> latest,
                   first_row(kLatestOfFile, [&](Statement& s) { s.Bind(1, version.file_path); }));
  if (latest && BeforeSaysNothingNew(version, *latest)) return latest;
  return std::optional<FileVersion>();
}

Result<FileVersion> SqliteStore::InsertFileVersion(const FileVersion& version,
                                                   const PendingBlob* blob) {
  {
    // A retried hook writes nothing, not even its bytes.
    std::lock_guard lock(mu_);
    ASSIGN_OR_RETURN(std::optional<FileVersion> kept, FindKeptFileVersion(version));
    if (kept) return *kept;
  }
  // The bytes before the row, outside the lock, as an append writes them.
  if (blob && !blobs_->Stat(blob->sha256)) RETURN_IF_ERROR(blobs_->Put(blob->sha256, blob->bytes));
  std::lock_guard lock(mu_);
  ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(db_.get()));
  // Another writer may have kept the same version meanwhile.
  ASSIGN_OR_RETURN(std::optional<FileVersion> kept, FindKeptFileVersion(version));
  if (kept) return *kept;
  // Garbage collection removes a blob only under the write lock we now hold:
  // one it took after the Put above is written again before it is named.
  if (blob && !blobs_->Stat(blob->sha256)) RETURN_IF_ERROR(blobs_->Put(blob->sha256, blob->bytes));
  ASSIGN_OR_RETURN(Statement insert,
                   db_->Prepare("INSERT INTO file_versions (agent_session, tool_use_id, file_path, "
                                "phase, sha256, size, tool, source, project, created_ms) "
                                "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)"));
  insert.Bind(1, version.agent_session).Bind(2, version.tool_use_id).Bind(3, version.file_path);
  insert.Bind(4, FileVersionPhaseName(version.phase));
  if (version.exists) {
    insert.Bind(5, version.sha256);
  } else {
    insert.BindNull(5);
  }
  insert.Bind(6, version.size).Bind(7, version.tool).Bind(8, version.source);
  insert.Bind(9, version.project).Bind(10, version.time_ms);
  RETURN_IF_ERROR(insert.Run());
  FileVersion row = version;
  row.id = sqlite3_last_insert_rowid(db_->handle());
  if (version.exists) {
    ASSIGN_OR_RETURN(Statement ref, db_->Prepare("INSERT OR IGNORE INTO blob_refs (sha256, "
                                                 "session_id, seq) VALUES (?1, ?2, ?3)"));
    ref.Bind(1, version.sha256).Bind(2, kFileVersionRefSession).Bind(3, row.id);
    RETURN_IF_ERROR(ref.Run());
  }
  RETURN_IF_ERROR(txn.Commit());
  return row;
}

Result<std::vector<FileVersion>> SqliteStore::SelectFileVersions(const FileVersionQuery& query) {
  // Fixed texts (the statement cache is keyed by the text's address): by
  // file through its index, else by session through theirs, else all. The
  // sessions go in as one JSON array, NULL for any.
  static constexpr const char* kByFile =
      "SELECT " FILE_VERSION_COLUMNS
      " FROM file_versions WHERE file_path = ?2 AND id > ?1 "
      "AND (?4 IS NULL OR agent_session IN (SELECT value FROM json_each(?4))) "
      "ORDER BY id LIMIT ?3";
  // By session through its index (the planner would rather walk every id
  // in order for the ORDER BY ... LIMIT, reading the whole table for a
  // session with few versions: the hook's shell check runs this).
  static constexpr const char* kBySession =
      "SELECT " FILE_VERSION_COLUMNS
      " FROM file_versions INDEXED BY file_versions_by_session "
      "WHERE agent_session IN (SELECT value FROM json_each(?4)) AND id > ?1 "
      "ORDER BY id LIMIT ?3";
  static constexpr const char* kAll =
      "SELECT " FILE_VERSION_COLUMNS " FROM file_versions WHERE id > ?1 ORDER BY id LIMIT ?3";
  std::optional<std::string> sessions;
  if (!query.agent_sessions.empty()) sessions = nlohmann::json(query.agent_sessions).dump();
  std::lock_guard lock(mu_);
  const char* sql = !query.file_path.empty() ? kByFile : sessions ? kBySession : kAll;
  ASSIGN_OR_RETURN(Statement s, db_->Prepare(sql));
  s.Bind(1, query.after_id).Bind(3, query.limit);
  if (sql != kAll) s.BindOptional(4, sessions);
  if (!query.file_path.empty()) s.Bind(2, query.file_path);
  std::vector<FileVersion> versions;
  while (true) {
    ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) break;
    versions.push_back(ReadVersionRow(s));
  }
  s.Reset();
  return versions;
}

#undef FILE_VERSION_COLUMNS

}  // namespace sessiondb::sqlite
