// The column lists the embedded store selects, shared by its source files so
// that every reader decodes rows in the same order. Macros, because they are
// pasted into SQL string literals at compile time.
#pragma once

// Read by SessionFromRow.
#define SESSION_COLUMNS                                                                       \
  "id, title, preview, created_ms, updated_ms, message_count, last_seq, archived, metadata, " \
  "coalesce(parent_id, ''), fork_seq"

// Read by SqliteStore::ReadEventRows.
#define EVENT_COLUMNS "seq, id, ts_ms, type, coalesce(role, ''), text, body, session_id"
