// Crash safety: a child process appends in a loop (text, and messages of one
// or of three images, durable mode) and is killed with SIGKILL at random
// moments. Every append the child
// reported as acknowledged must be there afterwards, with the seq it was
// given; seqs stay dense; the store opens; verify finds nothing missing.
#include <fcntl.h>
#include <unistd.h>

#include <map>
#include <random>
#include <sstream>
#include <thread>

#include "durability/killed_child.h"
#include "sessiondb/store.h"
#include "test_support.h"

namespace sessiondb::testing {
namespace {

constexpr int kRounds = 24;

// Runs in the child: append forever, reporting "seq message_id\n" on `ack_fd`
// after each append returns success.
[[noreturn]] void AppendUntilKilled(const std::string& dir, Durability durability, int ack_fd,
                                    int round) {
  StoreOptions options;
  options.durability = durability;
  auto store = Store::Open(dir, options);
  if (!store) _exit(2);
  for (int i = 0;; ++i) {
    Message m;
    m.parts.push_back(
        Part::Text("round " + std::to_string(round) + " message " + std::to_string(i)));
    if (i % 4 == 0) {
      // Fresh images now and then, so blob writes are caught mid-way too;
      // every other time three in one message, whose blobs are written and
      // synced together (FileBlobStore::PutAll).
      const int images = i % 8 == 0 ? 3 : 1;
      for (int k = 0; k < images; ++k) {
        m.parts.push_back(Part::ImageFromBytes(
            MakePng(16, 16,
                    "r" + std::to_string(round) + "i" + std::to_string(i) + "k" + std::to_string(k),
                    64 * 1024),
            "image/png"));
      }
    }
    auto r = (*store)->Append("crashy", m);
    if (!r) _exit(3);
    std::string line = std::to_string(r->seq) + " " + r->message_id + "\n";
    if (write(ack_fd, line.data(), line.size()) != static_cast<ssize_t>(line.size())) _exit(4);
  }
}

// Both modes promise to survive the process being killed at any instant;
// only the durable one also promises to survive a power loss.
class AppendCrash : public ::testing::TestWithParam<Durability> {};

TEST_P(AppendCrash, EveryAcknowledgedAppendSurvivesSigkillAtRandomMoments) {
  TempDir dir;
  const std::string store_dir = dir.Sub("store");
  {
    auto store = Store::Open(store_dir);
    ASSERT_TRUE(store);
    ASSERT_TRUE((*store)->CreateSession({.id = "crashy"}));
  }
  std::mt19937 rng(20261122);
  std::uniform_int_distribution<int> delay_us(2'000, 120'000);
  std::map<int64_t, std::string> acknowledged;  // seq -> message id

  for (int round = 0; round < kRounds; ++round) {
    const KilledChild child = RunChildAndKill(
        [&](int ack_fd) { AppendUntilKilled(store_dir, GetParam(), ack_fd, round); },
        std::chrono::microseconds(delay_us(rng)), KillClock::kFromFirstAck);
    ASSERT_TRUE(child.killed) << "child exited early with " << child.exit_status;

    std::istringstream lines(child.acks);
    int64_t seq;
    std::string id;
    while (lines >> seq >> id) acknowledged[seq] = id;

    // After every kill: the store opens, and everything acknowledged is there.
    auto store = Store::Open(store_dir);
    ASSERT_TRUE(store) << store.error().ToString();
    auto messages = (*store)->ReadMessages("crashy");
    ASSERT_TRUE(messages) << messages.error().ToString();
    std::map<int64_t, std::string> present;
    for (size_t i = 0; i < messages->size(); ++i) {
      ASSERT_EQ((*messages)[i].seq, static_cast<int64_t>(i + 1)) << "seqs are not dense";
      present[(*messages)[i].seq] = (*messages)[i].id;
    }
    for (const auto& [ack_seq, ack_id] : acknowledged) {
      auto it = present.find(ack_seq);
      ASSERT_NE(it, present.end()) << "acknowledged seq " << ack_seq << " lost in round " << round;
      EXPECT_EQ(it->second, ack_id);
    }
    for (const Message& m : *messages) {
      for (const Part& p : m.parts) {
        if (p.resource) {
          EXPECT_FALSE(p.resource->missing) << "seq " << m.seq;
        }
      }
    }
  }
  auto store = Store::Open(store_dir);
  ASSERT_TRUE(store);
  auto report = (*store)->Verify();
  ASSERT_TRUE(report) << report.error().ToString();
  EXPECT_TRUE(report->clean()) << report->missing.size() << " missing, " << report->corrupt.size()
                               << " corrupt";
  EXPECT_GT(acknowledged.size(), static_cast<size_t>(kRounds)) << "the child barely ran";
  std::cout << "acknowledged appends across " << kRounds << " kills: " << acknowledged.size()
            << "\n";
}

INSTANTIATE_TEST_SUITE_P(BothDurabilityModes, AppendCrash,
                         ::testing::Values(Durability::kDurable, Durability::kProcessCrashSafe),
                         [](const ::testing::TestParamInfo<Durability>& info) {
                           return info.param == Durability::kDurable ? "Durable"
                                                                     : "ProcessCrashSafe";
                         });

}  // namespace
}  // namespace sessiondb::testing
