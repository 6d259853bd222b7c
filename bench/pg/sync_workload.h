// The sync workload of sessiondb_pg_bench (docs/sync.md): 100 sessions of
// 1,000 messages made in an embedded store and synced to a fresh PostgreSQL
// namespace, 100,000 more appended on PostgreSQL and synced back, then a sync
// with nothing to do; each timed, as messages per second each way, beside
// CopyStore of the same sessions as the baseline.
// Thread-safety: runs on the caller's thread.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace sessiondb::bench {

// Runs the workload against `postgres_uri` in the namespace
// `namespace_prefix` + "-sync" (left behind, like the bench's others) and an
// embedded store in `dir`/sync (emptied first). Returns
// {"workload": "sync_100k", "messages_each_way", "to_postgres_s",
// "to_postgres_messages_per_s", "to_embedded_s", "to_embedded_messages_per_s",
// "copy_to_postgres_s", "copy_to_postgres_messages_per_s" (the same
// sessions copied whole with CopyStore into another empty namespace: the
// floor), "to_postgres_vs_copy" (copy time / sync time; 1.0 is the floor),
// "noop_s", "noop_unchanged"}; {"error": ...} when a step fails.
nlohmann::json RunSyncWorkload(const std::string& postgres_uri, const std::string& namespace_prefix,
                               const std::string& dir);

}  // namespace sessiondb::bench
