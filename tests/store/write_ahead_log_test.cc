// The SQLite write-ahead log stays bounded: checkpoints backfill every
// committed frame and the log restarts from its beginning, instead of growing
// with every append (which also makes each fsync extend the file).
#include <filesystem>

#include "store/store_fixture.h"

namespace sessiondb::testing {
namespace {

class WriteAheadLog : public EmbeddedStoreTest {};

int64_t WalBytes(const std::string& store_dir) {
  std::error_code ec;
  auto size = std::filesystem::file_size(store_dir + "/sessiondb.db-wal", ec);
  return ec ? 0 : static_cast<int64_t>(size);
}

TEST_F(WriteAheadLog, IsRecycledAfterCheckpointsInsteadOfGrowingWithEveryAppend) {
  StoreOptions options = Options();
  options.durability = Durability::kProcessCrashSafe;  // the same WAL, without the fsync wait
  Reopen(options);
  std::string id = NewSessionId();
  const std::string text(500, 'x');
  // About 4 pages per append: 3,000 appends write some 12,000 frames (~50 MB),
  // while the autocheckpoint restarts the log every ~1,000 frames (~4 MB).
  for (int i = 0; i < 3000; ++i) AppendText(id, text + std::to_string(i));
  EXPECT_LT(WalBytes(StoreDir()), 8 << 20);
}

TEST_F(WriteAheadLog, IsRecycledAfterBatchesToo) {
  StoreOptions options = Options();
  options.durability = Durability::kProcessCrashSafe;
  Reopen(options);
  std::string id = NewSessionId();
  std::vector<Message> batch(100);
  for (size_t i = 0; i < batch.size(); ++i) {
    batch[i].parts.push_back(Part::Text(std::string(500, 'y') + std::to_string(i)));
  }
  for (int i = 0; i < 300; ++i) ASSERT_TRUE(store_->AppendBatch(id, batch));
  EXPECT_LT(WalBytes(StoreDir()), 8 << 20);
}

}  // namespace
}  // namespace sessiondb::testing
