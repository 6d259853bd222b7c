#include "search/open_store.h"

namespace sessiondb::search {

Result<std::unique_ptr<Store>> OpenExistingStore(const std::string& path, int busy_timeout_ms) {
  Result<std::unique_ptr<Store>> store =
      Store::Open(path, {.create_if_missing = false, .busy_timeout_ms = busy_timeout_ms});
  if (!store && store.error().code() == StatusCode::kNotFound) {
    return Err(Status::NotFound("no store at " + path +
                                "; run `sessiondb init` or give --store the right directory"));
  }
  return store;
}

}  // namespace sessiondb::search
