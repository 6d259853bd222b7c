// Many writers on one store: threads sharing a Store, threads with a Store
// each, and separate processes. Nothing may be lost, no "database is locked"
// may escape, and every session's seqs must stay dense.
#include <pthread.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <set>
#include <thread>

#include "sessiondb/store.h"
#include "test_support.h"

namespace sessiondb::testing {
namespace {

constexpr int kAppendsPerWriter = 500;

Message TextMessage(const std::string& text) {
  Message m;
  m.parts = {Part::Text(text)};
  return m;
}

StoreOptions FastOptions() {
  StoreOptions o;
  // Concurrency is what is tested here, not fsync latency.
  o.durability = Durability::kProcessCrashSafe;
  return o;
}

// Checks that `session` holds exactly `expected` messages with seqs 1..N and
// that every (writer, index) text appears once.
void ExpectDenseAndComplete(Store& store, const std::string& session, int writers) {
  auto messages = store.ReadMessages(session);
  ASSERT_TRUE(messages) << messages.error().ToString();
  const size_t expected = static_cast<size_t>(writers) * kAppendsPerWriter;
  ASSERT_EQ(messages->size(), expected);
  std::set<std::string> texts;
  for (size_t i = 0; i < messages->size(); ++i) {
    EXPECT_EQ((*messages)[i].seq, static_cast<int64_t>(i + 1));
    texts.insert((*messages)[i].Text());
  }
  EXPECT_EQ(texts.size(), expected);
  EXPECT_EQ(store.GetSession(session)->message_count, static_cast<int64_t>(expected));
}

TEST(ConcurrentAppend, FourThreadsSharingOneStoreLoseNothing) {
  TempDir dir;
  auto store = Store::Open(dir.Sub("s"), FastOptions());
  ASSERT_TRUE(store);
  ASSERT_TRUE((*store)->CreateSession({.id = "shared"}));
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kAppendsPerWriter; ++i) {
        auto r = (*store)->Append("shared",
                                  TextMessage("t" + std::to_string(t) + "-" + std::to_string(i)));
        if (!r) ++failures;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  ExpectDenseAndComplete(**store, "shared", 4);
}

TEST(ConcurrentAppend, FourThreadsEachWithTheirOwnStoreWaitInsteadOfFailing) {
  TempDir dir;
  {
    auto store = Store::Open(dir.Sub("s"), FastOptions());
    ASSERT_TRUE(store);
    ASSERT_TRUE((*store)->CreateSession({.id = "shared"}));
  }
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  std::mutex error_mu;
  std::string first_error;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      auto store = Store::Open(dir.Sub("s"), FastOptions());
      if (!store) {
        ++failures;
        return;
      }
      for (int i = 0; i < kAppendsPerWriter; ++i) {
        auto r = (*store)->Append("shared",
                                  TextMessage("t" + std::to_string(t) + "-" + std::to_string(i)));
        if (!r) {
          ++failures;
          std::lock_guard lock(error_mu);
          if (first_error.empty()) first_error = r.error().ToString();
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0) << first_error;
  auto store = Store::Open(dir.Sub("s"), FastOptions());
  ASSERT_TRUE(store);
  ExpectDenseAndComplete(**store, "shared", 4);
}

TEST(ConcurrentAppend, TwoProcessesAppendingToTheSameAndToTheirOwnSessions) {
  TempDir dir;
  {
    auto store = Store::Open(dir.Sub("s"), FastOptions());
    ASSERT_TRUE(store);
    for (const char* id : {"shared", "own-0", "own-1"})
      ASSERT_TRUE((*store)->CreateSession({.id = id}));
  }
  std::vector<pid_t> children;
  for (int p = 0; p < 2; ++p) {
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      int failures = 0;
      auto store = Store::Open(dir.Sub("s"), FastOptions());
      if (!store) _exit(2);
      for (int i = 0; i < kAppendsPerWriter; ++i) {
        std::string text = "p" + std::to_string(p) + "-" + std::to_string(i);
        failures += !(*store)->Append("shared", TextMessage(text));
        failures += !(*store)->Append("own-" + std::to_string(p), TextMessage(text));
      }
      _exit(failures == 0 ? 0 : 1);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0) << "a child process saw an append fail";
  }
  auto store = Store::Open(dir.Sub("s"), FastOptions());
  ASSERT_TRUE(store);
  ExpectDenseAndComplete(**store, "shared", 2);
  ExpectDenseAndComplete(**store, "own-0", 1);
  ExpectDenseAndComplete(**store, "own-1", 1);
}

TEST(ConcurrentOpen, FourThreadsCreatingTheSameNewStoreAllSucceedOnOneSchema) {
  TempDir dir;
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  std::mutex error_mu;
  std::string first_error;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      auto store = Store::Open(dir.Sub("fresh"), FastOptions());
      Status s = store
                     ? internal::ToStatus((*store)->CreateSession({.id = "t" + std::to_string(t)}))
                     : store.error();
      if (!s.ok()) {
        ++failures;
        std::lock_guard lock(error_mu);
        first_error = s.ToString();
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0) << first_error;
  auto store = Store::Open(dir.Sub("fresh"), FastOptions());
  ASSERT_TRUE(store);
  EXPECT_EQ((*store)->Stats()->sessions, 4);
}

// Several processes creating the same new store at the same instant: the
// first open switches the database to WAL and migrates it, which takes locks
// that SQLite's busy handler does not always wait for ("PRAGMA journal_mode
// = WAL: database is locked"). Eight processes meet at a barrier before each
// of 30 rounds, then all open a store no one has created yet, add a session
// and append to it. Every open and write must succeed, every round.
TEST(ConcurrentOpen, EightProcessesCreatingTheSameNewStoreThirtyTimesNeverSeeLocked) {
  constexpr int kProcesses = 8;
  constexpr int kRounds = 30;
  TempDir dir;
  auto* barrier = static_cast<pthread_barrier_t*>(mmap(nullptr, sizeof(pthread_barrier_t),
                                                       PROT_READ | PROT_WRITE,
                                                       MAP_SHARED | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(barrier, MAP_FAILED);
  pthread_barrierattr_t attr;
  pthread_barrierattr_init(&attr);
  pthread_barrierattr_setpshared(&attr, PTHREAD_PROCESS_SHARED);
  ASSERT_EQ(pthread_barrier_init(barrier, &attr, kProcesses), 0);

  std::vector<pid_t> children;
  for (int p = 0; p < kProcesses; ++p) {
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      alarm(120);  // a deadlock fails the test instead of hanging it
      int failures = 0;
      for (int round = 0; round < kRounds; ++round) {
        pthread_barrier_wait(barrier);
        const std::string where = dir.Sub("fresh-" + std::to_string(round));
        auto store = Store::Open(where, FastOptions());
        Status s =
            store ? internal::ToStatus((*store)->CreateSession({.id = "p" + std::to_string(p)}))
                  : store.error();
        if (s.ok()) {
          s = internal::ToStatus((*store)->Append("p" + std::to_string(p), TextMessage("hi")));
        }
        if (!s.ok()) {
          ++failures;
          std::fprintf(stderr, "process %d round %d: %s\n", p, round, s.ToString().c_str());
        }
      }
      _exit(failures == 0 ? 0 : 1);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0) << "a process failed to open or write a new store";
  }
  pthread_barrier_destroy(barrier);
  munmap(barrier, sizeof(pthread_barrier_t));
  for (int round = 0; round < kRounds; ++round) {
    auto store = Store::Open(dir.Sub("fresh-" + std::to_string(round)), FastOptions());
    ASSERT_TRUE(store) << store.error().ToString();
    EXPECT_EQ((*store)->Stats()->sessions, kProcesses) << "round " << round;
    EXPECT_EQ((*store)->Stats()->messages, kProcesses) << "round " << round;
  }
}

}  // namespace
}  // namespace sessiondb::testing
