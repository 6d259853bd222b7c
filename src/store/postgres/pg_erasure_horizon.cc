#include "store/postgres/pg_erasure_horizon.h"

#include <algorithm>
#include <charconv>
#include <thread>

namespace sessiondb::postgres {
namespace {

// $2 is the call's first unassigned transaction id modulo 2^32, as the
// 32-bit ids of pg_stat_activity are; an id "precedes" it when their
// difference, taken modulo 2^32, is past half the circle (the server's own
// TransactionIdPrecedes), which stays right across wraparound. Autovacuum
// workers' snapshots are left out: a vacuum's does not hold the horizon back
// (the server skips it; an analyze's does, for the moment it samples), and one that vacuums a large
// table for minutes would hold every erasure up for nothing.
constexpr const char* kHorizonSql =
    "SELECT pg_snapshot_xmin(pg_current_snapshot()) >= $1::xid8, "
    "(SELECT count(*) FROM pg_stat_activity a WHERE a.pid <> pg_backend_pid() "
    "   AND a.datname = current_database() AND a.backend_xmin IS NOT NULL "
    "   AND a.backend_type <> 'autovacuum worker' "
    "   AND (a.backend_xmin::text::bigint - $2::bigint + 4294967296) % 4294967296 "
    "       >= 2147483648), "
    "(SELECT coalesce(string_agg(a.pid::text, ', ' ORDER BY a.pid), '') "
    "   FROM pg_stat_activity a WHERE a.pid <> pg_backend_pid() AND ("
    "     (a.backend_xid IS NOT NULL AND "
    "      (a.backend_xid::text::bigint - $2::bigint + 4294967296) % 4294967296 >= 2147483648)"
    "     OR (a.datname = current_database() AND a.backend_xmin IS NOT NULL AND "
    "      a.backend_type <> 'autovacuum worker' AND "
    "      (a.backend_xmin::text::bigint - $2::bigint + 4294967296) % 4294967296 "
    "          >= 2147483648)))";

}  // namespace

Result<ErasureHorizon> WaitForOlderTransactions(PgConnection& c, std::chrono::milliseconds bound) {
  // Every id below the snapshot's xmax was assigned before this call: the
  // erasure's among them.
  ASSIGN_OR_RETURN(PgResult now, c.Exec("SELECT pg_snapshot_xmax(pg_current_snapshot())::text"));
  const std::string_view next_xid = now.Text(0, 0);
  uint64_t xid8 = 0;
  const auto parsed = std::from_chars(next_xid.data(), next_xid.data() + next_xid.size(), xid8);
  if (parsed.ec != std::errc() || parsed.ptr != next_xid.data() + next_xid.size()) {
    return Err(
        Status::Corruption("the server's pg_current_snapshot() gave an xmax that is not a "
                           "number: " +
                           std::string(next_xid)));
  }
  PgParams params;
  params.Add(next_xid).Add(static_cast<int64_t>(xid8 % 4294967296ULL));
  const auto deadline = std::chrono::steady_clock::now() + bound;
  auto pause = std::chrono::milliseconds(5);
  for (;;) {
    ASSIGN_OR_RETURN(PgResult r, c.Exec(kHorizonSql, params));
    ErasureHorizon seen{.clear = r.Bool(0, 0) && r.Int(0, 1) == 0,
                        .holders = std::string(r.Text(0, 2))};
    if (seen.clear || std::chrono::steady_clock::now() >= deadline) return seen;
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(200));
  }
}

}  // namespace sessiondb::postgres
