// Waiting, after an erasure commits, for the transactions that could still
// see its rows, so that VACUUM FULL can drop them.
//
// VACUUM FULL copies a deleted row into the table's new file while it is
// "recently dead": deleted by a transaction newer than the oldest one the
// server must still serve. That horizon is the oldest transaction running
// anywhere in the cluster (VACUUM FULL's own snapshot includes it, whatever
// its database) and the oldest snapshot held in the store's database. On a
// busy server some transaction is nearly always older than an erasure that
// has just committed: vacuuming at once kept the erased bytes in the new
// files (the canary test caught it with other tests' transactions running).
// So the scrub first waits for those transactions to end.
#pragma once

#include <chrono>
#include <string>

#include "sessiondb/status.h"
#include "store/postgres/pg_connection.h"

namespace sessiondb::postgres {

// What WaitForOlderTransactions saw last.
struct ErasureHorizon {
  bool clear = false;   // every transaction older than the call has ended
  std::string holders;  // else the server pids of those still open, "12, 34"
};

// Waits up to `bound` until every transaction that had begun when the call
// was made (with a transaction id anywhere in the cluster, or a snapshot in
// this database) has ended. Polls the server; the server's error otherwise.
// Snapshots of other users' sessions are seen only with the
// pg_read_all_stats role; transaction ids always are.
Result<ErasureHorizon> WaitForOlderTransactions(PgConnection& c, std::chrono::milliseconds bound);

}  // namespace sessiondb::postgres
