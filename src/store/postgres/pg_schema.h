// The versioned schema of a PostgreSQL store (docs/formats.md) and its
// migrations, applied in one transaction under an advisory lock so that
// processes opening a new store at once agree on one schema.
// Thread-safety: call with a connection no one else is using.
#pragma once

#include <string>

#include "sessiondb/postgres_schema.h"
#include "sessiondb/status.h"
#include "store/postgres/pg_connection.h"

namespace sessiondb::postgres {

// The schema version this build writes and reads.
inline constexpr int kPgSchemaVersion = kPostgresSchemaVersion;

// Brings the database to kPgSchemaVersion. kFailedPrecondition naming both
// versions if it was written by a newer sessiondb; kNotFound if it holds no
// store and `create` is false. `where` names the store in messages.
Status MigratePgSchema(PgConnection* conn, bool create, const std::string& where);

}  // namespace sessiondb::postgres
