// The search index's own connection to an embedded store's database: search
// and the code memory read and write next to the Store (WAL lets them), so
// they need no Store object and add no lock to its appends.
#pragma once

#include <memory>
#include <string>

#include "sessiondb/status.h"
#include "store/sqlite/sqlite_db.h"

namespace sessiondb::search {

// Opens `store_path`/sessiondb.db, brought to the current schema. kNotFound
// when there is no store there; kFailedPrecondition for a PostgreSQL URI.
Result<std::unique_ptr<sqlite::Database>> OpenIndexDatabase(const std::string& store_path,
                                                            int busy_timeout_ms);

}  // namespace sessiondb::search
