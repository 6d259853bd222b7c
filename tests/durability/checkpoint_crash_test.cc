// Crash safety with the WAL checkpointed on a thread of its own
// (wal_checkpointer.h): a child appends durable batches large enough that the
// log passes the checkpoint threshold every few batches, so its checkpointer
// is copying frames into the database file when SIGKILL lands, at random
// moments. Every batch the child reported as acknowledged must be there
// afterwards, with the seqs and ids it was given; the store opens and
// verifies clean.
#include <unistd.h>

#include <filesystem>
#include <map>
#include <random>
#include <sstream>
#include <thread>

#include "durability/killed_child.h"
#include "sessiondb/store.h"
#include "test_support.h"

namespace sessiondb::testing {
namespace {

constexpr int kRounds = 12;
constexpr int kBatch = 200;  // ~1 KiB each: some 60 WAL frames per batch

int64_t FileBytes(const std::string& path) {
  std::error_code ec;
  auto size = std::filesystem::file_size(path, ec);
  return ec ? 0 : static_cast<int64_t>(size);
}

// Runs in the child: appends batches forever, reporting
// "first_seq last_seq first_id last_id\n" on `ack_fd` after each returns.
[[noreturn]] void AppendBatchesUntilKilled(const std::string& dir, int ack_fd, int round) {
  StoreOptions options;
  options.durability = Durability::kDurable;
  auto store = Store::Open(dir, options);
  if (!store) _exit(2);
  const std::string filler(1000, 'c');
  for (int b = 0;; ++b) {
    std::vector<Message> batch(kBatch);
    for (int i = 0; i < kBatch; ++i) {
      batch[static_cast<size_t>(i)].parts.push_back(Part::Text(
          "round " + std::to_string(round) + " batch " + std::to_string(b) + " " + filler));
    }
    auto r = (*store)->AppendBatch("crashy", batch);
    if (!r || r->size() != static_cast<size_t>(kBatch)) _exit(3);
    std::string line = std::to_string(r->front().seq) + " " + std::to_string(r->back().seq) + " " +
                       r->front().message_id + " " + r->back().message_id + "\n";
    if (write(ack_fd, line.data(), line.size()) != static_cast<ssize_t>(line.size())) _exit(4);
  }
}

TEST(CheckpointCrash, NoAcknowledgedBatchIsLostWhenSigkillLandsDuringBackgroundCheckpoints) {
  TempDir dir;
  const std::string store_dir = dir.Sub("store");
  const std::string db_file = store_dir + "/sessiondb.db";
  {
    auto store = Store::Open(store_dir);
    ASSERT_TRUE(store);
    ASSERT_TRUE((*store)->CreateSession({.id = "crashy"}));
  }
  std::mt19937 rng(20261128);
  std::uniform_int_distribution<int> delay_ms(150, 700);
  struct Ack {
    int64_t last_seq;
    std::string first_id, last_id;
  };
  std::map<int64_t, Ack> acknowledged;  // first seq -> the batch
  int rounds_that_checkpointed = 0;

  for (int round = 0; round < kRounds; ++round) {
    // Every frame is in the database file now (the last close checkpointed),
    // so the file grows during the round only by the child's checkpoints.
    const int64_t db_before = FileBytes(db_file);
    const KilledChild child =
        RunChildAndKill([&](int ack_fd) { AppendBatchesUntilKilled(store_dir, ack_fd, round); },
                        std::chrono::milliseconds(delay_ms(rng)), KillClock::kFromFirstAck);
    ASSERT_TRUE(child.killed) << "child exited early with " << child.exit_status;
    if (FileBytes(db_file) > db_before) ++rounds_that_checkpointed;

    std::istringstream lines(child.acks);
    int64_t first = 0, last = 0;
    std::string first_id, last_id;
    while (lines >> first >> last >> first_id >> last_id) {
      acknowledged[first] = {last, first_id, last_id};
    }

    auto store = Store::Open(store_dir);
    ASSERT_TRUE(store) << store.error().ToString();
    auto messages = (*store)->ReadMessages("crashy");
    ASSERT_TRUE(messages) << messages.error().ToString();
    for (size_t i = 0; i < messages->size(); ++i) {
      ASSERT_EQ((*messages)[i].seq, static_cast<int64_t>(i + 1)) << "seqs are not dense";
    }
    for (const auto& [first_seq, ack] : acknowledged) {
      ASSERT_LE(ack.last_seq, std::ssize(*messages)) << "acknowledged batch " << first_seq << ".."
                                                     << ack.last_seq << " lost in round " << round;
      EXPECT_EQ((*messages)[static_cast<size_t>(first_seq - 1)].id, ack.first_id);
      EXPECT_EQ((*messages)[static_cast<size_t>(ack.last_seq - 1)].id, ack.last_id);
    }
  }
  auto store = Store::Open(store_dir);
  ASSERT_TRUE(store);
  auto report = (*store)->Verify();
  ASSERT_TRUE(report) << report.error().ToString();
  EXPECT_TRUE(report->clean());
  EXPECT_GT(acknowledged.size(), static_cast<size_t>(kRounds)) << "the child barely ran";
  // Else no kill could have landed during a checkpoint.
  EXPECT_GT(rounds_that_checkpointed, kRounds / 2) << "the children seldom checkpointed";
  std::cout << "acknowledged batches across " << kRounds << " kills: " << acknowledged.size()
            << "; rounds whose child checkpointed: " << rounds_that_checkpointed << "\n";
}

}  // namespace
}  // namespace sessiondb::testing
