// Group commit in the embedded store: appends from many threads share one
// transaction (one fsync) per group. Nothing may be lost or duplicated, seqs
// stay dense per session, an append that fails in a group is undone alone
// and keeps its own error, and a group never grows past its caps.
//
// The tests that need a group of known shape hold SQLite's write lock from a
// second connection: the first leader then waits in BEGIN IMMEDIATE while
// the other appends queue behind it, and the next leader takes them all.
#include <sqlite3.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <map>
#include <set>
#include <thread>

#include "blob/data_uri.h"
#include "blob/sha256.h"
#include "store/sqlite/sqlite_store.h"
#include "store/store_fixture.h"
#include "store/store_front.h"

namespace sessiondb::testing {
namespace {

using sqlite::SqliteStore;

Message TextMessage(const std::string& text, const std::string& id = "") {
  Message m;
  m.id = id;
  m.parts.push_back(Part::Text(text));
  return m;
}

class GroupCommit : public EmbeddedStoreTest {
 protected:
  SqliteStore::GroupCommitStats Stats() {
    auto& front = dynamic_cast<store::StoreFront&>(*store_);
    return dynamic_cast<SqliteStore&>(front.backend()).group_commit_stats();
  }

  // Waits until `done(stats)` holds; fails the test after 10 s.
  template <typename Predicate>
  void WaitFor(Predicate done, const std::string& what) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!done(Stats())) {
      ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "timed out waiting for " << what;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }

  // Takes SQLite's write lock from a connection of our own, so the store's
  // next leader waits for it in its busy handler.
  void BlockWriters() {
    ASSERT_EQ(sqlite3_open((StoreDir() + "/sessiondb.db").c_str(), &blocker_), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(blocker_, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr), SQLITE_OK);
  }
  void UnblockWriters() {
    ASSERT_EQ(sqlite3_exec(blocker_, "COMMIT", nullptr, nullptr, nullptr), SQLITE_OK);
    sqlite3_close(blocker_);
    blocker_ = nullptr;
  }

  // Appends "ahead" from a thread of its own and waits until its leader has
  // taken it, so everything appended next queues behind a blocked commit.
  void StartBlockedLeader(const std::string& session) {
    BlockWriters();
    const int64_t taken = Stats().appends + 1;
    threads_.emplace_back(
        [this, session] { ahead_ = store_->Append(session, TextMessage("ahead")); });
    WaitFor([taken](const auto& s) { return s.appends == taken; }, "the first leader");
  }

  void JoinAll() {
    for (std::thread& t : threads_) t.join();
    threads_.clear();
  }

  void TearDown() override {
    if (blocker_ != nullptr) UnblockWriters();
    JoinAll();
  }

  sqlite3* blocker_ = nullptr;
  std::vector<std::thread> threads_;
  Result<AppendResult> ahead_ = Err(Status::Internal("not appended"));
};

TEST_F(GroupCommit, ThirtyTwoDurableWritersLoseNothingAndKeepEverySessionsSeqsDense) {
  constexpr int kThreads = 32;
  constexpr int kAppendsPerThread = 50;
  constexpr int kSessions = 4;
  constexpr int kPerSession = kThreads / kSessions * kAppendsPerThread;
  std::vector<std::string> sessions;
  for (int s = 0; s < kSessions; ++s) sessions.push_back(NewSessionId());
  auto text_of = [](int t, int i) {
    return "thread " + std::to_string(t) + " append " + std::to_string(i);
  };

  std::vector<std::vector<AppendResult>> acknowledged(kThreads);
  std::atomic<int> failures{0};
  for (int t = 0; t < kThreads; ++t) {
    threads_.emplace_back([&, t] {
      for (int i = 0; i < kAppendsPerThread; ++i) {
        auto r = store_->Append(sessions[t % kSessions], TextMessage(text_of(t, i)));
        if (!r) {
          ++failures;
          continue;
        }
        acknowledged[t].push_back(*r);
      }
    });
  }
  JoinAll();
  ASSERT_EQ(failures.load(), 0);

  std::vector<std::map<int64_t, Message>> by_seq(kSessions);
  for (int s = 0; s < kSessions; ++s) {
    auto messages = store_->ReadMessages(sessions[s]);
    ASSERT_TRUE(messages) << messages.error().ToString();
    ASSERT_EQ(messages->size(), static_cast<size_t>(kPerSession));
    std::set<std::string> texts;
    for (size_t i = 0; i < messages->size(); ++i) {
      const Message& m = (*messages)[i];
      ASSERT_EQ(m.seq, static_cast<int64_t>(i + 1)) << "seqs of session " << s << " are not dense";
      texts.insert(m.Text());
      by_seq[s][m.seq] = m;
    }
    EXPECT_EQ(texts.size(), static_cast<size_t>(kPerSession)) << "a text is there twice";
    EXPECT_EQ(store_->GetSession(sessions[s])->message_count, kPerSession);
  }
  // Each acknowledgement names the seq its text is stored at, and one
  // thread's appends are stored in the order it made them.
  for (int t = 0; t < kThreads; ++t) {
    ASSERT_EQ(acknowledged[t].size(), static_cast<size_t>(kAppendsPerThread));
    for (int i = 0; i < kAppendsPerThread; ++i) {
      const AppendResult& ack = acknowledged[t][i];
      const Message& stored = by_seq[t % kSessions].at(ack.seq);
      EXPECT_EQ(stored.Text(), text_of(t, i));
      EXPECT_EQ(stored.id, ack.message_id);
      if (i > 0) {
        EXPECT_GT(ack.seq, acknowledged[t][i - 1].seq);
      }
    }
  }
  const auto stats = Stats();
  EXPECT_EQ(stats.appends, kThreads * kAppendsPerThread);
  EXPECT_EQ(stats.queued, 0);
  EXPECT_LT(stats.commits * 4, stats.appends)
      << "32 durable writers should share fsyncs; mean group size "
      << static_cast<double>(stats.appends) / static_cast<double>(stats.commits);
}

TEST_F(GroupCommit, FailedAppendsAreUndoneAloneWithTheirOwnErrorWhileTheRestOfTheGroupCommits) {
  const std::string session = NewSessionId();
  ASSERT_TRUE(store_->Append(session, TextMessage("first", "taken-id")));
  StartBlockedLeader(session);

  // Queued one at a time, so the queue's order is known: a good append, one
  // to a session that does not exist, a good one, one reusing a message id,
  // a good one, a batch whose second message reuses a message id (its first
  // is written, then undone), and again.
  enum Kind { kGood, kNoSession, kDuplicateId, kBatchWithDuplicateId };
  constexpr Kind kPattern[] = {kGood,        kNoSession, kGood,
                               kDuplicateId, kGood,      kBatchWithDuplicateId};
  constexpr int kRequests = 18;
  std::vector<Kind> kinds;
  // The seq each append got, or its error.
  std::vector<Result<int64_t>> results(kRequests, Err(Status::Internal("not appended")));
  for (int i = 0; i < kRequests; ++i) {
    const Kind kind = kPattern[i % std::size(kPattern)];
    kinds.push_back(kind);
    threads_.emplace_back([&, i, kind] {
      const std::string n = std::to_string(i);
      std::string target = session;
      std::vector<Message> batch;
      switch (kind) {
        case kGood:
          batch = {TextMessage("good " + n)};
          break;
        case kNoSession:
          target = "no-such-session";
          batch = {TextMessage("lost " + n)};
          break;
        case kDuplicateId:
          batch = {TextMessage("dup " + n, "taken-id")};
          break;
        case kBatchWithDuplicateId:
          batch = {TextMessage("half " + n), TextMessage("dup " + n, "taken-id")};
          break;
      }
      auto r = store_->AppendBatch(target, batch);
      results[i] = r ? Result<int64_t>(r->front().seq) : Err(r.error());
    });
    WaitFor([i](const auto& s) { return s.queued == i + 1; }, "append " + std::to_string(i));
  }
  UnblockWriters();
  JoinAll();

  ASSERT_TRUE(ahead_) << ahead_.error().ToString();
  EXPECT_EQ(ahead_->seq, 2);
  // Good appends get consecutive seqs in queue order; the failed ones
  // between them leave no gap.
  int64_t next_seq = 3;
  for (int i = 0; i < kRequests; ++i) {
    if (kinds[i] == kGood) {
      ASSERT_TRUE(results[i]) << i << ": " << results[i].error().ToString();
      EXPECT_EQ(*results[i], next_seq++) << "append " << i;
      continue;
    }
    ASSERT_FALSE(results[i]) << "append " << i;
    EXPECT_EQ(results[i].error().code(),
              kinds[i] == kNoSession ? StatusCode::kNotFound : StatusCode::kAlreadyExists)
        << results[i].error().ToString();
  }
  // All of them were one group: after "first" and the blocked leader's
  // commit, one more.
  const auto stats = Stats();
  EXPECT_EQ(stats.commits, 3);
  EXPECT_EQ(stats.appends, kRequests + 2);

  auto messages = store_->ReadMessages(session);
  ASSERT_TRUE(messages);
  std::vector<std::string> texts;
  for (const Message& m : *messages) texts.push_back(m.Text());
  std::vector<std::string> expected = {"first", "ahead"};
  for (int i = 0; i < kRequests; ++i) {
    if (kinds[i] == kGood) expected.push_back("good " + std::to_string(i));
  }
  EXPECT_EQ(texts, expected);
  EXPECT_EQ(store_->GetSession(session)->message_count, std::ssize(expected));
  EXPECT_EQ(store_->GetSession("no-such-session").error().code(), StatusCode::kNotFound);
  auto storage = store_->Stats();
  ASSERT_TRUE(storage);
  EXPECT_EQ(storage->messages, std::ssize(expected)) << "a failed append left a message behind";
}

// Appends of one large image each, from threads of their own, queued
// behind one commit: each image is staged, synced and named by its own
// append before it queues, and the group commits them all at once.
TEST_F(GroupCommit, AGroupOfImageAppendsCommitsOnceEveryImageIsStored) {
  const std::string session = NewSessionId();
  StartBlockedLeader(session);
  constexpr int kImages = 4;
  std::vector<std::string> digests;
  std::vector<Result<AppendResult>> results(kImages, Err(Status::Internal("not appended")));
  for (int i = 0; i < kImages; ++i) {
    // Large enough to be staged (written while it is decoded).
    const std::string png = MakePng(8, 8, "group " + std::to_string(i), 300 * 1024);
    digests.push_back(blob::Sha256Hex(png));
    threads_.emplace_back([this, &results, session, i, png] {
      Message m = TextMessage("image " + std::to_string(i));
      m.parts.push_back(Part::ImageFromDataUri(blob::MakeDataUri("image/png", png)));
      results[i] = store_->Append(session, m);
    });
    WaitFor([i](const auto& s) { return s.queued == i + 1; }, "append " + std::to_string(i));
    // Queued behind the blocked commit, its image is stored already.
    auto queued_bytes = store_->ReadBlob(digests[i], /*verify=*/true);
    EXPECT_TRUE(queued_bytes) << i << ": " << queued_bytes.error().ToString();
  }
  UnblockWriters();
  JoinAll();
  ASSERT_TRUE(ahead_) << ahead_.error().ToString();
  for (int i = 0; i < kImages; ++i) {
    ASSERT_TRUE(results[i]) << i << ": " << results[i].error().ToString();
    ASSERT_EQ(results[i]->resources.size(), 1u);
    EXPECT_EQ(results[i]->resources[0].content_sha256, digests[i]);
    auto bytes = store_->ReadBlob(digests[i], /*verify=*/true);
    EXPECT_TRUE(bytes) << i << ": " << bytes.error().ToString();
  }
  // The blocked leader's commit, then one for the four.
  EXPECT_EQ(Stats().commits, 2);
  auto messages = store_->ReadMessages(session);
  ASSERT_TRUE(messages);
  EXPECT_EQ(messages->size(), static_cast<size_t>(kImages + 1));
  EXPECT_TRUE(std::filesystem::is_empty(std::filesystem::path(StoreDir()) / "blobs" / "tmp"));
}

TEST_F(GroupCommit, AGroupCarriesAtMost256Appends) {
  const std::string session = NewSessionId();
  StartBlockedLeader(session);
  constexpr int kQueued = static_cast<int>(SqliteStore::kMaxGroupAppends) + 10;
  std::atomic<int> failures{0};
  for (int i = 0; i < kQueued; ++i) {
    threads_.emplace_back([&, i] {
      if (!store_->Append(session, TextMessage("queued " + std::to_string(i)))) ++failures;
    });
  }
  WaitFor([](const auto& s) { return s.queued == kQueued; }, "the queue to fill");
  UnblockWriters();
  JoinAll();
  EXPECT_EQ(failures.load(), 0);
  ASSERT_TRUE(ahead_);
  // The blocked leader's group, then 256, then the last 10.
  EXPECT_EQ(Stats().commits, 3);
  EXPECT_EQ(store_->GetSession(session)->message_count, kQueued + 1);
}

TEST_F(GroupCommit, AGroupCarriesAtMostFourMebibytesOfText) {
  const std::string session = NewSessionId();
  StartBlockedLeader(session);
  // Two of these fit in a group, a third does not.
  const size_t big = SqliteStore::kMaxGroupTextBytes / 3 + 1;
  constexpr int kQueued = 6;
  std::atomic<int> failures{0};
  for (int i = 0; i < kQueued; ++i) {
    threads_.emplace_back([&, i] {
      std::string text = "big " + std::to_string(i) + " ";
      while (text.size() < big) text += "lorem ipsum ";
      if (!store_->Append(session, TextMessage(text))) ++failures;
    });
  }
  WaitFor([](const auto& s) { return s.queued == kQueued; }, "the queue to fill");
  UnblockWriters();
  JoinAll();
  EXPECT_EQ(failures.load(), 0);
  ASSERT_TRUE(ahead_);
  EXPECT_EQ(Stats().commits, 1 + kQueued / 2);
  EXPECT_EQ(store_->GetSession(session)->message_count, kQueued + 1);
}

TEST_F(GroupCommit, ALoneWriterCommitsEveryAppendAtOnce) {
  const std::string session = NewSessionId();
  for (int i = 0; i < 5; ++i) AppendText(session, "alone " + std::to_string(i));
  const auto stats = Stats();
  EXPECT_EQ(stats.commits, 5);
  EXPECT_EQ(stats.appends, 5);
}

}  // namespace
}  // namespace sessiondb::testing
