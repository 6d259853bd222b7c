#include "search/hit_details.h"

namespace sessiondb::search {

Result<bool> LoadHitDetails(sqlite::Database* db, int64_t doc_id, SearchHit* hit) {
  ASSIGN_OR_RETURN(sqlite::Statement s,
                   db->Prepare("SELECT d.session_id, d.seq, d.code_id, e.id, e.type, e.role,"
                               " e.ts_ms, s.title, s.deleted, c.file_path, c.created_ms"
                               " FROM search_docs d"
                               " LEFT JOIN events e ON d.code_id IS NULL"
                               "  AND e.session_id = d.session_id AND e.seq = d.seq"
                               " LEFT JOIN sessions s ON s.id = d.session_id"
                               " LEFT JOIN code_writes c ON c.id = d.code_id"
                               " WHERE d.doc_id = ?1"));
  s.Bind(1, doc_id);
  ASSIGN_OR_RETURN(bool row, s.Step());
  if (!row) return false;
  hit->session_id = std::string(s.ColumnText(0));
  hit->seq = s.ColumnInt(1);
  hit->session_title = std::string(s.ColumnText(7));
  if (!s.ColumnIsNull(2)) {
    hit->kind = HitKind::kCodeWrite;
    hit->code_id = s.ColumnInt(2);
    hit->file_path = std::string(s.ColumnText(9));
    hit->time_ms = s.ColumnInt(10);
    return !s.ColumnIsNull(9);
  }
  if (s.ColumnIsNull(3) || s.ColumnIsNull(8) || s.ColumnInt(8) != 0) return false;
  hit->event_id = std::string(s.ColumnText(3));
  std::string_view type = s.ColumnText(4);
  hit->kind = type == "compaction"      ? HitKind::kCompaction
              : type == "resource_view" ? HitKind::kResourceView
                                        : HitKind::kMessage;
  if (!s.ColumnIsNull(5)) {
    Result<Role> role = ParseRole(s.ColumnText(5));
    if (role) hit->role = *role;
  }
  hit->time_ms = s.ColumnInt(6);
  return true;
}

}  // namespace sessiondb::search
