// The SQLite write-ahead log stays bounded: checkpoints backfill every
// committed frame and the log restarts from its beginning, instead of growing
// with every append (which also makes each fsync extend the file). Commits
// leave the checkpoint to the store's checkpointer thread
// (wal_checkpointer.h) and checkpoint in line only past its bound.
#include <sqlite3.h>

#include <filesystem>
#include <thread>

#include "core/uuid.h"
#include "store/sqlite/sqlite_store.h"
#include "store/sqlite/wal_checkpointer.h"
#include "store/store_fixture.h"
#include "store/store_front.h"

namespace sessiondb::testing {
namespace {

using sqlite::SqliteStore;
using sqlite::WalCheckpointer;

class WriteAheadLog : public EmbeddedStoreTest {
 protected:
  WalCheckpointer::Stats CheckpointStats() {
    auto& front = dynamic_cast<store::StoreFront&>(*store_);
    return dynamic_cast<SqliteStore&>(front.backend()).checkpoint_stats();
  }
};

int64_t FileBytes(const std::string& path) {
  std::error_code ec;
  auto size = std::filesystem::file_size(path, ec);
  return ec ? 0 : static_cast<int64_t>(size);
}

int64_t WalBytes(const std::string& store_dir) {
  return FileBytes(store_dir + "/sessiondb.db-wal");
}

// The most the -wal file may hold: the in-line bound plus the frames of the
// one commit that passed it (4 KiB pages, 24-byte frame headers, the
// 32-byte file header).
int64_t WalBound(int64_t frames_per_commit) {
  return 32 + (WalCheckpointer::kInlineFrames + frames_per_commit) * (4096 + 24);
}

std::vector<Message> Batch(size_t n, size_t text_bytes) {
  std::vector<Message> batch(n);
  for (size_t i = 0; i < batch.size(); ++i) {
    batch[i].parts.push_back(Part::Text(std::string(text_bytes, 'y') + std::to_string(i)));
  }
  return batch;
}

TEST_F(WriteAheadLog, IsRecycledAfterCheckpointsInsteadOfGrowingWithEveryAppend) {
  StoreOptions options = Options();
  options.durability = Durability::kProcessCrashSafe;  // the same WAL, without the fsync wait
  Reopen(options);
  std::string id = NewSessionId();
  const std::string text(500, 'x');
  // About 4 pages per append: 3,000 appends write some 12,000 frames (~50 MB),
  // three times the in-line bound.
  int64_t largest = 0;
  for (int i = 0; i < 3000; ++i) {
    AppendText(id, text + std::to_string(i));
    largest = std::max(largest, WalBytes(StoreDir()));
  }
  EXPECT_LE(largest, WalBound(64));  // an append writes a dozen frames
}

TEST_F(WriteAheadLog, StaysUnderTheBoundThroughSustainedDurableBatches) {
  StoreOptions options = Options();
  options.durability = Durability::kDurable;
  // Ids made now, as a store's are: with the fixture's frozen clock every id
  // falls at random in the id index, and a commit writes some 1,300 frames.
  options.clock = &SystemNowMs;
  Reopen(options);
  std::string id = NewSessionId();
  const std::vector<Message> batch = Batch(1000, 500);  // 250 to 600 frames a commit
  // 150 batches: some 60,000 frames (~250 MB) through the log, 15 times its bound.
  int64_t largest = 0;
  for (int i = 0; i < 150; ++i) {
    ASSERT_TRUE(store_->AppendBatch(id, batch));
    largest = std::max(largest, WalBytes(StoreDir()));
  }
  EXPECT_LE(largest, WalBound(1000));
  EXPECT_GT(FileBytes(StoreDir() + "/sessiondb.db"), 50 << 20) << "the log was not checkpointed";
}

TEST_F(WriteAheadLog, CommitsLeaveTheCheckpointToTheCheckpointerThread) {
  StoreOptions options = Options();
  options.durability = Durability::kProcessCrashSafe;
  Reopen(options);
  std::string id = NewSessionId();
  const std::vector<Message> batch = Batch(100, 500);
  // Past the thread's threshold, far short of the in-line bound: no commit
  // checkpoints itself, and only the thread can have checkpointed.
  const int64_t frame_bytes = 4096 + 24;
  while (WalBytes(StoreDir()) < (WalCheckpointer::kBackgroundFrames + 200) * frame_bytes) {
    ASSERT_TRUE(store_->AppendBatch(id, batch));
  }
  ASSERT_LT(WalBytes(StoreDir()), (WalCheckpointer::kInlineFrames - 1000) * frame_bytes);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (CheckpointStats().background == 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_GT(CheckpointStats().background, 0);
  EXPECT_EQ(CheckpointStats().in_line, 0) << "no commit came near the in-line bound";
}

TEST_F(WriteAheadLog, ClosingTheStoreStopsTheCheckpointerAndRemovesTheLog) {
  std::string id = NewSessionId();
  const std::vector<Message> batch = Batch(100, 500);
  for (int i = 0; i < 100; ++i) ASSERT_TRUE(store_->AppendBatch(id, batch));
  ASSERT_GT(WalBytes(StoreDir()), 0);
  // The last connection to close checkpoints and deletes the -wal; a
  // checkpointer connection left open would keep it.
  store_.reset();
  EXPECT_FALSE(std::filesystem::exists(StoreDir() + "/sessiondb.db-wal"));
  Reopen();
  auto messages = store_->ReadMessages(id);
  ASSERT_TRUE(messages) << messages.error().ToString();
  EXPECT_EQ(messages->size(), 100u * batch.size());
}

// A log left long by processes that ended without closing the store (the
// hook's _Exit, a kill): the next process's first commit copies it and
// empties the -wal file, so that no later open reads it all back. Here the
// log is left by a connection of this test that writes with SQLite's own
// checkpoints off and stays open (closing would checkpoint it).
TEST_F(WriteAheadLog, AFirstCommitEmptiesALogOthersLeftLong) {
  store_.reset();
  sqlite3* left_open = nullptr;
  ASSERT_EQ(sqlite3_open((StoreDir() + "/sessiondb.db").c_str(), &left_open), SQLITE_OK);
  sqlite3_wal_autocheckpoint(left_open, 0);
  ASSERT_EQ(sqlite3_exec(left_open,
                         "CREATE TABLE scratch(b BLOB);"
                         "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n "
                         "WHERE i < 100) INSERT INTO scratch SELECT randomblob(3000) FROM n",
                         nullptr, nullptr, nullptr),
            SQLITE_OK)
      << sqlite3_errmsg(left_open);
  const int64_t frame = 4096 + 24;
  ASSERT_GT(WalBytes(StoreDir()), WalCheckpointer::kInheritedFrames * frame);

  Reopen();
  const std::string id = NewSessionId();
  EXPECT_EQ(CheckpointStats().inherited, 1);
  EXPECT_EQ(WalBytes(StoreDir()), 0) << "the -wal file is emptied";
  AppendText(id, "a later commit");
  EXPECT_EQ(CheckpointStats().inherited, 1) << "only a connection's first commit looks";
  EXPECT_GT(WalBytes(StoreDir()), 0);
  EXPECT_LT(WalBytes(StoreDir()), WalCheckpointer::kInheritedFrames * frame);

  // Nothing was lost: the other connection's rows and the store's session.
  sqlite3_stmt* count = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(left_open, "SELECT count(*) FROM scratch", -1, &count, nullptr),
            SQLITE_OK);
  ASSERT_EQ(sqlite3_step(count), SQLITE_ROW);
  EXPECT_EQ(sqlite3_column_int(count, 0), 100);
  sqlite3_finalize(count);
  sqlite3_close(left_open);
  Reopen();
  auto messages = store_->ReadMessages(id);
  ASSERT_TRUE(messages) << messages.error().ToString();
  ASSERT_EQ(messages->size(), 1u);
  EXPECT_EQ(messages->front().parts.at(0).text, "a later commit");
}

// A second connection of the same process, whose first commit finds a log
// the first one wrote, leaves it to that one's checkpointer: it is no other
// process's leftover (the index's connection beside the store's, in `serve`).
TEST_F(WriteAheadLog, ALogThisProcessWroteIsNotTakenForALeftover) {
  const std::string id = NewSessionId();
  ASSERT_TRUE(store_->AppendBatch(id, Batch(100, 500)));
  const int64_t frame = 4096 + 24;
  const int64_t before = WalBytes(StoreDir());
  ASSERT_GT(before, WalCheckpointer::kInheritedFrames * frame);
  auto other = Store::Open(StoreDir(), Options());
  ASSERT_TRUE(other) << other.error().ToString();
  auto created = (*other)->CreateSession({});
  ASSERT_TRUE(created) << created.error().ToString();
  auto& front = dynamic_cast<store::StoreFront&>(**other);
  EXPECT_EQ(dynamic_cast<SqliteStore&>(front.backend()).checkpoint_stats().inherited, 0);
  EXPECT_GE(WalBytes(StoreDir()), before) << "the log was not emptied";
}

}  // namespace

}  // namespace sessiondb::testing
