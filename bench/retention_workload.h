// The `retain` workload of sessiondb_bench: a retention run over a store of
// many sessions that erases some of them, beside the plain delete
// (DeleteSession) of the same sessions in a twin store, in the same run, so
// the figure is a ratio: a run's cost follows what it removes.
// Thread-safety: single-threaded, like the bench.
#pragma once

#include <cstdint>
#include <filesystem>

namespace sessiondb::bench {

// Builds two stores under `root` of `sessions` sessions each, `erased` of
// them archived and idle past the policy; times ApplyRetention (dry, then
// applied) in one and DeleteSession of the same sessions in the other, and
// prints one JSON line on stdout. Dies on any error.
void RunRetentionWorkload(const std::filesystem::path& root, int64_t sessions, int64_t erased);

}  // namespace sessiondb::bench
