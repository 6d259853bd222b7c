#include "store/postgres/pg_analyze.h"

#include "store/postgres/pg_store.h"

namespace sessiondb::postgres {

bool BulkLoadStatistics::Wrote(int64_t rows) {
  MutexLock lock(&mu_);
  pending_ += rows;
  if (running_ || pending_ < threshold_) return false;
  running_ = true;
  return true;
}

bool BulkLoadStatistics::DueAtClose() {
  MutexLock lock(&mu_);
  return !running_ && pending_ >= kAnalyzeAtCloseRows;
}

void BulkLoadStatistics::Analyzed() {
  MutexLock lock(&mu_);
  pending_ = 0;
  threshold_ *= 2;
  running_ = false;
}

Status BulkLoadStatistics::Analyze(PgConnection& c) {
  return c.Run("ANALYZE sessions, events, blob_refs, search_docs");
}

// Best effort, one attempt: stale statistics make queries slower, never
// wrong, and a store closing while the server is away should not wait for it.
void PgStore::AnalyzeBulkLoadedTables() {
  Result<PgLease> lease = pool_.Acquire();
  if (lease) (void)BulkLoadStatistics::Analyze(**lease);
}

void PgStore::AfterBulkLoad(int64_t rows) {
  if (!bulk_load_statistics_.Wrote(rows)) return;
  AnalyzeBulkLoadedTables();
  bulk_load_statistics_.Analyzed();
}

PgStore::~PgStore() {
  if (bulk_load_statistics_.DueAtClose()) AnalyzeBulkLoadedTables();
}

}  // namespace sessiondb::postgres
