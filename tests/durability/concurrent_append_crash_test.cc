// Crash safety under group commit: a child process runs many threads that
// append at once to a few sessions of one Store (so appends share commits)
// and is killed with SIGKILL at random moments. Every append a thread
// reported as acknowledged must be there afterwards, in its session, at the
// seq it was given, with its text; seqs stay dense; verify finds nothing
// missing.
#include <unistd.h>

#include <chrono>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <thread>

#include "durability/killed_child.h"
#include "sessiondb/store.h"
#include "test_support.h"

namespace sessiondb::testing {
namespace {

constexpr int kRounds = 12;
constexpr int kThreads = 16;
constexpr int kSessions = 4;

std::string SessionName(int s) { return "crashy-" + std::to_string(s); }

// Runs in the child: kThreads threads append forever, each reporting
// "session seq text\n" on `ack_fd` after each append returns success. A line
// is one write() shorter than PIPE_BUF, so lines of different threads never
// interleave.
[[noreturn]] void AppendFromManyThreadsUntilKilled(const std::string& dir, Durability durability,
                                                   int ack_fd, int round) {
  StoreOptions options;
  options.durability = durability;
  auto store = Store::Open(dir, options);
  if (!store) _exit(2);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      const std::string session = SessionName(t % kSessions);
      for (int i = 0;; ++i) {
        const std::string text =
            "r" + std::to_string(round) + "-t" + std::to_string(t) + "-m" + std::to_string(i);
        Message m;
        m.parts.push_back(Part::Text(text));
        if (i % 8 == 0) {
          // A fresh image now and then, so blob writes are caught mid-way too.
          m.parts.push_back(Part::ImageFromBytes(MakePng(16, 16, text, 16 * 1024), "image/png"));
        }
        auto r = (*store)->Append(session, m);
        if (!r) _exit(3);
        std::string line = session + " " + std::to_string(r->seq) + " " + text + "\n";
        if (write(ack_fd, line.data(), line.size()) != static_cast<ssize_t>(line.size())) _exit(4);
      }
    });
  }
  for (std::thread& th : threads) th.join();
  _exit(5);
}

class ConcurrentAppendCrash : public ::testing::TestWithParam<Durability> {};

TEST_P(ConcurrentAppendCrash, EveryAcknowledgedAppendOfSixteenThreadsSurvivesSigkill) {
  TempDir dir;
  const std::string store_dir = dir.Sub("store");
  {
    auto store = Store::Open(store_dir);
    ASSERT_TRUE(store);
    for (int s = 0; s < kSessions; ++s) {
      ASSERT_TRUE((*store)->CreateSession({.id = SessionName(s)}));
    }
  }
  std::mt19937 rng(20261123);
  std::uniform_int_distribution<int> delay_ms(20, 150);
  // (session, seq) -> text
  std::map<std::pair<std::string, int64_t>, std::string> acknowledged;

  for (int round = 0; round < kRounds; ++round) {
    // The pipe is drained while the child runs, so its writers never block
    // on a full pipe instead of appending.
    const KilledChild child = RunChildAndKill(
        [&](int ack_fd) { AppendFromManyThreadsUntilKilled(store_dir, GetParam(), ack_fd, round); },
        std::chrono::milliseconds(delay_ms(rng)), KillClock::kFromFirstAck);
    ASSERT_TRUE(child.killed) << "child exited early with " << child.exit_status;
    std::istringstream lines(child.acks);
    std::string session;
    int64_t seq;
    std::string text;
    while (lines >> session >> seq >> text) {
      auto [it, inserted] = acknowledged.emplace(std::make_pair(session, seq), text);
      ASSERT_TRUE(inserted) << session << " seq " << seq << " acknowledged twice";
    }

    // After every kill: the store opens, everything acknowledged is there.
    auto store = Store::Open(store_dir);
    ASSERT_TRUE(store) << store.error().ToString();
    for (int s = 0; s < kSessions; ++s) {
      const std::string name = SessionName(s);
      auto messages = (*store)->ReadMessages(name);
      ASSERT_TRUE(messages) << messages.error().ToString();
      std::set<std::string> texts;
      for (size_t i = 0; i < messages->size(); ++i) {
        const Message& m = (*messages)[i];
        ASSERT_EQ(m.seq, static_cast<int64_t>(i + 1)) << "seqs of " << name << " are not dense";
        ASSERT_TRUE(texts.insert(m.Text()).second) << m.Text() << " is stored twice";
        for (const Part& p : m.parts) {
          if (p.resource) {
            EXPECT_FALSE(p.resource->missing) << name << " seq " << m.seq;
          }
        }
      }
      EXPECT_EQ((*store)->GetSession(name)->message_count, std::ssize(*messages));
      for (auto it = acknowledged.lower_bound({name, 0});
           it != acknowledged.end() && it->first.first == name; ++it) {
        const int64_t ack_seq = it->first.second;
        const std::string& ack_text = it->second;
        ASSERT_LE(ack_seq, std::ssize(*messages))
            << "acknowledged " << name << " seq " << ack_seq << " (" << ack_text
            << ") lost in round " << round;
        EXPECT_EQ((*messages)[ack_seq - 1].Text(), ack_text) << name << " seq " << ack_seq;
      }
    }
  }
  auto store = Store::Open(store_dir);
  ASSERT_TRUE(store);
  auto report = (*store)->Verify();
  ASSERT_TRUE(report) << report.error().ToString();
  EXPECT_TRUE(report->clean()) << report->missing.size() << " missing, " << report->corrupt.size()
                               << " corrupt";
  EXPECT_GT(acknowledged.size(), static_cast<size_t>(kRounds * kThreads))
      << "the children barely ran";
  std::cout << "acknowledged appends of " << kThreads << " threads across " << kRounds
            << " kills: " << acknowledged.size() << "\n";
}

INSTANTIATE_TEST_SUITE_P(BothDurabilityModes, ConcurrentAppendCrash,
                         ::testing::Values(Durability::kDurable, Durability::kProcessCrashSafe),
                         [](const ::testing::TestParamInfo<Durability>& info) {
                           return info.param == Durability::kDurable ? "Durable"
                                                                     : "ProcessCrashSafe";
                         });

}  // namespace
}  // namespace sessiondb::testing
