#include "search/index_db.h"

#include <filesystem>
#include <system_error>

#include "store/sqlite/schema.h"

namespace sessiondb::search {

namespace fs = std::filesystem;

Result<std::unique_ptr<sqlite::Database>> OpenIndexDatabase(const std::string& store_path,
                                                            int busy_timeout_ms) {
  if (store_path.rfind("postgres://", 0) == 0 || store_path.rfind("postgresql://", 0) == 0) {
    return Err(Status::FailedPrecondition(
        "search and code memory work on embedded stores; this is a PostgreSQL store. Copy it "
        "to a directory with `sessiondb copy` to search it"));
  }
  const fs::path db_path = fs::path(store_path) / "sessiondb.db";
  std::error_code ec;
  if (!fs::exists(db_path, ec)) {
    return Err(Status::NotFound("no store at " + store_path +
                                "; run `sessiondb init` or give --store the right directory"));
  }
  ASSIGN_OR_RETURN(std::unique_ptr<sqlite::Database> db,
                   sqlite::Database::Open(db_path.string(), busy_timeout_ms));
  RETURN_IF_ERROR(db->Exec("PRAGMA journal_mode = WAL"));
  // Code writes and embeddings can be recomputed; a power loss may lose the
  // last ones, never corrupt the database (WAL, synchronous NORMAL).
  RETURN_IF_ERROR(db->Exec("PRAGMA synchronous = NORMAL"));
  RETURN_IF_ERROR(db->Exec("PRAGMA cache_size = -65536; PRAGMA temp_store = MEMORY"));
  RETURN_IF_ERROR(sqlite::MigrateSchema(db.get(), store_path));
  return db;
}

}  // namespace sessiondb::search
