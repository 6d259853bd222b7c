// Many writers on many connections of one PostgreSQL store, and the failures
// a shared database brings: connections killed mid-transaction
// (pg_terminate_backend) and the server restarted during a run of appends.
// Afterwards every acknowledged append is there exactly once and every
// session's seqs are dense.
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "pg_test_database.h"
#include "sessiondb/store.h"
#include "test_support.h"

namespace sessiondb::testing {
namespace {

Message TextMessage(const std::string& text) {
  Message m;
  m.parts = {Part::Text(text)};
  return m;
}

std::unique_ptr<Store> OpenStore(const std::string& uri, int max_connections = 2) {
  StoreOptions options;
  options.max_connections = max_connections;
  auto store = Store::Open(uri, options);
  EXPECT_TRUE(store) << store.error().ToString();
  return store ? std::move(*store) : nullptr;
}

// Checks that `session` holds seqs 1..N, no text twice, and every text of
// `acknowledged`; returns the texts found.
std::set<std::string> ExpectDenseWithoutDuplicates(Store& store, const std::string& session,
                                                   const std::set<std::string>& acknowledged) {
  auto messages = store.ReadMessages(session);
  EXPECT_TRUE(messages) << messages.error().ToString();
  std::set<std::string> texts;
  if (!messages) return texts;
  for (size_t i = 0; i < messages->size(); ++i) {
    EXPECT_EQ((*messages)[i].seq, static_cast<int64_t>(i + 1)) << "a gap in " << session;
    EXPECT_TRUE(texts.insert((*messages)[i].Text()).second)
        << "appended twice: " << (*messages)[i].Text();
  }
  for (const std::string& text : acknowledged) {
    EXPECT_TRUE(texts.contains(text)) << "acknowledged but lost: " << text;
  }
  EXPECT_EQ(store.GetSession(session)->message_count, static_cast<int64_t>(messages->size()));
  return texts;
}

// Kills every sessiondb connection to the database, forty times over about
// 1.4 s, at moments that fall inside transactions, between them and during
// COMMIT, and then on until more than kMinKilled were killed and `progressed`
// says the writers got far enough (a loaded machine starts them late), for at
// most kMaxKillRounds; how many connections it killed.
constexpr int kMinKilled = 20;
constexpr int kMaxKillRounds = 800;
int KillConnectionsRepeatedly(
    PgTestDatabase& db, const std::function<bool()>& progressed = [] { return true; }) {
  int killed = 0;
  for (int round = 0; round < kMaxKillRounds; ++round) {
    if (round >= 40 && killed > kMinKilled && progressed()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(15 + (round * 7) % 40));
    killed +=
        std::stoi(db.Query("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE "
                           "datname = current_database() AND application_name = 'sessiondb'"));
  }
  return killed;
}

TEST(PostgresConcurrency, EightProcessesAppendingToTheSameAndToTheirOwnSessions) {
  constexpr int kProcesses = 8;
  constexpr int kAppends = 150;
  PgTestDatabase db;
  ASSERT_TRUE(db.ok());
  {
    auto store = OpenStore(db.uri());
    ASSERT_TRUE(store);
    ASSERT_TRUE(store->CreateSession({.id = "shared"}));
    for (int p = 0; p < kProcesses; ++p) {
      ASSERT_TRUE(store->CreateSession({.id = "own-" + std::to_string(p)}));
    }
  }
  std::vector<pid_t> children;
  for (int p = 0; p < kProcesses; ++p) {
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      // The child opens its own store, as another machine would.
      StoreOptions options;
      options.max_connections = 1;
      auto store = Store::Open(db.uri(), options);
      if (!store) _exit(10);
      for (int i = 0; i < kAppends; ++i) {
        const std::string text = "p" + std::to_string(p) + "-" + std::to_string(i);
        if (!(*store)->Append("shared", TextMessage(text))) _exit(11);
        if (!(*store)->Append("own-" + std::to_string(p), TextMessage(text))) _exit(12);
      }
      _exit(0);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "child status " << status;
  }
  auto store = OpenStore(db.uri());
  ASSERT_TRUE(store);
  std::set<std::string> all;
  for (int p = 0; p < kProcesses; ++p) {
    std::set<std::string> own;
    for (int i = 0; i < kAppends; ++i) {
      own.insert("p" + std::to_string(p) + "-" + std::to_string(i));
    }
    all.insert(own.begin(), own.end());
    EXPECT_EQ(ExpectDenseWithoutDuplicates(*store, "own-" + std::to_string(p), own).size(),
              own.size());
  }
  EXPECT_EQ(ExpectDenseWithoutDuplicates(*store, "shared", all).size(), all.size());
}

// Appends in a loop from `writers` threads (each with its own Store) until
// `stop`, recording what was acknowledged. Failures are counted, not fatal:
// after a failure the writer goes on.
struct WriterRun {
  std::mutex mu;
  std::set<std::string> acknowledged;
  std::atomic<int> failures{0};
  std::atomic<bool> stop{false};
  std::vector<std::thread> threads;
  std::vector<std::string> errors;

  void Start(const std::string& uri, int writers, const std::vector<std::string>& sessions) {
    for (int w = 0; w < writers; ++w) {
      threads.emplace_back([this, uri, w, sessions] {
        auto store = OpenStore(uri, 1);
        if (!store) return;
        for (int i = 0; !stop; ++i) {
          const std::string text = "w" + std::to_string(w) + "-" + std::to_string(i);
          const std::string& session = sessions[static_cast<size_t>(i) % sessions.size()];
          auto r = store->Append(session, TextMessage(text));
          std::lock_guard lock(mu);
          if (r) {
            acknowledged.insert(session + "/" + text);
          } else {
            ++failures;
            errors.push_back(r.error().ToString());
          }
        }
      });
    }
  }
  void Stop() {
    stop = true;
    for (auto& t : threads) t.join();
  }
  std::set<std::string> AcknowledgedIn(const std::string& session) {
    std::set<std::string> out;
    for (const std::string& key : acknowledged) {
      if (key.rfind(session + "/", 0) == 0) out.insert(key.substr(session.size() + 1));
    }
    return out;
  }
};

TEST(PostgresFailures, ConnectionsKilledMidTransactionLoseNothingAndDuplicateNothing) {
  PgTestDatabase db;
  ASSERT_TRUE(db.ok());
  const std::vector<std::string> sessions = {"a", "b"};
  {
    auto store = OpenStore(db.uri());
    ASSERT_TRUE(store);
    for (const auto& s : sessions) ASSERT_TRUE(store->CreateSession({.id = s}));
  }
  WriterRun run;
  run.Start(db.uri(), 3, sessions);
  const int killed = KillConnectionsRepeatedly(db);
  run.Stop();
  EXPECT_GT(killed, kMinKilled) << "the test did not kill enough connections to mean anything";
  EXPECT_EQ(run.failures, 0) << (run.errors.empty() ? "" : run.errors.front());
  auto store = OpenStore(db.uri());
  ASSERT_TRUE(store);
  size_t found = 0;
  for (const auto& s : sessions) {
    found += ExpectDenseWithoutDuplicates(*store, s, run.AcknowledgedIn(s)).size();
  }
  EXPECT_GT(run.acknowledged.size(), 50u);
  // Nothing committed that was not acknowledged, except at most one append per
  // writer whose retries were still under way when it was told to stop.
  EXPECT_EQ(found, run.acknowledged.size());
}

// Forks and removals run as one transaction of the front's rules over the
// backend's primitives (store/log_rules.h), which PostgreSQL runs again after
// a lost connection. A retry after a COMMIT whose answer was lost must find
// its own fork (not "id taken") and its own removal (not "not found").
TEST(PostgresFailures, ForksAndRemovalsUnderKilledConnectionsAreAcknowledgedOnce) {
  PgTestDatabase db;
  ASSERT_TRUE(db.ok());
  constexpr int kParentMessages = 5;
  {
    auto store = OpenStore(db.uri());
    ASSERT_TRUE(store);
    ASSERT_TRUE(store->CreateSession({.id = "p"}));
    for (int i = 0; i < kParentMessages; ++i) {
      ASSERT_TRUE(store->Append("p", TextMessage("m" + std::to_string(i))));
    }
  }
  std::atomic<bool> stop = false;
  std::mutex mu;
  std::map<std::string, int64_t> forks;  // acknowledged and kept: id -> fork point
  std::set<std::string> removed;         // acknowledged removals
  std::vector<std::string> errors;
  std::thread worker([&] {
    auto store = OpenStore(db.uri());
    if (!store) return;
    for (int i = 0; !stop; ++i) {
      const std::string id = "f" + std::to_string(i);
      const int64_t at = 1 + i % kParentMessages;
      auto fork = store->ForkSession("p", at, {.id = id});
      std::lock_guard lock(mu);
      if (!fork) {
        errors.push_back("fork " + id + ": " + fork.error().ToString());
        continue;
      }
      forks[id] = at;
      if (i % 2 == 1) {
        Status gone = store->DeleteSession(id);
        if (!gone.ok()) {
          errors.push_back("delete " + id + ": " + gone.ToString());
          continue;
        }
        forks.erase(id);
        removed.insert(id);
      }
    }
  });
  const int killed = KillConnectionsRepeatedly(db, [&] {
    std::lock_guard lock(mu);
    return forks.size() + removed.size() > 20;
  });
  stop = true;
  worker.join();
  EXPECT_GT(killed, kMinKilled) << "the test did not kill enough connections to mean anything";
  EXPECT_TRUE(errors.empty()) << errors.size() << " calls failed; the first: "
                              << (errors.empty() ? "" : errors.front());
  EXPECT_GT(forks.size() + removed.size(), 20u);
  auto store = OpenStore(db.uri());
  ASSERT_TRUE(store);
  for (const auto& [id, at] : forks) {
    auto session = store->GetSession(id);
    ASSERT_TRUE(session) << "acknowledged fork " << id
                         << " is gone: " << session.error().ToString();
    EXPECT_EQ(session->parent_id, "p");
    EXPECT_EQ(session->fork_seq, at);
    EXPECT_EQ(session->message_count, at);
    auto messages = store->ReadMessages(id);
    ASSERT_TRUE(messages);
    EXPECT_EQ(static_cast<int64_t>(messages->size()), at);
  }
  for (const std::string& id : removed) {
    auto session = store->GetSession(id);
    ASSERT_FALSE(session) << "acknowledged removal of " << id << " did not stand";
    EXPECT_EQ(session.error().code(), StatusCode::kNotFound);
  }
  // The parent lost nothing to its forks' removals.
  auto parent = store->ReadMessages("p");
  ASSERT_TRUE(parent);
  EXPECT_EQ(parent->size(), static_cast<size_t>(kParentMessages));
}

TEST(PostgresFailures, AServerRestartedDuringAppendsLosesNothingAndDuplicatesNothing) {
  // A cluster of its own: restarting the shared one would disturb other tests.
  const std::string dir = "/tmp/sdb-pg-restart-" + std::to_string(::getpid());
  const std::string script = std::string("bash ") + SESSIONDB_PG_CLUSTER_SCRIPT;
  ASSERT_EQ(std::system((script + " start " + dir + " > /dev/null").c_str()), 0);
  const std::string uri = "postgresql://sessiondb@/postgres?host=" + dir;
  {
    auto store = OpenStore(uri);
    ASSERT_TRUE(store);
    ASSERT_TRUE(store->CreateSession({.id = "r"}));
  }
  WriterRun run;
  run.Start(uri, 2, {"r"});
  for (int restart = 0; restart < 3; ++restart) {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    EXPECT_EQ(std::system((script + " restart " + dir).c_str()), 0);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  run.Stop();
  {
    EXPECT_EQ(run.failures, 0) << (run.errors.empty() ? "" : run.errors.front());
    auto store = OpenStore(uri);
    ASSERT_TRUE(store);
    auto found = ExpectDenseWithoutDuplicates(*store, "r", run.AcknowledgedIn("r"));
    EXPECT_EQ(found.size(), run.acknowledged.size());
    EXPECT_GT(run.acknowledged.size(), 20u);
  }
  EXPECT_EQ(std::system((script + " stop " + dir).c_str()), 0);
}

}  // namespace
}  // namespace sessiondb::testing
