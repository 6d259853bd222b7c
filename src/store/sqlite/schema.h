// The embedded store's schema and its migrations. The version lives in
// PRAGMA user_version; each migration moves it up by one, all pending
// migrations run in one transaction, and a store from a newer build is refused.
// Thread-safety: call once per connection, before anything else uses it.
#pragma once

#include <string>

#include "store/sqlite/sqlite_db.h"

namespace sessiondb::sqlite {

// Brings the database at `path` (already open as `db`) to kSchemaVersion.
// kFailedPrecondition if it was written by a newer sessiondb.
Status MigrateSchema(Database* db, const std::string& path);

}  // namespace sessiondb::sqlite
