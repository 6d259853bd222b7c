// GetEncryptionStatus and RotateStoreKey (include/sessiondb/encryption.h):
// an embedded store's envelope is a file (store_encryption.h), a PostgreSQL
// namespace's a row (pg_key_admin.h). Part of the Store::Open target, which
// knows both backends.
#include "sessiondb/encryption.h"
#include "store/postgres/pg_key_admin.h"
#include "store/store_common.h"
#include "store/store_encryption.h"

namespace sessiondb {

Result<EncryptionStatus> GetEncryptionStatus(const std::string& location,
                                             const StoreOptions& options) {
  if (StoreKindOf(location) == StoreKind::kPostgres) {
    return postgres::NamespaceEncryptionStatus(location, options);
  }
  return store::EmbeddedEncryptionStatus(location);
}

Status RotateStoreKey(const std::string& location, const StoreOptions& options,
                      const std::string& new_key_file) {
  if (StoreKindOf(location) == StoreKind::kPostgres) {
    return postgres::RotateNamespaceKey(location, options, new_key_file);
  }
  return store::RotateEmbeddedKey(location, options, new_key_file);
}

}  // namespace sessiondb
