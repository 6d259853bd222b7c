// Fresh planner statistics after bulk loads on PostgreSQL.
//
// Autovacuum analyzes a table once enough of it changed, but only on its next
// round (a minute by default) and only after 10 % of the rows it last counted
// changed: right after an import, a restore or a copy into an empty or young
// database the planner still believes the tables hold what they held before
// (nothing), and picks plans for that (sequential scans of the session list,
// nested loops over millions of events). The store knows when it has just
// written many rows, so it asks for ANALYZE itself: when the rows it wrote
// (restores, created sessions, appended messages) since its last ANALYZE pass
// a threshold that doubles each time (a long import analyzes a logarithmic
// number of times, each a sample), and once more as the store closes when
// enough are left unanalyzed. A store that writes a few rows never does.
//
// Thread-safety: BulkLoadStatistics may be used from any thread.
#pragma once

#include <cstdint>

#include "core/mutex.h"
#include "sessiondb/status.h"
#include "store/postgres/pg_connection.h"

namespace sessiondb::postgres {

class BulkLoadStatistics {
 public:
  // The first ANALYZE comes after this many rows written; each later one
  // after twice as many as the one before.
  static constexpr int64_t kFirstAnalyzeRows = 10'000;
  // At close, rows left unanalyzed are analyzed when at least this many.
  static constexpr int64_t kAnalyzeAtCloseRows = 1'000;

  // Counts `rows` written by a write that committed. Returns true when an
  // ANALYZE is due now; the caller then runs Analyze and calls Analyzed().
  bool Wrote(int64_t rows) EXCLUDES(mu_);
  // True when the rows written since the last ANALYZE warrant one at close.
  bool DueAtClose() EXCLUDES(mu_);
  // Resets the count after an ANALYZE (whether it succeeded or not: a
  // failing ANALYZE is not retried on every restore).
  void Analyzed() EXCLUDES(mu_);

  // ANALYZE of the tables a bulk load writes (the session list, the log,
  // blob references, search documents). One statement on `c`, outside any
  // transaction.
  static Status Analyze(PgConnection& c);

 private:
  Mutex mu_;
  int64_t pending_ GUARDED_BY(mu_) = 0;
  int64_t threshold_ GUARDED_BY(mu_) = kFirstAnalyzeRows;
  bool running_ GUARDED_BY(mu_) = false;  // one ANALYZE at a time
};

}  // namespace sessiondb::postgres
