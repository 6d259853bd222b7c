// The SQL function sessiondb_search_text(text, body): the searchable text of
// an event row, used by the full-text index's triggers and content view
// (schema v3). It is a C++ function because FTS5 reads its content view with
// virtual tables (json_each) disabled. Every connection sessiondb opens
// registers it (Database::Open); a connection that has not (the sqlite3 shell)
// can read the tables but not write events.
#pragma once

#include <sqlite3.h>

#include <string>
#include <string_view>

#include "core/search_text.h"

namespace sessiondb::sqlite {

// The searchable text itself is shared by every backend (core/search_text.h);
// these names stay for the SQLite writers that call them.
using ::sessiondb::MessageSearchText;
using ::sessiondb::SearchText;

// Registers sessiondb_search_text on `db`; returns a SQLite result code.
int RegisterSearchTextFunction(sqlite3* db);

}  // namespace sessiondb::sqlite
