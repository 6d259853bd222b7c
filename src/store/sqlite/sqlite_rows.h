// The column lists the embedded store selects, shared by its source files so
// that every reader decodes rows in the same order. Macros, because they are
// pasted into SQL string literals at compile time.
#pragma once

#include "sessiondb/types.h"
#include "store/sqlite/sqlite_db.h"

// Read by SessionFromRow.
#define SESSION_COLUMNS                                                                       \
  "id, title, preview, created_ms, updated_ms, message_count, last_seq, archived, metadata, " \
  "coalesce(parent_id, ''), fork_seq, coalesce(trashed_ms, 0)"

namespace sessiondb::sqlite {

// The session of a row selected with SESSION_COLUMNS first.
Session SessionFromRow(const Statement& s);

}  // namespace sessiondb::sqlite

// Read by SqliteStore::ReadEventRows.
#define EVENT_COLUMNS "seq, id, ts_ms, type, coalesce(role, ''), text, body, session_id"

// Read by SqliteStore::ReadMessageRows: a history of messages only has no use
// for the type, and a role is never NULL on a message.
#define MESSAGE_COLUMNS "seq, id, ts_ms, role, text, body, session_id"
