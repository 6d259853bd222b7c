// A throw-away PostgreSQL cluster for sessiondb_pg_bench, started and stopped
// through scripts/pg_cluster.sh (its path is baked in at compile time as
// SESSIONDB_PG_CLUSTER_SCRIPT). Used when the bench is given no --postgres URI.
// Thread-safety: none needed; Start and Stop are called from main only.
//
// Example:
//   ASSIGN_OR_RETURN(std::string uri, ThrowawayCluster::Start("/tmp/sdb-pgbench-42"));
//   ...
//   ThrowawayCluster::Stop();  // also runs at exit if Start succeeded
#pragma once

#include <string>

#include "sessiondb/status.h"

namespace sessiondb::bench {

class ThrowawayCluster {
 public:
  // Runs `pg_cluster.sh start dir` (initdb + start, deleting whatever was in
  // `dir`) and returns the connection URI it prints. Registers Stop to run at
  // exit. Fails with kIo (naming the command and its exit status) if the
  // script fails or prints no URI; the script's own diagnostics go to stderr.
  static Result<std::string> Start(const std::string& dir);

  // Stops the cluster started by Start and deletes its directory. Does
  // nothing if none is running; safe to call twice.
  static void Stop();

  // The script used, for messages.
  static const char* Script();
};

}  // namespace sessiondb::bench
