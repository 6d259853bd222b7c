// Crash safety of the writer shared by the Store objects of one process:
// a child opens several Stores on one embedded store, and threads of each
// append at once, so one store's leader commits other stores' appends in its
// transaction. It is killed with SIGKILL at random moments. Every append a
// thread reported as acknowledged must be there afterwards, in its session,
// at the seq it was given, exactly once; seqs stay dense.
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

constexpr int kRounds = 10;
constexpr int kStores = 4;
constexpr int kThreads = 16;
constexpr int kSessions = 3;

std::string SessionName(int s) { return "shared-" + std::to_string(s); }

// Runs in the child: kThreads threads over kStores Store objects append
// forever, each reporting "session seq text\n" on `ack_fd` once its append
// returned success (one write() under PIPE_BUF, so lines never interleave).
[[noreturn]] void AppendThroughManyStoresUntilKilled(const std::string& dir, int ack_fd,
                                                     int round) {
  std::vector<std::unique_ptr<Store>> stores;
  for (int i = 0; i < kStores; ++i) {
    auto store = Store::Open(dir);
    if (!store) _exit(2);
    stores.push_back(std::move(*store));
  }
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      Store& store = *stores[t % kStores];
      const std::string session = SessionName(t % kSessions);
      for (int i = 0;; ++i) {
        const std::string text =
            "r" + std::to_string(round) + "-t" + std::to_string(t) + "-m" + std::to_string(i);
        Message m;
        m.parts.push_back(Part::Text(text));
        auto r = store.Append(session, m);
        if (!r) _exit(3);
        std::string line = session + " " + std::to_string(r->seq) + " " + text + "\n";
        if (write(ack_fd, line.data(), line.size()) != static_cast<ssize_t>(line.size())) _exit(4);
      }
    });
  }
  for (std::thread& th : threads) th.join();
  _exit(5);
}

TEST(SharedWriterCrash, EveryAcknowledgedAppendOfFourStoresInOneProcessSurvivesSigkill) {
  TempDir dir;
  const std::string store_dir = dir.Sub("store");
  {
    auto store = Store::Open(store_dir);
    ASSERT_TRUE(store);
    for (int s = 0; s < kSessions; ++s) {
      ASSERT_TRUE((*store)->CreateSession({.id = SessionName(s)}));
    }
  }
  std::mt19937 rng(20261128);
  std::uniform_int_distribution<int> delay_ms(30, 200);
  std::map<std::pair<std::string, int64_t>, std::string> acknowledged;  // (session, seq) -> text

  for (int round = 0; round < kRounds; ++round) {
    const KilledChild child = RunChildAndKill(
        [&](int ack_fd) { AppendThroughManyStoresUntilKilled(store_dir, ack_fd, round); },
        std::chrono::milliseconds(delay_ms(rng)), KillClock::kFromFirstAck);
    ASSERT_TRUE(child.killed) << "child exited early with " << child.exit_status;
    std::istringstream lines(child.acks);
    std::string session, text;
    int64_t seq;
    while (lines >> session >> seq >> text) {
      ASSERT_TRUE(acknowledged.emplace(std::make_pair(session, seq), text).second)
          << session << " seq " << seq << " acknowledged twice";
    }

    // After every kill (the writer lock released with the process): the
    // store opens and holds everything acknowledged, once, at its seq.
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
      }
      for (auto it = acknowledged.lower_bound({name, 0});
           it != acknowledged.end() && it->first.first == name; ++it) {
        ASSERT_LE(it->first.second, std::ssize(*messages))
            << "acknowledged " << name << " seq " << it->first.second << " (" << it->second
            << ") lost in round " << round;
        EXPECT_EQ((*messages)[it->first.second - 1].Text(), it->second);
      }
    }
  }
  EXPECT_GT(acknowledged.size(), static_cast<size_t>(kRounds * kStores))
      << "the children barely ran";
  std::cout << "acknowledged appends of " << kThreads << " threads on " << kStores
            << " stores across " << kRounds << " kills: " << acknowledged.size() << "\n";
}

}  // namespace
}  // namespace sessiondb::testing
