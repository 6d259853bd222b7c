// Store::Open: picks the backend for a location.
#include "sessiondb/store.h"

#include "store/postgres/pg_store.h"
#include "store/sqlite/sqlite_store.h"
#include "store/store_common.h"

namespace sessiondb {

Result<std::unique_ptr<Store>> Store::Open(const std::string& path, const StoreOptions& options) {
  if (path.empty()) return Err(Status::InvalidArgument("store path is empty"));
  if (StoreKindOf(path) == StoreKind::kPostgres) {
    return postgres::PgStore::Open(path, options);
  }
  if (!options.namespace_name.empty() && options.namespace_name != kDefaultNamespace) {
    return Err(Status::InvalidArgument(
        "namespace '" + options.namespace_name + "' was asked for, but " + path +
        " is an embedded store, which holds one namespace; use a directory per namespace, "
        "or a postgresql:// store"));
  }
  return sqlite::SqliteStore::Open(path, options);
}

}  // namespace sessiondb
