// Store::Open: picks the backend for a location and puts the front over it.
#include "sessiondb/store.h"

#include "store/postgres/pg_store.h"
#include "store/sqlite/sqlite_store.h"
#include "store/store_common.h"
#include "store/store_front.h"

namespace sessiondb {

Result<std::unique_ptr<Store>> Store::Open(const std::string& path, const StoreOptions& given) {
  if (path.empty()) return Err(Status::InvalidArgument("store path is empty"));
  ASSIGN_OR_RETURN(StoreOptions options, WithDefaults(given));
  std::unique_ptr<store::Backend> backend;
  if (StoreKindOf(path) == StoreKind::kPostgres) {
    ASSIGN_OR_RETURN(backend, postgres::PgStore::Open(path, options));
  } else {
    if (!options.namespace_name.empty() && options.namespace_name != kDefaultNamespace) {
      return Err(Status::InvalidArgument(
          "namespace '" + options.namespace_name + "' was asked for, but " + path +
          " is an embedded store, which holds one namespace; use a directory per namespace, "
          "or a postgresql:// store"));
    }
    ASSIGN_OR_RETURN(backend, sqlite::SqliteStore::Open(path, options));
  }
  auto front = std::make_unique<store::StoreFront>(std::move(backend), std::move(options));
  RETURN_IF_ERROR(front->LoadSecretRedaction());
  return std::unique_ptr<Store>(std::move(front));
}

}  // namespace sessiondb
