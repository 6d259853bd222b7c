// SqliteIndexBackend's code memory: code_writes (kept once, by their
// content_sha256; a trigger makes each a document of the index), code_edits
// (one row per file and function a write touched, for churn), hook_seen, and
// the tool calls of stored messages that LearnFromHistory reads.
#include <algorithm>

#include "store/sqlite/sqlite_index.h"

namespace sessiondb::sqlite {

Result<std::optional<std::string>> SqliteIndexBackend::LastWholeFile(std::string_view file_path) {
  ASSIGN_OR_RETURN(Statement s, db_->Prepare("SELECT new_code FROM code_writes WHERE file_path = ?1"
                                             " AND whole_file = 1 ORDER BY created_ms DESC, id DESC"
                                             " LIMIT 1"));
  s.Bind(1, file_path);
  ASSIGN_OR_RETURN(bool row, s.Step());
  if (!row) return std::optional<std::string>();
  return std::optional<std::string>(std::string(s.ColumnText(0)));
}

Result<RecordedWrite> SqliteIndexBackend::InsertCodeWrite(
    const store::StoredCodeWrite& write, const std::vector<std::string>& functions) {
  RecordedWrite out;
  ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(db_));
  ASSIGN_OR_RETURN(Statement insert,
                   db_->Prepare("INSERT OR IGNORE INTO code_writes (file_path, old_code,"
                                " new_code, language, session_id, project, tool, created_ms,"
                                " content_sha256, whole_file)"
                                " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)"));
  insert.Bind(1, std::string_view(write.file_path))
      .Bind(2, std::string_view(write.old_code))
      .Bind(3, std::string_view(write.new_code))
      .Bind(4, std::string_view(write.language))
      .Bind(5, std::string_view(write.session_id))
      .Bind(6, std::string_view(write.project))
      .Bind(7, std::string_view(write.tool))
      .Bind(8, write.time_ms)
      .Bind(9, std::string_view(write.content_sha256))
      .Bind(10, int64_t{write.whole_file ? 1 : 0});
  RETURN_IF_ERROR(insert.Run());
  if (db_->Changes() == 0) {
    ASSIGN_OR_RETURN(Statement find,
                     db_->Prepare("SELECT id FROM code_writes WHERE content_sha256 = ?1"));
    find.Bind(1, std::string_view(write.content_sha256));
    ASSIGN_OR_RETURN(bool row, find.Step());
    if (row) out.code_id = find.ColumnInt(0);
    return out;  // kept already: not a new edit either
  }
  ASSIGN_OR_RETURN(std::optional<int64_t> id, db_->QueryInt("SELECT last_insert_rowid()"));
  out.code_id = id.value_or(0);
  out.recorded = true;
  ASSIGN_OR_RETURN(Statement edit, db_->Prepare("INSERT INTO code_edits (file_path, function,"
                                                " created_ms, code_id) VALUES (?1, ?2, ?3, ?4)"));
  edit.Bind(1, std::string_view(write.file_path))
      .Bind(2, "")
      .Bind(3, write.time_ms)
      .Bind(4, out.code_id);
  RETURN_IF_ERROR(edit.Run());
  for (const std::string& function : functions) {
    edit.Bind(1, std::string_view(write.file_path))
        .Bind(2, std::string_view(function))
        .Bind(3, write.time_ms)
        .Bind(4, out.code_id);
    RETURN_IF_ERROR(edit.Run());
  }
  RETURN_IF_ERROR(txn.Commit());
  return out;
}

Result<std::optional<store::KeptCodeWrite>> SqliteIndexBackend::CodeWriteOfDocument(
    int64_t doc_id) {
  ASSIGN_OR_RETURN(Statement s,
                   db_->Prepare("SELECT c.id, c.file_path, c.new_code, c.session_id,"
                                " c.project, c.created_ms FROM search_docs d"
                                " JOIN code_writes c ON c.id = d.code_id WHERE d.doc_id = ?1"));
  s.Bind(1, doc_id);
  ASSIGN_OR_RETURN(bool row, s.Step());
  if (!row) return std::optional<store::KeptCodeWrite>();
  return std::optional<store::KeptCodeWrite>(
      store::KeptCodeWrite{.code_id = s.ColumnInt(0),
                           .file_path = std::string(s.ColumnText(1)),
                           .new_code = std::string(s.ColumnText(2)),
                           .session_id = std::string(s.ColumnText(3)),
                           .project = std::string(s.ColumnText(4)),
                           .time_ms = s.ColumnInt(5)});
}

Result<store::EditCounts> SqliteIndexBackend::CountEdits(std::string_view file_path,
                                                         std::string_view function,
                                                         int64_t since_30d_ms,
                                                         int64_t since_24h_ms) {
  ASSIGN_OR_RETURN(Statement s, db_->Prepare("SELECT count(*), coalesce(sum(created_ms >= ?4), 0)"
                                             " FROM code_edits WHERE file_path = ?1"
                                             " AND function = ?2 AND created_ms >= ?3"));
  s.Bind(1, file_path).Bind(2, function).Bind(3, since_30d_ms).Bind(4, since_24h_ms);
  ASSIGN_OR_RETURN(bool row, s.Step());
  store::EditCounts out;
  if (row) {
    out.edits_30d = s.ColumnInt(0);
    out.edits_24h = s.ColumnInt(1);
  }
  return out;
}

Result<std::vector<ChurnEntry>> SqliteIndexBackend::CountHotspots(std::string_view path_prefix,
                                                                  bool functions, int limit,
                                                                  int64_t since_30d_ms,
                                                                  int64_t since_24h_ms) {
  ASSIGN_OR_RETURN(
      Statement s,
      db_->Prepare("SELECT file_path, function, count(*),"
                   " sum(created_ms >= ?2) FROM code_edits"
                   " WHERE created_ms >= ?1 AND (?3 = 1) = (function <> '')"
                   " AND substr(file_path, 1, length(?4)) = ?4"
                   " GROUP BY file_path, function"
                   " ORDER BY count(*) DESC, sum(created_ms >= ?2) DESC, file_path, function"
                   " LIMIT ?5"));
  s.Bind(1, since_30d_ms)
      .Bind(2, since_24h_ms)
      .Bind(3, int64_t{functions ? 1 : 0})
      .Bind(4, path_prefix)
      .Bind(5, int64_t{std::max(limit, 1)});
  std::vector<ChurnEntry> out;
  while (true) {
    ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) break;
    out.push_back(ChurnEntry{.file_path = std::string(s.ColumnText(0)),
                             .function = std::string(s.ColumnText(1)),
                             .edits_24h = s.ColumnInt(3),
                             .edits_30d = s.ColumnInt(2)});
  }
  return out;
}

Result<bool> SqliteIndexBackend::FirstSighting(std::string_view key, int64_t now_ms,
                                               int64_t capacity) {
  ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(db_));
  ASSIGN_OR_RETURN(Statement s, db_->Prepare("INSERT OR IGNORE INTO hook_seen (key, created_ms)"
                                             " VALUES (?1, ?2)"));
  s.Bind(1, key).Bind(2, now_ms);
  RETURN_IF_ERROR(s.Run());
  const bool first = db_->Changes() == 1;
  if (first) {
    ASSIGN_OR_RETURN(Statement trim,
                     db_->Prepare("DELETE FROM hook_seen WHERE key IN (SELECT key FROM"
                                  " hook_seen ORDER BY created_ms DESC, key LIMIT -1 OFFSET ?1)"));
    trim.Bind(1, std::max<int64_t>(capacity, 1));
    RETURN_IF_ERROR(trim.Run());
  }
  RETURN_IF_ERROR(txn.Commit());
  return first;
}

Result<std::vector<store::StoredToolCall>> SqliteIndexBackend::ToolCallsAfter(int64_t after_doc_id,
                                                                              int limit) {
  // The page is `limit` messages that hold a tool call (not merely the
  // words), so a page comes back empty only when there are no more: a run of
  // messages without calls cannot end the caller's scan early.
  ASSIGN_OR_RETURN(
      Statement s,
      db_->Prepare("WITH page AS (SELECT d.doc_id, e.session_id, e.ts_ms, e.body,"
                   "  coalesce(s.metadata->>'project', s.metadata->>'cwd', '') AS project,"
                   "  coalesce(s.metadata->>'source_session_id', '') AS agent_session,"
                   // The folder the message's calls ran in (an importer's
                   // note). Parsing a body of MiBs once more costs as much
                   // again, so only a body that names a cwd is parsed.
                   "  CASE WHEN instr(e.body, '\"cwd\"') > 0"
                   "   THEN coalesce(e.body->>'$.metadata.cwd', '') ELSE '' END AS cwd"
                   "  FROM search_docs d"
                   "  JOIN events e ON e.session_id = d.session_id AND e.seq = d.seq"
                   "  JOIN sessions s ON s.id = e.session_id"
                   "  WHERE d.doc_id > ?1 AND d.code_id IS NULL AND e.type = 'message'"
                   "  AND e.body LIKE '%\"tool_call\"%' AND EXISTS (SELECT 1 FROM"
                   "  json_each(e.body, '$.parts') q WHERE q.value->>'type' = 'tool_call')"
                   "  ORDER BY d.doc_id LIMIT ?2)"
                   " SELECT page.doc_id, page.session_id, page.ts_ms, p.value->>'name',"
                   " p.value->>'arguments', page.project, page.cwd,"
                   " coalesce(p.value->>'id', ''), page.agent_session"
                   " FROM page, json_each(page.body, '$.parts') p"
                   " WHERE p.value->>'type' = 'tool_call'"
                   " ORDER BY page.doc_id, p.key"));
  s.Bind(1, after_doc_id).Bind(2, int64_t{std::max(limit, 1)});
  std::vector<store::StoredToolCall> out;
  while (true) {
    ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) break;
    out.push_back(store::StoredToolCall{.doc_id = s.ColumnInt(0),
                                        .session_id = std::string(s.ColumnText(1)),
                                        .project = std::string(s.ColumnText(5)),
                                        .cwd = std::string(s.ColumnText(6)),
                                        .name = std::string(s.ColumnText(3)),
                                        .arguments = std::string(s.ColumnText(4)),
                                        .time_ms = s.ColumnInt(2),
                                        .call_id = std::string(s.ColumnText(7)),
                                        .agent_session = std::string(s.ColumnText(8))});
  }
  return out;
}

}  // namespace sessiondb::sqlite
