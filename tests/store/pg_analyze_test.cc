// Fresh planner statistics after bulk loads on PostgreSQL
// (src/store/postgres/pg_analyze.h): restores that write many rows leave the
// tables analyzed by the store itself (pg_stat_user_tables.last_analyze; an
// autovacuum would set last_autoanalyze instead), during a long load and at
// the close after a shorter one, while a few appends do not.
#include "store/store_fixture.h"

namespace sessiondb::testing {
namespace {

class BulkLoadAnalyze : public PostgresStoreTest {
 protected:
  // Restores `sessions` sessions of `events_each` messages.
  void Restore(Store& store, int sessions, int events_each, const std::string& prefix) {
    for (int s = 0; s < sessions; ++s) {
      const std::string id = prefix + std::to_string(s);
      std::vector<Event> events;
      for (int i = 1; i <= events_each; ++i) {
        Event e;
        e.id = id + "-" + std::to_string(i);
        e.seq = i;
        e.ts_ms = 1'000 * i;
        e.message.id = e.id;
        e.message.parts = {Part::Text("restored message " + std::to_string(i))};
        events.push_back(std::move(e));
      }
      Status restored = store.RestoreSession({.id = id, .title = id}, events, {});
      ASSERT_TRUE(restored.ok()) << restored.ToString();
    }
  }

  std::string LastAnalyze(const std::string& table) {
    return pg_->Query(
        "SELECT coalesce(last_analyze::text, 'never') FROM pg_stat_user_tables "
        "WHERE relname = '" +
        table + "'");
  }
  // The planner's row count of `table`, as ANALYZE (or VACUUM) left it.
  int64_t PlannerRows(const std::string& table) {
    return std::stoll(pg_->Query("SELECT reltuples::bigint FROM pg_class WHERE relname = '" +
                                 table + "' AND relkind = 'r'"));
  }
};

TEST_F(BulkLoadAnalyze, ARestoreOfThousandsOfEventsIsAnalyzedWhenTheStoreCloses) {
  ASSERT_EQ(LastAnalyze("events"), "never");
  Restore(*store_, 6, 250, "bulk-");  // 1,506 rows: under the first threshold, over the close's
  EXPECT_EQ(LastAnalyze("events"), "never") << "analyzed before the load ended";
  store_.reset();
  EXPECT_NE(LastAnalyze("events"), "never");
  EXPECT_NE(LastAnalyze("sessions"), "never");
  EXPECT_EQ(PlannerRows("events"), 1'500);
  EXPECT_EQ(PlannerRows("sessions"), 6);
}

TEST_F(BulkLoadAnalyze, ALongLoadIsAnalyzedWhileItRuns) {
  Restore(*store_, 11, 1'000, "long-");  // past 10,000 rows
  EXPECT_NE(LastAnalyze("events"), "never");
  EXPECT_GE(PlannerRows("events"), 10'000);
}

TEST_F(BulkLoadAnalyze, AFewAppendsLeaveStatisticsToAutovacuum) {
  auto session = store_->CreateSession({});
  ASSERT_TRUE(session);
  for (int i = 0; i < 20; ++i) AppendText(session->id, "appended " + std::to_string(i));
  Restore(*store_, 1, 10, "small-");
  store_.reset();
  EXPECT_EQ(LastAnalyze("events"), "never");
}

}  // namespace
}  // namespace sessiondb::testing
