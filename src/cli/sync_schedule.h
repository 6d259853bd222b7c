// `serve --sync-to URI`: the sync (docs/sync.md) of the served store with
// another, on a thread of its own, at start and then every few seconds until
// the server ends. A failed run (the other store unreachable, a conflict) is
// logged on stderr and retried at the next tick, never fatal to the server.
// Thread-safety: the schedule owns its thread; its destructor stops and joins
// it (a run under way finishes first).
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "cli/cli_context.h"
#include "sessiondb/store.h"

namespace sessiondb::cli {

class SyncSchedule {
 public:
  // Starts syncing `store` with the store at `other` (opened with
  // `other_options` at each run, so a server that was down is reached once
  // it is back) every `every`.
  static std::unique_ptr<SyncSchedule> Start(Store& store, std::string other,
                                             StoreOptions other_options,
                                             std::chrono::seconds every);
  virtual ~SyncSchedule() = default;
};

// The options the other store of a sync is opened with: the global flags'
// (durability, limits), its own URI's namespace, and `key_file` (empty:
// $SESSIONDB_KEY_FILE, else none).
StoreOptions OtherStoreOptions(const CliContext& ctx, bool create_if_missing,
                               const std::string& key_file);

}  // namespace sessiondb::cli
