// `sessiondb key status` and `key rotate` for a PostgreSQL namespace
// (include/sessiondb/encryption.h): what its envelope (pg_namespace_key.h)
// says, and its data key re-wrapped under a new master key. Each is one
// short connection of its own; neither migrates nor opens the store.
// Thread-safety: functions of their own connection.
#pragma once

#include <string>

#include "sessiondb/encryption.h"
#include "sessiondb/status.h"
#include "sessiondb/store.h"

namespace sessiondb::postgres {

// Whether the namespace of `uri` (options.namespace_name, or the URI's) is
// encrypted. kNotFound when the database holds no sessiondb store.
Result<EncryptionStatus> NamespaceEncryptionStatus(const std::string& uri,
                                                   const StoreOptions& options);

// The namespace's data key re-wrapped under `new_key_file`'s master key
// (options.key_file holds the current one). The envelope is swapped in one
// statement that checks it is still the one read, so a rotation racing an
// erasure that destroyed the key fails instead of bringing the key back.
Status RotateNamespaceKey(const std::string& uri, const StoreOptions& options,
                          const std::string& new_key_file);

}  // namespace sessiondb::postgres
