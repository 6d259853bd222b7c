// The short-lived processes of issue 37 item 3 on both backends in one run:
// the Claude Code hook (`sessiondb hook claude-code`, a real PreToolUse and
// PostToolUse event on stdin) and two CLI reads (`ls`, `show`), each a new
// process timed from spawn to exit, on the embedded store and on PostgreSQL
// (and through PgBouncer when $SESSIONDB_BENCH_PGBOUNCER_URI names one, a
// URI to the same database). The calls of the backends are interleaved, so
// the machine's noise falls on both alike; the figure is their ratio.
// Thread-safety: one call at a time (it spawns and waits for processes).
//
// Example:
//   nlohmann::json j = RunHookWorkload(cli, uri, "hookbench-42", "/tmp/bench");
//   // j["hook"]["postgres"]["p50_ms"], j["hook"]["ratio_p50"], j["ls"]...
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace sessiondb::bench {

// Times hook calls (kHookCalls of them per backend: a PreToolUse of a file
// not seen before, which recalls and denies once, then its PostToolUse,
// which records the write) and CLI reads (`ls`, `show SID`) per backend.
// `cli_path`: the sessiondb program; `postgres_uri`: the database, used in
// namespace `ns`; `dir`: where the embedded store and the events go
// (emptied first). Returns, per command, per backend p50_ms, p99_ms, mean_ms
// and calls, and ratio_p50 / ratio_p99 (postgres over embedded, and
// pgbouncer over embedded when run); a failed call is counted in
// "failures" with its first error. Two more backends, embedded_resident and
// postgres_resident, have their hook calls answered by a `hook serve` started
// for them (ratio_resident_*: PostgreSQL over embedded, both resident; the
// CLI reads do not use the server).
nlohmann::json RunHookWorkload(const std::string& cli_path, const std::string& postgres_uri,
                               const std::string& ns, const std::string& dir);

}  // namespace sessiondb::bench
