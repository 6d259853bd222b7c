// The server's own floor beside a figure of sessiondb_pg_bench: PostgreSQL's
// pgbench runs a script of plain statements on the same server, in the same
// run, with as many clients as the workload had. What it reaches is what the
// server and this machine give a client that does nothing but send those
// statements, so a miss can be told apart from a cost of ours.
//
// Example:
//   auto floor = RunPgbench(uri, "BEGIN;\nSELECT 1;\nCOMMIT;\n", {.clients = 64, .seconds = 3});
//   if (floor) std::cout << floor->tps << " transactions/s\n";
//
// Thread-safety: RunPgbench may be called from any thread; it runs a process.
#pragma once

#include <string>

#include "sessiondb/status.h"

namespace sessiondb::bench {

struct PgbenchRun {
  int clients = 1;
  // Either a duration (-T) or a number of transactions per client (-t).
  double seconds = 0;
  int transactions = 0;
};

struct PgbenchFigure {
  double tps = 0;         // transactions per second, without connection set-up
  double latency_ms = 0;  // mean latency of one run of the script
};

// Runs pgbench (the newest under /usr/lib/postgresql, else the one on PATH)
// against `uri` with `script` in extended protocol, prepared. Fails with
// kIo, naming the command and its output, if pgbench is missing or fails.
Result<PgbenchFigure> RunPgbench(const std::string& uri, const std::string& script,
                                 const PgbenchRun& run);

}  // namespace sessiondb::bench
