// IndexBackend of the embedded store: placeholder until the search tables'
// SQL moves here from src/search and src/memory.
#include "store/index_backend.h"
#include "store/sqlite/sqlite_store.h"

namespace sessiondb::sqlite {

Result<std::unique_ptr<store::IndexBackend>> SqliteStore::OpenIndexBackend() {
  return Err(Status::FailedPrecondition("not yet: search through the Store"));
}

}  // namespace sessiondb::sqlite
