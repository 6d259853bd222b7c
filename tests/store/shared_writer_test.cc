// One writer per file in a process: every Store opened on the same embedded
// store shares one group-commit queue (src/store/sqlite/group_commit.h), so
// appends of many Store objects commit together. Nothing acknowledged may be
// lost or written twice, seqs stay dense, and an append that fails in a
// group of other stores' appends fails alone with its own error.
//
// The test that needs a group of known shape holds SQLite's write lock from a
// connection of its own, as a process of an older build would (it takes no
// writer lock): the first leader then waits in BEGIN IMMEDIATE while the
// other stores' appends queue behind it, and the next leader takes them all.
#include <sqlite3.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <map>
#include <mutex>
#include <thread>

#include "sessiondb/store.h"
#include "store/sqlite/sqlite_store.h"
#include "store/store_front.h"
#include "test_support.h"

namespace sessiondb::testing {
namespace {

using sqlite::SqliteStore;

Message TextMessage(const std::string& text, const std::string& id = "") {
  Message m;
  m.id = id;
  m.parts.push_back(Part::Text(text));
  return m;
}

class SharedWriter : public ::testing::Test {
 protected:
  std::string StoreDir() const { return dir_.Sub("store"); }

  std::unique_ptr<Store> OpenStore(const std::string& path, const StoreOptions& options = {}) {
    auto store = Store::Open(path, options);
    EXPECT_TRUE(store) << store.error().ToString();
    return store ? std::move(*store) : nullptr;
  }

  static SqliteStore::GroupCommitStats Stats(Store& store) {
    auto& front = dynamic_cast<store::StoreFront&>(store);
    return dynamic_cast<SqliteStore&>(front.backend()).group_commit_stats();
  }

  template <typename Predicate>
  void WaitFor(Store& store, Predicate done, const std::string& what) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!done(Stats(store))) {
      ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "timed out waiting for " << what;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }

  void BlockWriters() {
    ASSERT_EQ(sqlite3_open((StoreDir() + "/sessiondb.db").c_str(), &blocker_), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(blocker_, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr), SQLITE_OK);
  }
  void UnblockWriters() {
    ASSERT_EQ(sqlite3_exec(blocker_, "COMMIT", nullptr, nullptr, nullptr), SQLITE_OK);
    sqlite3_close(blocker_);
    blocker_ = nullptr;
  }

  void TearDown() override {
    if (blocker_ != nullptr) UnblockWriters();
    for (std::thread& t : threads_) t.join();
  }

  TempDir dir_;
  sqlite3* blocker_ = nullptr;
  std::vector<std::thread> threads_;
};

TEST_F(SharedWriter, StoresOpenedOnOneFileShareOneQueueWhateverPathNamesIt) {
  auto a = OpenStore(StoreDir());
  ASSERT_TRUE(a);
  auto session = a->CreateSession({});
  ASSERT_TRUE(session);
  // The same store through a symbolic link to its folder.
  const std::string link = dir_.Sub("link");
  std::filesystem::create_directory_symlink(StoreDir(), link);
  auto b = OpenStore(link);
  ASSERT_TRUE(b);
  ASSERT_TRUE(b->Append(session->id, TextMessage("through b")));
  ASSERT_TRUE(a->Append(session->id, TextMessage("through a")));
  EXPECT_EQ(Stats(*a).appends, 2);
  EXPECT_EQ(Stats(*b).appends, 2);

  // A store with a clock of its own writes with it, so it shares with nobody.
  StoreOptions own_clock;
  own_clock.clock = [] { return int64_t{1'700'000'000'000}; };
  auto c = OpenStore(StoreDir(), own_clock);
  ASSERT_TRUE(c);
  auto r = c->Append(session->id, TextMessage("through c"));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->ts_ms, 1'700'000'000'000);
  EXPECT_EQ(Stats(*c).appends, 1);
  EXPECT_EQ(Stats(*a).appends, 2);

  // So does a store of the other durability: its leader would commit with
  // the wrong synchronous setting.
  StoreOptions fast;
  fast.durability = Durability::kProcessCrashSafe;
  auto d = OpenStore(StoreDir(), fast);
  ASSERT_TRUE(d);
  ASSERT_TRUE(d->Append(session->id, TextMessage("through d")));
  EXPECT_EQ(Stats(*d).appends, 1);
  EXPECT_EQ(Stats(*a).appends, 2);
}

TEST_F(SharedWriter, AppendsOfFifteenStoresQueuedBehindOneCommitShareTheNextAndFailAlone) {
  constexpr int kStores = 16;
  std::vector<std::unique_ptr<Store>> stores;
  for (int i = 0; i < kStores; ++i) {
    stores.push_back(OpenStore(StoreDir()));
    ASSERT_TRUE(stores.back());
  }
  auto session = stores[0]->CreateSession({});
  ASSERT_TRUE(session);
  ASSERT_TRUE(stores[0]->Append(session->id, TextMessage("first", "taken-id")));
  // A draft opened through store 5, finished through it while another store
  // leads: its removal must run on the leader's connection, in the group.
  auto draft = stores[5]->OpenDraft(session->id, Role::kAssistant, "m");
  ASSERT_TRUE(draft) << draft.error().ToString();
  draft->text = "drafted";
  ASSERT_TRUE(stores[5]->SaveDraft(*draft).ok());

  BlockWriters();
  Result<AppendResult> ahead = Err(Status::Internal("not appended"));
  threads_.emplace_back([&] { ahead = stores[0]->Append(session->id, TextMessage("ahead")); });
  WaitFor(
      *stores[0], [](const auto& s) { return s.appends == 2; }, "the first leader");

  // Stores 1..15 queue one at a time, so the group's order is known.
  enum Kind { kGood, kDuplicateId, kNoSession, kFinishDraft };
  std::vector<Kind> kinds(kStores, kGood);
  kinds[3] = kDuplicateId;
  kinds[5] = kFinishDraft;
  kinds[8] = kNoSession;
  kinds[12] = kDuplicateId;
  std::vector<Result<AppendResult>> results(kStores, Err(Status::Internal("not appended")));
  for (int i = 1; i < kStores; ++i) {
    threads_.emplace_back([&, i] {
      const std::string n = std::to_string(i);
      switch (kinds[i]) {
        case kGood:
          results[i] = stores[i]->Append(session->id, TextMessage("good " + n));
          break;
        case kDuplicateId:
          results[i] = stores[i]->Append(session->id, TextMessage("dup " + n, "taken-id"));
          break;
        case kNoSession:
          results[i] = stores[i]->Append("no-such-session", TextMessage("lost " + n));
          break;
        case kFinishDraft:
          results[i] = stores[i]->FinishDraft(draft->id, Message{});
          break;
      }
    });
    WaitFor(
        *stores[0], [i](const auto& s) { return s.queued == i; },
        "the append of store " + std::to_string(i));
  }
  UnblockWriters();
  for (std::thread& t : threads_) t.join();
  threads_.clear();

  ASSERT_TRUE(ahead) << ahead.error().ToString();
  EXPECT_EQ(ahead->seq, 2);
  std::vector<std::string> expected = {"first", "ahead"};
  int64_t next_seq = 3;
  for (int i = 1; i < kStores; ++i) {
    switch (kinds[i]) {
      case kGood:
      case kFinishDraft:
        ASSERT_TRUE(results[i]) << "store " << i << ": " << results[i].error().ToString();
        EXPECT_EQ(results[i]->seq, next_seq++) << "store " << i;
        expected.push_back(kinds[i] == kGood ? "good " + std::to_string(i) : "drafted");
        break;
      case kDuplicateId:
        ASSERT_FALSE(results[i]) << "store " << i;
        EXPECT_EQ(results[i].error().code(), StatusCode::kAlreadyExists);
        break;
      case kNoSession:
        ASSERT_FALSE(results[i]) << "store " << i;
        EXPECT_EQ(results[i].error().code(), StatusCode::kNotFound);
        break;
    }
  }
  // "first", the blocked leader's commit, and one for all fifteen stores.
  const auto stats = Stats(*stores[7]);
  EXPECT_EQ(stats.commits, 3);
  EXPECT_EQ(stats.appends, kStores + 1);

  auto fresh = OpenStore(StoreDir());
  auto messages = fresh->ReadMessages(session->id);
  ASSERT_TRUE(messages);
  std::vector<std::string> texts;
  for (const Message& m : *messages) texts.push_back(m.Text());
  EXPECT_EQ(texts, expected);
  EXPECT_EQ(fresh->GetSession(session->id)->message_count, std::ssize(expected));
  auto drafts = fresh->ListDrafts(session->id);
  ASSERT_TRUE(drafts);
  EXPECT_TRUE(drafts->empty()) << "the finished draft was not removed in the group";
}

TEST_F(SharedWriter, SixtyFourWritersOnSixteenStoresLoseNothingAndKeepSeqsDense) {
  constexpr int kStores = 16;
  constexpr int kThreads = 64;
  constexpr int kAppendsPerThread = 15;
  constexpr int kSessions = 4;
  std::vector<std::unique_ptr<Store>> stores;
  for (int i = 0; i < kStores; ++i) {
    stores.push_back(OpenStore(StoreDir()));
    ASSERT_TRUE(stores.back());
  }
  std::vector<std::string> sessions;
  for (int s = 0; s < kSessions; ++s) sessions.push_back(stores[0]->CreateSession({})->id);

  std::mutex mu;
  std::map<std::pair<std::string, int64_t>, std::string> acknowledged;  // (session, seq) -> text
  std::atomic<int> failures{0};
  for (int t = 0; t < kThreads; ++t) {
    threads_.emplace_back([&, t] {
      Store& store = *stores[t % kStores];
      const std::string& session = sessions[t % kSessions];
      for (int i = 0; i < kAppendsPerThread; ++i) {
        const std::string text = "t" + std::to_string(t) + "-m" + std::to_string(i);
        auto r = store.Append(session, TextMessage(text));
        if (!r) {
          ++failures;
          continue;
        }
        std::lock_guard lock(mu);
        if (!acknowledged.emplace(std::make_pair(session, r->seq), text).second) ++failures;
      }
    });
  }
  for (std::thread& t : threads_) t.join();
  threads_.clear();
  EXPECT_EQ(failures.load(), 0) << "an append failed or two got the same seq";
  EXPECT_EQ(acknowledged.size(), size_t{kThreads * kAppendsPerThread});

  auto fresh = OpenStore(StoreDir());
  for (const std::string& session : sessions) {
    auto messages = fresh->ReadMessages(session);
    ASSERT_TRUE(messages);
    EXPECT_EQ(std::ssize(*messages), kThreads / kSessions * kAppendsPerThread);
    for (size_t i = 0; i < messages->size(); ++i) {
      const Message& m = (*messages)[i];
      ASSERT_EQ(m.seq, static_cast<int64_t>(i + 1)) << "seqs of " << session << " are not dense";
      auto it = acknowledged.find({session, m.seq});
      ASSERT_NE(it, acknowledged.end()) << "unacknowledged message at seq " << m.seq;
      EXPECT_EQ(m.Text(), it->second);
    }
  }
  const auto stats = Stats(*stores[0]);
  EXPECT_EQ(stats.appends, kThreads * kAppendsPerThread);
  EXPECT_LE(stats.commits, stats.appends);
}

}  // namespace
}  // namespace sessiondb::testing
