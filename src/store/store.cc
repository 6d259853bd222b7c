// Store::Open: picks the backend for a location.
#include "sessiondb/store.h"

#include "store/sqlite/sqlite_store.h"

namespace sessiondb {

Result<std::unique_ptr<Store>> Store::Open(const std::string& path, const StoreOptions& options) {
  if (path.empty()) return Err(Status::InvalidArgument("store path is empty"));
  if (path.rfind("postgres://", 0) == 0 || path.rfind("postgresql://", 0) == 0) {
    return Err(
        Status::InvalidArgument("PostgreSQL stores are not supported by this build yet; "
                                "give a directory for an embedded store"));
  }
  return sqlite::SqliteStore::Open(path, options);
}

}  // namespace sessiondb
