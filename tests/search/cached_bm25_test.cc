// sessiondb_bm25 (store/sqlite/cached_bm25.h), the embedded store's keyword
// ranking: FTS5's bm25() with each phrase's document count kept per
// connection until the index changes. Its scores must be bm25()'s exactly,
// for every row of every kind of query, and stay so when other connections
// add, clear and delete documents between two queries on one connection.
#include "store/sqlite/cached_bm25.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <random>
#include <string>
#include <vector>

#include "sessiondb/search.h"
#include "sessiondb/store.h"
#include "store/sqlite/sqlite_db.h"
#include "test_support.h"

namespace sessiondb {
namespace {

using testing::TempDir;

const std::vector<std::string> kWords = {"alpha", "beta", "gamma", "delta", "epsilon",
                                         "zeta",  "eta",  "theta", "iota",  "kappa"};

// Text of `n` words drawn with a skew, so counts differ from word to word.
std::string Words(std::mt19937& rng, int n) {
  std::geometric_distribution<int> pick(0.3);
  std::string out;
  for (int i = 0; i < n; ++i) {
    if (!out.empty()) out += ' ';
    out += kWords[static_cast<size_t>(std::min<int>(pick(rng), 9))];
  }
  return out;
}

class CachedBm25 : public ::testing::Test {
 protected:
  void SetUp() override {
    auto store = Store::Open(dir_.Sub("store"), {.durability = Durability::kProcessCrashSafe});
    ASSERT_TRUE(store) << store.error().message();
    store_ = std::move(*store);
    SearchOptions options;
    options.embedder.from_environment = false;
    auto index = SearchIndex::Open(*store_, options);
    ASSERT_TRUE(index) << index.error().message();
    index_ = std::move(*index);
    auto db = sqlite::Database::Open(dir_.Sub("store") + "/" + std::string(kEmbeddedDatabaseFile),
                                     10'000);
    ASSERT_TRUE(db) << db.error().ToString();
    db_ = std::move(*db);
  }

  void AppendSession(const std::string& id, int messages, uint32_t seed) {
    ASSERT_TRUE(store_->CreateSession({.id = id}).has_value());
    std::mt19937 rng(seed);
    std::vector<Message> batch;
    for (int i = 0; i < messages; ++i) {
      Message m;
      m.role = i % 2 == 0 ? Role::kUser : Role::kAssistant;
      m.parts.push_back(Part::Text(Words(rng, 3 + static_cast<int>(rng() % 30))));
      batch.push_back(std::move(m));
    }
    auto appended = store_->AppendBatch(id, batch);
    ASSERT_TRUE(appended) << appended.error().ToString();
    auto pending = index_->IndexPending();
    ASSERT_TRUE(pending) << pending.error().ToString();
  }

  // Every row `match` finds, with bm25() and sessiondb_bm25 side by side, on
  // the test's one connection (so its kept counts are what is checked).
  // Returns how many rows there were.
  // `newest_first`: in the order a search walks (its lengths may be read a
  // block at a time).
  int ExpectSameScores(const std::string& match, bool newest_first = false) {
    auto s = db_->Prepare(
        newest_first
            ? "SELECT rowid, bm25(search_fts), sessiondb_bm25(search_fts, ?1) FROM search_fts"
              " WHERE search_fts MATCH ?1 ORDER BY rowid DESC"
            : "SELECT rowid, bm25(search_fts), sessiondb_bm25(search_fts, ?1) FROM search_fts"
              " WHERE search_fts MATCH ?1");
    EXPECT_TRUE(s) << s.error().ToString();
    if (!s) return 0;
    s->Bind(1, std::string_view(match));
    int rows = 0;
    while (true) {
      auto row = s->Step();
      EXPECT_TRUE(row) << match << ": " << row.error().ToString();
      if (!row || !*row) break;
      ++rows;
      EXPECT_EQ(s->ColumnDouble(1), s->ColumnDouble(2)) << match << ", doc " << s->ColumnInt(0);
    }
    return rows;
  }

  TempDir dir_;
  std::unique_ptr<Store> store_;
  std::unique_ptr<SearchIndex> index_;
  std::unique_ptr<sqlite::Database> db_;
};

const std::vector<std::string> kQueries = {"alpha",
                                           "kappa",
                                           "alpha beta",
                                           "\"alpha beta\"",
                                           "alpha OR iota",
                                           "beta NOT gamma",
                                           "content : (gamma)",
                                           "(alpha OR beta) AND theta",
                                           "eta*",
                                           "NEAR(alpha delta, 3)"};

TEST_F(CachedBm25, ScoresAreFts5Bm25sForEveryRowOfEveryKindOfQuery) {
  AppendSession("a", 300, 1);
  for (const std::string& q : kQueries) {
    // Twice: the second answer comes from the kept counts.
    const int first = ExpectSameScores(q);
    EXPECT_GT(first, 0) << q;
    EXPECT_EQ(ExpectSameScores(q), first) << q;
  }
}

TEST_F(CachedBm25, KeptCountsFollowDocumentsAddedClearedAndDeletedElsewhere) {
  AppendSession("a", 200, 2);
  for (const std::string& q : kQueries) ExpectSameScores(q);

  // Added through the store's connection: more rows, so the counts change.
  AppendSession("b", 150, 3);
  for (const std::string& q : kQueries) ExpectSameScores(q);

  // Cleared: a compaction's summary joins and the texts it prunes leave.
  auto compaction = store_->Compact(
      "b", {.from_seq = 1, .to_seq = 60, .summary = "alpha summary", .strategy = "test"});
  ASSERT_TRUE(compaction) << compaction.error().ToString();
  auto pruned = store_->PruneCompaction("b", compaction->seq);
  ASSERT_TRUE(pruned) << pruned.error().ToString();
  ASSERT_TRUE(index_->IndexPending());
  for (const std::string& q : kQueries) ExpectSameScores(q);

  // Deleted: fewer rows.
  ASSERT_TRUE(store_->DeleteSession("a").ok());
  auto pending = index_->IndexPending();
  ASSERT_TRUE(pending) << pending.error().ToString();
  for (const std::string& q : kQueries) ExpectSameScores(q);
}

TEST_F(CachedBm25, AKeptLengthFollowsADocumentRewrittenUnderItsId) {
  AppendSession("a", 50, 5);
  ASSERT_EQ(ExpectSameScores("alpha OR beta"), ExpectSameScores("alpha OR beta"));
  // The events trigger deletes and re-inserts the document under its id;
  // it still matches, with another length.
  ASSERT_TRUE(db_->Exec("UPDATE events SET text = 'alpha ' || text || ' beta beta beta'"
                        " WHERE session_id = 'a' AND seq IN (2, 3, 5)")
                  .ok());
  EXPECT_GT(ExpectSameScores("alpha OR beta"), 0);
  // And when it also grew meanwhile.
  ASSERT_TRUE(
      db_->Exec("UPDATE events SET text = 'gamma' WHERE session_id = 'a' AND seq = 7").ok());
  AppendSession("b", 20, 6);
  EXPECT_GT(ExpectSameScores("alpha OR beta OR gamma"), 0);
}

// A word in most documents, walked newest first as a search does: its
// lengths are read a block of ids at a time (more than one block here), and
// the scores stay bm25()'s, before and after documents are rewritten under
// their ids and added.
TEST_F(CachedBm25, ANewestFirstWalkOfACommonWordScoresAsBm25) {
  AppendSession("a", 2600, 7);
  for (const char* q : {"alpha", "alpha OR beta", "kappa", "alpha", "eta*"}) {
    EXPECT_GT(ExpectSameScores(q, true), 1000) << q;
  }
  ASSERT_TRUE(db_->Exec("UPDATE events SET text = 'alpha ' || text || ' alpha beta kappa'"
                        " WHERE session_id = 'a' AND seq % 97 = 0")
                  .ok());
  AppendSession("b", 1200, 8);
  for (const char* q : {"alpha", "kappa", "alpha OR beta"}) {
    EXPECT_GT(ExpectSameScores(q, true), 1000) << q;
  }
}

// The ranking keeps no statement of its own past a query: a connection that
// ran one, reading lengths by block, closes (sqlite3_close refuses, and
// leaves the file open, while any statement is unfinalized).
TEST_F(CachedBm25, AConnectionThatRankedACommonWordCloses) {
  AppendSession("a", 2600, 9);
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open_v2((dir_.Sub("store") + "/" + std::string(kEmbeddedDatabaseFile)).c_str(),
                            &db, SQLITE_OPEN_READONLY, nullptr),
            SQLITE_OK);
  ASSERT_EQ(sqlite::RegisterCachedBm25Function(db), SQLITE_OK);
  sqlite3_stmt* stmt = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db,
                               "SELECT sessiondb_bm25(search_fts, 'alpha') FROM search_fts"
                               " WHERE search_fts MATCH 'alpha' ORDER BY rowid DESC",
                               -1, &stmt, nullptr),
            SQLITE_OK);
  int rows = 0;
  while (sqlite3_step(stmt) == SQLITE_ROW) ++rows;
  EXPECT_GT(rows, 1000);
  ASSERT_EQ(sqlite3_finalize(stmt), SQLITE_OK);
  EXPECT_EQ(sqlite3_close(db), SQLITE_OK) << sqlite3_errmsg(db);
}

TEST_F(CachedBm25, WithoutAKeyEveryQueryCountsAfresh) {
  AppendSession("a", 100, 4);
  auto s = db_->Prepare(
      "SELECT bm25(search_fts), sessiondb_bm25(search_fts) FROM search_fts"
      " WHERE search_fts MATCH 'alpha'");
  ASSERT_TRUE(s) << s.error().ToString();
  int rows = 0;
  while (true) {
    auto row = s->Step();
    ASSERT_TRUE(row) << row.error().ToString();
    if (!*row) break;
    ++rows;
    EXPECT_EQ(s->ColumnDouble(0), s->ColumnDouble(1));
  }
  EXPECT_GT(rows, 0);
}

}  // namespace
}  // namespace sessiondb
