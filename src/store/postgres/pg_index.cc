// IndexBackend of a PostgreSQL store: placeholder until PostgreSQL full-text
// search, vectors and code memory exist.
#include "store/index_backend.h"
#include "store/postgres/pg_store.h"

namespace sessiondb::postgres {

Result<std::unique_ptr<store::IndexBackend>> PgStore::OpenIndexBackend() {
  return Err(Status::FailedPrecondition("not yet: search on PostgreSQL"));
}

}  // namespace sessiondb::postgres
