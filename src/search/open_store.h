// The Store behind SearchIndex::Open(path) and CodeMemory::Open(path): an
// existing store (a directory or a postgresql:// URI), never a new one.
// Thread-safety: none needed (opens a new Store each call).
#pragma once

#include <memory>
#include <string>

#include "sessiondb/status.h"
#include "sessiondb/store.h"

namespace sessiondb::search {

// Opens the store at `path` without creating it. kNotFound, saying how to
// make one, when there is none; otherwise what Store::Open fails with.
Result<std::unique_ptr<Store>> OpenExistingStore(const std::string& path, int busy_timeout_ms);

}  // namespace sessiondb::search
