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

// Makes the database at `path` ready for writers: WAL journal mode, then
// MigrateSchema. Safe when several processes open a new store at once:
// switching the journal mode needs every other connection gone and does not
// wait on SQLite's busy handler, so while another process holds a lock the
// switch or the migration needs, both are retried with a growing, jittered
// backoff (1 ms to 50 ms) until busy_timeout_ms has passed; then kBusy.
Status PrepareForWriting(Database* db, const std::string& path, int busy_timeout_ms);

}  // namespace sessiondb::sqlite
